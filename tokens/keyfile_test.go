package tokens_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/tokens"
)

// restartable builds the issuer/verifier pair a server would build from a
// key file, as at each start.
func restartable(t *testing.T, path string, c *testutil.Clock, alg tokens.Algorithm) (*tokens.KeySet, *tokens.Issuer, *tokens.Verifier) {
	t.Helper()
	cfg := tokens.KeySetConfig{Algorithm: alg, Now: c.Now}
	if _, err := os.Stat(path); err != nil && alg == tokens.RS256 {
		cfg.Signing = newSigner(t, alg, 0).key // generating RSA keys is slow
	}
	keys, err := tokens.LoadOrCreateKeySet(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	iss, err := tokens.NewIssuer(tokens.IssuerConfig{Keys: keys, Issuer: testIssuer, Audience: []string{testAudience}, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	v, err := tokens.NewVerifier(tokens.VerifierConfig{Keys: keys, Issuer: testIssuer, Audience: testAudience, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	return keys, iss, v
}

// TestKeyFileSurvivesRestart: a token issued before a restart verifies
// after it, including one signed by a key a rotation retired.
func TestKeyFileSurvivesRestart(t *testing.T) {
	for _, alg := range []tokens.Algorithm{tokens.EdDSA, tokens.ES256, tokens.RS256, tokens.HS256} {
		t.Run(string(alg), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "data", "keys.json")
			c := newClock()
			keys, iss, _ := restartable(t, path, c, alg)
			if runtime.GOOS != "windows" {
				fi, err := os.Stat(path)
				if err != nil {
					t.Fatal(err)
				}
				if perm := fi.Mode().Perm(); perm != 0o600 {
					t.Errorf("key file mode %04o, want 0600", perm)
				}
			}
			first, _, err := iss.Issue(alice)
			if err != nil {
				t.Fatal(err)
			}
			c.Advance(time.Minute)
			next := newSigner(t, tokens.ES256, 9).key
			if alg != tokens.RS256 {
				next = newSigner(t, alg, 9).key
			}
			if err := keys.RotateTo(next); err != nil {
				t.Fatal(err)
			}
			second, _, err := iss.Issue(alice)
			if err != nil {
				t.Fatal(err)
			}

			keys2, _, v2 := restartable(t, path, c, alg)
			if keys2.Signing().ID() != keys.Signing().ID() {
				t.Errorf("after restart the signing key is %s, want %s", keys2.Signing().ID(), keys.Signing().ID())
			}
			for i, raw := range []string{first, second} {
				if _, err := v2.Verify(context.Background(), raw); err != nil {
					t.Errorf("token %d after restart: %v", i+1, err)
				}
			}
			if got, want := len(keys2.Keys()), 2; got != want {
				t.Errorf("after restart %d keys, want %d", got, want)
			}
		})
	}
}

func TestKeyFileRefused(t *testing.T) {
	good := func(t *testing.T) (string, map[string]any) {
		path := filepath.Join(t.TempDir(), "keys.json")
		keys, err := tokens.LoadOrCreateKeySet(path, tokens.KeySetConfig{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := keys.Rotate(); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		return path, doc
	}
	rewrite := func(t *testing.T, path string, doc map[string]any) {
		data, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	key := func(doc map[string]any, i int) map[string]any {
		return doc["keys"].([]any)[i].(map[string]any)
	}
	tests := []struct {
		name string
		edit func(t *testing.T, path string, doc map[string]any)
		want string
	}{
		{"readable by others", func(t *testing.T, path string, doc map[string]any) {
			if runtime.GOOS == "windows" {
				t.Skip("file modes are not checked on Windows")
			}
			if err := os.Chmod(path, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "chmod 600"},
		{"kid not the key's thumbprint", func(t *testing.T, path string, doc map[string]any) {
			key(doc, 0)["kid"] = "forged"
			rewrite(t, path, doc)
		}, "thumbprint"},
		{"alg not the key's", func(t *testing.T, path string, doc map[string]any) {
			key(doc, 0)["alg"] = "ES256"
			rewrite(t, path, doc)
		}, "does not fit"},
		{"two signing keys", func(t *testing.T, path string, doc map[string]any) {
			delete(key(doc, 1), "retired")
			delete(key(doc, 1), "notAfter")
			rewrite(t, path, doc)
		}, "more than one signing"},
		{"no signing key", func(t *testing.T, path string, doc map[string]any) {
			doc["keys"] = doc["keys"].([]any)[1:]
			rewrite(t, path, doc)
		}, "no signing"},
		{"unknown version", func(t *testing.T, path string, doc map[string]any) {
			doc["version"] = 2
			rewrite(t, path, doc)
		}, "version 2"},
		{"not JSON", func(t *testing.T, path string, doc map[string]any) {
			if err := os.WriteFile(path, []byte("-----BEGIN PRIVATE KEY-----"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "invalid character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, doc := good(t)
			tt.edit(t, path, doc)
			_, err := tokens.LoadOrCreateKeySet(path, tokens.KeySetConfig{})
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("LoadOrCreateKeySet: %v; want an error naming the file and saying %q", err, tt.want)
			}
		})
	}
}

// TestKeyFileWriteFailureKeepsKeys: a rotation that cannot be written does
// not happen, so no token is signed with a key a restart would lose.
func TestKeyFileWriteFailureKeepsKeys(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	keys, err := tokens.LoadOrCreateKeySet(filepath.Join(dir, "keys.json"), tokens.KeySetConfig{})
	if err != nil {
		t.Fatal(err)
	}
	before := keys.Signing().ID()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := keys.Rotate(); err == nil {
		t.Fatal("Rotate succeeded without a place to write the key file")
	}
	if got := keys.Signing().ID(); got != before {
		t.Errorf("signing key changed to %s after a failed rotation", got)
	}
}

func TestKeyFileSigningMismatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.json")
	if _, err := tokens.LoadOrCreateKeySet(path, tokens.KeySetConfig{}); err != nil {
		t.Fatal(err)
	}
	other := newSigner(t, tokens.EdDSA, 42).key
	if _, err := tokens.LoadOrCreateKeySet(path, tokens.KeySetConfig{Signing: other}); err == nil {
		t.Error("LoadOrCreateKeySet ignored a Signing key that differs from the file's")
	}
}

// TestRotateIfOlderAcrossRestart: the age that triggers a rotation counts
// from the key's creation as the key file keeps it, so a restart does not
// reset it; the replaced key keeps verifying, and stays published, until
// the tokens it signed have expired.
func TestRotateIfOlderAcrossRestart(t *testing.T) {
	const period = 30 * 24 * time.Hour
	path := filepath.Join(t.TempDir(), "keys.json")
	c := newClock()
	keys, _, _ := restartable(t, path, c, tokens.EdDSA)
	first := keys.Signing().ID()

	c.Advance(period - time.Hour)
	keys, _, _ = restartable(t, path, c, tokens.EdDSA)
	if k, err := keys.RotateIfOlder(period); err != nil || k != nil {
		t.Fatalf("a key younger than the period: RotateIfOlder = %v, %v; want no rotation", k, err)
	}

	c.Advance(2 * time.Hour)
	keys, iss, _ := restartable(t, path, c, tokens.EdDSA)
	before, _, err := iss.Issue(alice)
	if err != nil {
		t.Fatal(err)
	}
	k, err := keys.RotateIfOlder(period)
	if err != nil || k == nil {
		t.Fatalf("a key older than the period: RotateIfOlder = %v, %v; want a rotation", k, err)
	}
	if k.ID() == first || keys.Signing().ID() != k.ID() {
		t.Fatalf("signing key %s after rotating away from %s to %s", keys.Signing().ID(), first, k.ID())
	}
	if again, err := keys.RotateIfOlder(period); err != nil || again != nil {
		t.Errorf("right after a rotation: RotateIfOlder = %v, %v; want none", again, err)
	}

	// A restart sees the new key's age and still verifies the old key's
	// token until it expires.
	c.Advance(time.Minute)
	keys, _, v := restartable(t, path, c, tokens.EdDSA)
	if kids := jwksKIDs(keys); len(kids) != 2 || kids[0] != k.ID() || kids[1] != first {
		t.Errorf("JWKS after rotation has %v, want %s then %s", kids, k.ID(), first)
	}
	if _, err := v.Verify(context.Background(), before); err != nil {
		t.Errorf("token of the replaced key before it expired: %v", err)
	}
	if rotated, err := keys.RotateIfOlder(period); err != nil || rotated != nil {
		t.Errorf("after a restart: RotateIfOlder = %v, %v; want none", rotated, err)
	}

	c.Advance(keys.Retention())
	if rotated, err := keys.RotateIfOlder(period); err != nil || rotated != nil {
		t.Errorf("after the retention: RotateIfOlder = %v, %v; want none", rotated, err)
	}
	if kids := jwksKIDs(keys); len(kids) != 1 || kids[0] != k.ID() {
		t.Errorf("JWKS after the retention has %v, want only %s", kids, k.ID())
	}
	if _, err := v.Verify(context.Background(), before); !errors.Is(err, tokens.ErrUnknownKey) && !errors.Is(err, tokens.ErrExpired) {
		t.Errorf("token of the replaced key after the retention: %v, want refused", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), `"kid"`); n != 1 {
		t.Errorf("key file after the retention holds %d keys, want the expired one pruned", n)
	}
	if _, err := keys.RotateIfOlder(0); err == nil {
		t.Error("RotateIfOlder accepted a zero age")
	}
}
