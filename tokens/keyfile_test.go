package tokens_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/scorehub/scorehub/tokens"
)

// restartable builds the issuer/verifier pair a server would build from a
// key file, as at each start.
func restartable(t *testing.T, path string, c *clock, alg tokens.Algorithm) (*tokens.KeySet, *tokens.Issuer, *tokens.Verifier) {
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
