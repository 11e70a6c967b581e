package middleware_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/scorehub/scorehub/middleware"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/tokens"
	"github.com/scorehub/scorehub/tokens/accounts"
)

// exampleVerifier stands in for a *tokens.Verifier.
var exampleVerifier = verifierFunc(func(_ context.Context, raw string) (*tokens.Claims, error) {
	switch raw {
	case "admin-token":
		return &tokens.Claims{Subject: "root", Admin: true}, nil
	case "analyst-token":
		return &tokens.Claims{Subject: "ann", Groups: []string{"analysts"}}, nil
	case "old-token":
		return nil, fmt.Errorf("%w: at 09:00", tokens.ErrExpired)
	}
	return nil, tokens.ErrSignature
})

// exampleLogger writes text records to standard output without the time
// and duration, which change from run to run.
func exampleLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == "duration" {
				return slog.Attr{}
			}
			return a
		},
	}))
}

// A management API behind the usual pieces: an access log, a body limit,
// bearer authentication and an admin check. Each refused credential leaves
// a record of its own, before the access log's line, naming the client
// and, for a valid token, its subject.
func Example() {
	logger := exampleLogger()
	bodyLimit, err := middleware.BodyLimit(1 << 20)
	if err != nil {
		panic(err)
	}
	bearer, err := middleware.Bearer(middleware.BearerConfig{Verifier: exampleVerifier, Realm: "example", Logger: logger})
	if err != nil {
		panic(err)
	}
	accessLog := middleware.AccessLog(middleware.AccessLogConfig{Logger: logger})
	api := accessLog(bodyLimit(bearer(middleware.RequireAdmin(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := middleware.ClaimsFrom(r.Context())
		fmt.Fprintf(w, "group deleted by %s\n", c.Subject)
	})))))

	for _, token := range []string{"admin-token", "analyst-token", "old-token", ""} {
		r := httptest.NewRequest(http.MethodDelete, "/api/v1/groups/risk", nil)
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, r)
		fmt.Println(strings.TrimSpace(fmt.Sprintf("→ %d %s", rec.Code, rec.Header().Get("WWW-Authenticate"))))
		fmt.Print(rec.Body)
	}
	// Output:
	// level=INFO msg="http request" method=DELETE path=/api/v1/groups/risk status=200 bytes=22 subject=root
	// → 200
	// group deleted by root
	// level=WARN msg="middleware: credentials refused" method=DELETE path=/api/v1/groups/risk status=403 type=forbidden reason="this request needs an administrator's token" client=192.0.2.1 subject=ann
	// level=INFO msg="http request" method=DELETE path=/api/v1/groups/risk status=403 bytes=87 subject=ann
	// → 403 Bearer realm="example", error="insufficient_scope", error_description="this request needs an administrator's token"
	// {"error":{"type":"forbidden","message":"this request needs an administrator's token"}}
	// level=WARN msg="middleware: credentials refused" method=DELETE path=/api/v1/groups/risk status=401 type=invalid_token reason="the token expired" cause="tokens: token expired" client=192.0.2.1
	// level=INFO msg="http request" method=DELETE path=/api/v1/groups/risk status=401 bytes=65
	// → 401 Bearer realm="example", error="invalid_token", error_description="the token expired"
	// {"error":{"type":"invalid_token","message":"the token expired"}}
	// level=INFO msg="middleware: credentials refused" method=DELETE path=/api/v1/groups/risk status=401 type=unauthorized reason="this request needs a bearer token in the Authorization header; GET /api/rest/tokenservice with Basic credentials issues one" client=192.0.2.1
	// level=INFO msg="http request" method=DELETE path=/api/v1/groups/risk status=401 bytes=170
	// → 401 Bearer realm="example"
	// {"error":{"type":"unauthorized","message":"this request needs a bearer token in the Authorization header; GET /api/rest/tokenservice with Basic credentials issues one"}}
}

