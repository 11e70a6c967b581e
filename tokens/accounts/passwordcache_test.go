package accounts_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scorehub/scorehub/tokens"
	"github.com/scorehub/scorehub/tokens/accounts"
)

// countingUsers knows ann with password "right", whose credential version
// is whatever version holds, and counts its checks.
type countingUsers struct {
	checks  atomic.Int64
	mu      sync.Mutex
	version string // "" once ann is removed
}

func (u *countingUsers) Authenticate(_ context.Context, name, password string) (tokens.Principal, error) {
	u.checks.Add(1)
	u.mu.Lock()
	defer u.mu.Unlock()
	if name != "ann" || password != "right" || u.version == "" {
		return tokens.Principal{}, tokens.ErrBadCredentials
	}
	return tokens.Principal{Subject: "ann", Groups: []string{"analysts"}, CredentialVersion: u.version}, nil
}

func (u *countingUsers) CredentialVersion(_ context.Context, subject string) (string, bool, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if subject != "ann" || u.version == "" {
		return "", false, nil
	}
	return u.version, true, nil
}

func (u *countingUsers) set(v string) {
	u.mu.Lock()
	u.version = v
	u.mu.Unlock()
}

func TestPasswordCache(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	users := &countingUsers{version: "v1"}
	c, err := accounts.NewPasswordCache(accounts.PasswordCacheConfig{Users: users, Credentials: users, TTL: time.Minute,
		Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	check := func(password string, wantChecks int64, wantErr error) {
		t.Helper()
		p, err := c.Authenticate(ctx, "ann", password)
		if !errors.Is(err, wantErr) || (err == nil && p.Subject != "ann") {
			t.Fatalf("Authenticate(ann, %q) = %+v, %v; want error %v", password, p, err, wantErr)
		}
		if got := users.checks.Load(); got != wantChecks {
			t.Fatalf("after Authenticate(ann, %q): %d checks by Users, want %d", password, got, wantChecks)
		}
	}
	check("right", 1, nil)
	check("right", 1, nil) // remembered
	check("wrong", 2, tokens.ErrBadCredentials)
	check("wrong", 3, tokens.ErrBadCredentials) // refusals are never remembered

	users.set("v2") // the password or groups changed
	check("right", 4, nil)
	check("right", 4, nil)

	users.set("") // ann removed
	check("right", 5, tokens.ErrBadCredentials)
	users.set("v3")
	check("right", 6, nil)

	now = now.Add(time.Minute)
	check("right", 7, nil) // expired
	check("right", 7, nil)
}

func TestPasswordCacheIsBounded(t *testing.T) {
	users := &manyUsers{}
	c, err := accounts.NewPasswordCache(accounts.PasswordCacheConfig{Users: users, Credentials: users, MaxEntries: 10})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if _, err := c.Authenticate(context.Background(), "ann", string(rune('a'+i%26))+string(rune('a'+i/26))); err != nil {
			t.Fatal(err)
		}
		if n := c.Len(); n > 10 {
			t.Fatalf("%d checks remembered, want at most 10", n)
		}
	}
}

// manyUsers takes any password for ann.
type manyUsers struct{}

func (manyUsers) Authenticate(context.Context, string, string) (tokens.Principal, error) {
	return tokens.Principal{Subject: "ann", CredentialVersion: "v"}, nil
}

func (manyUsers) CredentialVersion(context.Context, string) (string, bool, error) {
	return "v", true, nil
}

func TestPasswordCacheConfig(t *testing.T) {
	users := &countingUsers{}
	for _, cfg := range []accounts.PasswordCacheConfig{
		{Credentials: users},
		{Users: users},
		{Users: users, Credentials: users, TTL: -1},
		{Users: users, Credentials: users, MaxEntries: -1},
	} {
		if _, err := accounts.NewPasswordCache(cfg); err == nil {
			t.Errorf("NewPasswordCache(%+v) succeeded", cfg)
		}
	}
}

func BenchmarkPasswordCacheHit(b *testing.B) {
	users := &countingUsers{version: "v1"}
	c, err := accounts.NewPasswordCache(accounts.PasswordCacheConfig{Users: users, Credentials: users})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Authenticate(ctx, "ann", "right"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func TestPasswordCacheRemembered(t *testing.T) {
	ctx := context.Background()
	users := &countingUsers{version: "v1"}
	c, err := accounts.NewPasswordCache(accounts.PasswordCacheConfig{Users: users, Credentials: users})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := c.Remembered(ctx, "ann", "right"); ok || err != nil {
		t.Fatalf("Remembered before any check = %v, %v", ok, err)
	}
	if _, err := c.Authenticate(ctx, "ann", "right"); err != nil {
		t.Fatal(err)
	}
	if p, ok, err := c.Remembered(ctx, "ann", "right"); !ok || err != nil || p.Subject != "ann" {
		t.Errorf("Remembered after a check = %+v, %v, %v", p, ok, err)
	}
	if _, ok, _ := c.Remembered(ctx, "ann", "wrong"); ok {
		t.Error("a wrong password is remembered")
	}
	users.set("v2")
	if _, ok, _ := c.Remembered(ctx, "ann", "right"); ok {
		t.Error("remembered after the user's credentials changed")
	}
	if got := users.checks.Load(); got != 1 {
		t.Errorf("Users checked %d times, want 1: Remembered never asks it", got)
	}
}
