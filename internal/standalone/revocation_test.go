package standalone

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/tokens/accounts"
)

// revocationDeadline is how soon after a file changes the tokens it
// revokes must be refused: a second, the promise, which includes reading
// the file and the one bcrypt hash building its users takes. Under the
// race detector that hash alone can take over a second, so there the
// test checks only that the revocation comes.
func revocationDeadline() time.Duration {
	if raceEnabled {
		return 10 * time.Second
	}
	return time.Second
}

// TestTokensRevokedWhenUsersChange replays the attacks: a user removed from
// the users file or moved to other groups in it, and the admin's stored
// password hash replaced, each while holding a token. Their tokens must stop working within a second, while
// an unchanged user's token and a token for the new admin password work.
func TestTokensRevokedWhenUsersChange(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	adminFile := filepath.Join(data, "admin.bcrypt")
	writeFile(t, adminFile, string(passwordHash(t, "old admin"))+"\n")
	usersFile := filepath.Join(dir, "users.htpasswd")
	alice, bob := "alice:"+string(passwordHash(t, "alice-pw")), "bob:"+string(passwordHash(t, "bob-pw"))
	writeFile(t, usersFile, alice+"\n"+bob+"\n")

	base, stop := startWithEnv(t, io.Discard, func(string) string { return "" }, "-data", data, "-users", usersFile)
	defer stop()
	adminToken := login(t, base, "admin", "old admin")
	aliceToken := login(t, base, "alice", "alice-pw")
	bobToken := login(t, base, "bob", "bob-pw")
	for name, tok := range map[string]string{"admin": adminToken, "alice": aliceToken, "bob": bobToken} {
		if status := readWith(t, base, tok); status != http.StatusOK {
			t.Fatalf("%s's fresh token got %d, want 200", name, status)
		}
	}

	t.Run("user removed", func(t *testing.T) {
		writeFile(t, usersFile, bob+"\n")
		waitRefused(t, base, aliceToken)
		if status := readWith(t, base, bobToken); status != http.StatusOK {
			t.Errorf("the token of bob, still in the file, got %d, want 200", status)
		}
	})
	t.Run("admin password changed", func(t *testing.T) {
		replaceFile(t, adminFile, string(passwordHash(t, "new admin"))+"\n")
		waitRefused(t, base, adminToken)
		if status := readWith(t, base, login(t, base, "admin", "new admin")); status != http.StatusOK {
			t.Errorf("a token for the new admin password got %d, want 200", status)
		}
		if status := readWith(t, base, bobToken); status != http.StatusOK {
			t.Errorf("bob's token got %d after the admin's password changed, want 200", status)
		}
	})
	t.Run("a broken users file keeps the last good users", func(t *testing.T) {
		writeFile(t, usersFile, "bob has no hash\n")
		time.Sleep(500 * time.Millisecond) // twice how often the files are looked at
		if status := readWith(t, base, bobToken); status != http.StatusOK {
			t.Errorf("bob's token got %d after the users file broke, want 200 (the last good users)", status)
		}
	})
	t.Run("groups changed", func(t *testing.T) {
		writeFile(t, usersFile, bob+"\n")
		bobToken := login(t, base, "bob", "bob-pw")
		writeFile(t, usersFile, bob+":analysts\n")
		waitRefused(t, base, bobToken)
		if status := readWith(t, base, login(t, base, "bob", "bob-pw")); status != http.StatusOK {
			t.Errorf("a token of bob in his new groups got %d, want 200", status)
		}
	})
}

// waitRefused fails t unless tok is refused as revoked within
// revocationDeadline.
func waitRefused(t *testing.T, base, tok string) {
	t.Helper()
	start := time.Now()
	var status int
	var challenge string
	if !testutil.Poll(revocationDeadline(), func() bool {
		status, challenge = readWithChallenge(t, base, tok)
		return status == http.StatusUnauthorized
	}) {
		t.Fatalf("the token still got %d %v after the change, want 401", status, time.Since(start))
	}
	if !strings.Contains(challenge, `error_description="the token was revoked"`) {
		t.Errorf("refused with challenge %q, want the token was revoked", challenge)
	}
}

func readWith(t *testing.T, base, tok string) int {
	t.Helper()
	status, _ := readWithChallenge(t, base, tok)
	return status
}

// readWithChallenge reads a management resource every user may read with
// tok and returns the status and the WWW-Authenticate header.
func readWithChallenge(t *testing.T, base, tok string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/api/v1/webapigroups/DEFAULT", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, res.Header.Get("WWW-Authenticate")
}

// login returns a token for user and password from the token service.
func login(t *testing.T, base, user, password string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/api/rest/tokenservice", nil)
	req.SetBasicAuth(user, password)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var tok struct{ IDToken string }
	if err := json.NewDecoder(res.Body).Decode(&tok); err != nil || res.StatusCode != http.StatusOK || tok.IDToken == "" {
		t.Fatalf("login as %s: %d (%v), want an idToken", user, res.StatusCode, err)
	}
	return tok.IDToken
}

// passwordHash is a bcrypt hash of the lowest cost the users file accepts.
func passwordHash(t *testing.T, password string) []byte {
	t.Helper()
	h, err := accounts.HashPassword(password, 10)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// replaceFile puts content at path by renaming a new file over it, as an
// operator's tools often do; the size stays the same, so only the new
// file tells the change.
func replaceFile(t *testing.T, path, content string) {
	t.Helper()
	tmp := fmt.Sprintf("%s.%d", path, time.Now().UnixNano())
	writeFile(t, tmp, content)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}