// Authorize is the scoring handler's Authorize function: it is asked only
// about groups that require a token, and the handler sends the error's
// challenge as WWW-Authenticate. This service takes bearer idTokens only.
func ExampleCredentials_Authorize() {
	c, err := middleware.NewCredentials(middleware.CredentialsConfig{
		BearerConfig: middleware.BearerConfig{Verifier: exampleVerifier, Realm: "scoring"},
	})
	if err != nil {
		panic(err)
	}
	authorize := c.Authorize
	policy := registry.AuthPolicy{Mode: registry.TokenRequired, Groups: []string{"analysts"}}
	for _, token := range []string{"analyst-token", "admin-token", "old-token"} {
		r := httptest.NewRequest(http.MethodPost, "/webapi/risk/api/v1/services/churn/predict", nil)
		r.Header.Set("Authorization", "Bearer "+token)
		err := authorize(r, "risk", policy)
		var refusal *problem.Error
		if errors.As(err, &refusal) {
			fmt.Printf("%s: %d %s\n", token, refusal.Status, refusal.Challenge)
			continue
		}
		fmt.Printf("%s: allowed (err=%v)\n", token, err)
	}
	// Output:
	// analyst-token: allowed (err=<nil>)
	// admin-token: 403 Bearer realm="scoring", error="insufficient_scope", error_description="the token's holder is not in a user group allowed here"
	// old-token: 401 Bearer realm="scoring", error="invalid_token", error_description="the token expired"
}

// Credentials checks what AI Hub's clients send to a protected group: here
// HTTP Basic, checked through an accounts.PasswordCache so that bcrypt runs once
// a minute per user, and bearer idTokens; the group takes Basic only.
func ExampleCredentials() {
	users, err := accounts.Open(context.Background(), accounts.Config{Store: accounts.NewMemoryStore(), BcryptCost: 10})
	if err != nil {
		panic(err)
	}
	defer users.Close()
	if _, err := users.CreateUser(context.Background(), accounts.NewUser{Name: "ann", Password: "ann-password-1", Groups: []string{"analysts"}}); err != nil {
		panic(err)
	}
	passwords, err := accounts.NewPasswordCache(accounts.PasswordCacheConfig{Users: users, Credentials: users})
	if err != nil {
		panic(err)
	}
	creds, err := middleware.NewCredentials(middleware.CredentialsConfig{
		BearerConfig: middleware.BearerConfig{Verifier: exampleVerifier, Realm: "scoring", Logger: slog.New(slog.DiscardHandler)},
		Passwords:    passwords,
		APITokens:    users,
	})
	if err != nil {
		panic(err)
	}
	policy := registry.AuthPolicy{Mode: registry.TokenRequired, Groups: []string{"analysts"},
		Schemes: []registry.Scheme{registry.SchemeBasic}}
	for _, auth := range []string{
		"Basic " + base64.StdEncoding.EncodeToString([]byte("ann:ann-password-1")),
		"Basic " + base64.StdEncoding.EncodeToString([]byte("ann:guess")),
		"Bearer analyst-token",
	} {
		r := httptest.NewRequest(http.MethodPost, "/webapi/risk/api/v1/services/churn/predict", nil)
		r.Header.Set("Authorization", auth)
		var refusal *problem.Error
		if err := creds.Authorize(r, "risk", policy); errors.As(err, &refusal) {
			fmt.Printf("%.12s…: %d %s\n", auth, refusal.Status, refusal.Challenge)
			continue
		}
		fmt.Printf("%.12s…: allowed\n", auth)
	}
	// Output:
	// Basic YW5uOm…: allowed
	// Basic YW5uOm…: 401 Basic realm="scoring", charset="UTF-8"
	// Bearer analy…: 401 Basic realm="scoring", charset="UTF-8"
}

func ExampleCORS() {
	cors, err := middleware.CORS(middleware.CORSConfig{
		AllowedOrigins: []string{"https://dashboard.example.com"},
	})
	if err != nil {
		panic(err)
	}
	h := cors(http.NotFoundHandler())
	r := httptest.NewRequest(http.MethodOptions, "/webapi/DEFAULT/api/v1/services/churn/predict", nil)
	r.Header.Set("Origin", "https://dashboard.example.com")
	r.Header.Set("Access-Control-Request-Method", "POST")
	r.Header.Set("Access-Control-Request-Headers", "authorization, content-type")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	fmt.Println(rec.Code)
	for _, k := range []string{"Access-Control-Allow-Origin", "Access-Control-Allow-Methods", "Access-Control-Allow-Headers", "Access-Control-Max-Age", "Vary"} {
		fmt.Printf("%s: %s\n", k, rec.Header().Get(k))
	}
	// Output:
	// 204
	// Access-Control-Allow-Origin: https://dashboard.example.com
	// Access-Control-Allow-Methods: GET, HEAD, POST, PUT, PATCH, DELETE
	// Access-Control-Allow-Headers: Authorization, Content-Type
	// Access-Control-Max-Age: 600
	// Vary: Origin
}
