package middleware_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/scorehub/scorehub/middleware"
	"github.com/scorehub/scorehub/tokens"
)

func TestRequire(t *testing.T) {
	bearer, err := middleware.Bearer(middleware.BearerConfig{Verifier: &fakeVerifier{}, Realm: testRealm})
	if err != nil {
		t.Fatal(err)
	}
	const (
		adminRefused = `Bearer realm="scorehub-test", error="insufficient_scope", error_description="this request needs an administrator's token"`
		groupRefused = `Bearer realm="scorehub-test", error="insufficient_scope", error_description="the token's holder is not in a user group allowed here"`
	)
	tests := []struct {
		name          string
		handler       http.Handler
		token         string         // through Bearer when set
		claims        *tokens.Claims // through WithClaims when set
		wantStatus    int
		wantType      string
		wantChallenge string
	}{
		{"admin passes RequireAdmin", bearer(middleware.RequireAdmin(okHandler)), "root-token", nil, http.StatusOK, "", ""},
		{"non-admin is forbidden", bearer(middleware.RequireAdmin(okHandler)), "ann-token", nil, http.StatusForbidden, "forbidden", adminRefused},
		{"RequireAdmin without Bearer in front", middleware.RequireAdmin(okHandler), "", nil, http.StatusUnauthorized, "unauthorized", "Bearer"},
		{"claims from WithClaims, realm unknown", middleware.RequireAdmin(okHandler), "", annClaims, http.StatusForbidden, "forbidden",
			`Bearer error="insufficient_scope", error_description="this request needs an administrator's token"`},
		{"member passes RequireGroup", bearer(middleware.RequireGroup("analysts")(okHandler)), "ann-token", nil, http.StatusOK, "", ""},
		{"member of another group is forbidden", bearer(middleware.RequireGroup("analysts")(okHandler)), "bob-token", nil, http.StatusForbidden, "forbidden", groupRefused},
		{"being admin is not being in a group", bearer(middleware.RequireGroup("analysts")(okHandler)), "root-token", nil, http.StatusForbidden, "forbidden", groupRefused},
		{"RequireGroup without claims", middleware.RequireGroup("analysts")(okHandler), "", nil, http.StatusUnauthorized, "unauthorized", "Bearer"},
		{"both checks stacked", bearer(middleware.RequireAdmin(middleware.RequireGroup("sales")(okHandler))), "bob-token", nil, http.StatusForbidden, "forbidden", adminRefused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodDelete, "/groups/x", nil)
			if tt.token != "" {
				r.Header.Set("Authorization", "Bearer "+tt.token)
			}
			if tt.claims != nil {
				r = r.WithContext(middleware.WithClaims(r.Context(), tt.claims))
			}
			rec := serve(tt.handler, r)
			if rec.Code != tt.wantStatus {
				t.Fatalf("status = %d, want %d; body %s", rec.Code, tt.wantStatus, rec.Body)
			}
			if got := rec.Header().Get("WWW-Authenticate"); got != tt.wantChallenge {
				t.Errorf("WWW-Authenticate = %q, want %q", got, tt.wantChallenge)
			}
			if tt.wantType == "" {
				return
			}
			if b := decodeError(t, rec); b.Error.Type != tt.wantType {
				t.Errorf("type = %q, want %q", b.Error.Type, tt.wantType)
			}
		})
	}
}

func TestRequireGroupEmptyNamePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("RequireGroup(\"\") did not panic")
		}
	}()
	middleware.RequireGroup("")
}
