package tokens_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/scorehub/scorehub/tokens"
	"github.com/scorehub/scorehub/tokens/accounts"
)

// TestZeroValuesFailClosed checks that a value declared instead of made by
// its constructor refuses what it is asked rather than panicking or
// letting anything through.
func TestZeroValuesFailClosed(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		call func() error
	}{
		{"Verifier.Verify", func() error { _, err := new(tokens.Verifier).Verify(ctx, "a.b.c"); return err }},
		{"Issuer.Issue", func() error { _, _, err := new(tokens.Issuer).Issue(tokens.Principal{Subject: "ann"}); return err }},
		{"Provider.Verify", func() error { _, err := new(tokens.Provider).Verify(ctx, "a.b.c"); return err }},
		{"KeySet.Rotate", func() error { _, err := new(tokens.KeySet).Rotate(); return err }},
		{"KeySet.Prune", func() error { _, err := new(tokens.KeySet).Prune(); return err }},
		{"StaticUsers.Authenticate", func() error {
			_, err := new(accounts.StaticUsers).Authenticate(ctx, "ann", "secret")
			return err
		}},
		{"Service.ServeHTTP", func() error {
			w := httptest.NewRecorder()
			new(tokens.Service).ServeHTTP(w, basicRequest("ann", "secret"))
			if w.Code != http.StatusInternalServerError {
				return nil
			}
			return fmt.Errorf("answered %d", w.Code)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(); err == nil {
				t.Error("not refused")
			}
		})
	}
	t.Run("empty KeySet", func(t *testing.T) {
		var s tokens.KeySet
		if s.Signing() != nil || len(s.Keys()) != 0 || len(s.JWKS().Keys) != 0 {
			t.Errorf("a zero KeySet reports keys: %v %v %v", s.Signing(), s.Keys(), s.JWKS())
		}
	})
}
