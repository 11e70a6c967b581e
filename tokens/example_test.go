package tokens_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/scorehub/scorehub/tokens"
	"github.com/scorehub/scorehub/tokens/accounts"
)

// Issue a token for a user and verify it, as the management API does on
// every request.
func Example() {
	now := func() time.Time { return time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC) }
	keys, err := tokens.NewKeySet(tokens.KeySetConfig{Now: now}) // Ed25519
	if err != nil {
		panic(err)
	}
	issuer, err := tokens.NewIssuer(tokens.IssuerConfig{Keys: keys, Issuer: "https://scorehub.example",
		Audience: []string{"scorehub"}, Now: now})
	if err != nil {
		panic(err)
	}
	verifier, err := tokens.NewVerifier(tokens.VerifierConfig{Keys: keys, Issuer: "https://scorehub.example",
		Audience: "scorehub", Now: now})
	if err != nil {
		panic(err)
	}

	raw, _, err := issuer.Issue(tokens.Principal{Subject: "alice", Admin: true, Groups: []string{"analysts"}})
	if err != nil {
		panic(err)
	}
	claims, err := verifier.Verify(context.Background(), raw)
	if err != nil {
		panic(err)
	}
	fmt.Println(claims.Subject, claims.Admin, claims.Groups, claims.ExpiresAt.Format(time.RFC3339))
	// Output: alice true [analysts] 2026-01-02T15:09:05Z
}

// A token past its expiry is refused with ErrExpired.
func ExampleVerifier_Verify() {
	clock := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	now := func() time.Time { return clock }
	keys, _ := tokens.NewKeySet(tokens.KeySetConfig{Now: now})
	issuer, _ := tokens.NewIssuer(tokens.IssuerConfig{Keys: keys, Issuer: "https://scorehub.example",
		Audience: []string{"scorehub"}, Now: now})
	verifier, _ := tokens.NewVerifier(tokens.VerifierConfig{Keys: keys, Issuer: "https://scorehub.example",
		Audience: "scorehub", Now: now})
	raw, _, _ := issuer.Issue(tokens.Principal{Subject: "alice"})

	clock = clock.Add(4*time.Minute + 59*time.Second)
	_, err := verifier.Verify(context.Background(), raw)
	fmt.Println("at 4:59:", err)

	clock = clock.Add(2 * time.Second)
	claims, err := verifier.Verify(context.Background(), raw)
	fmt.Println("at 5:01:", errors.Is(err, tokens.ErrExpired), claims == nil)
	// Output:
	// at 4:59: <nil>
	// at 5:01: true true
}

// A rotated-out key keeps verifying, and stays published, for the key
// set's retention.
func ExampleKeySet_Rotate() {
	clock := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	keys, _ := tokens.NewKeySet(tokens.KeySetConfig{Retention: 10 * time.Minute, Now: func() time.Time { return clock }})
	old := keys.Signing().ID()
	if _, err := keys.Rotate(); err != nil {
		panic(err)
	}
	fmt.Println("published after rotation:", len(keys.JWKS().Keys))
	fmt.Println("old key retired until:", keys.Keys()[1].ID == old, keys.Keys()[1].NotAfter.Format(time.Kitchen))
	clock = clock.Add(11 * time.Minute)
	fmt.Println("published after retention:", len(keys.JWKS().Keys))
	// Output:
	// published after rotation: 2
	// old key retired until: true 3:14PM
	// published after retention: 1
}

// The token service: HTTP Basic in, {"idToken","expirationDate"} out.
func ExampleNew() {
	now := func() time.Time { return time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC) }
	keys, _ := tokens.NewKeySet(tokens.KeySetConfig{Now: now})
	issuer, _ := tokens.NewIssuer(tokens.IssuerConfig{Keys: keys, Issuer: "https://scorehub.example",
		Audience: []string{"scorehub"}, Now: now})
	hash, _ := accounts.HashPassword("wonderland", 4) // cost 4 keeps the example quick; production wants 0 (bcrypt's default) or more
	users, _ := accounts.NewStaticUsers(accounts.User{Name: "alice", PasswordHash: hash, Admin: true})
	h, err := tokens.NewService(tokens.ServiceConfig{Issuer: issuer, Users: users, Now: now,
		Logger: slog.New(slog.DiscardHandler)}) // failed logins and issued tokens are logged at info
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/api/rest/", h) // the token routes, next to the host's own

	req := httptest.NewRequest(http.MethodGet, "/api/rest/tokenservice", nil)
	req.SetBasicAuth("alice", "wonderland")
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	var body struct {
		IDToken        string `json:"idToken"`
		ExpirationDate string `json:"expirationDate"`
	}
	json.Unmarshal(rec.Body.Bytes(), &body)
	fmt.Println(rec.Code, rec.Header().Get("Cache-Control"), body.ExpirationDate, strings.Count(body.IDToken, "."))

	req.SetBasicAuth("alice", "guess")
	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	fmt.Println(rec.Code, rec.Header().Get("WWW-Authenticate"))
	fmt.Print(rec.Body)
	// Output:
	// 200 no-store 2026-01-02T15:09:05Z 2
	// 401 Basic realm="scorehub", charset="UTF-8"
	// {"error":{"type":"unauthorized","message":"the user name or password is not correct"}}
}
