package accounts_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/scorehub/scorehub/tokens"
	"github.com/scorehub/scorehub/tokens/accounts"
)

func TestStaticUsersAuthenticate(t *testing.T) {
	long := strings.Repeat("p", 72)
	aliceHash, bobHash := hash(t, "wonderland"), hash(t, long)
	users, err := accounts.NewStaticUsers(
		accounts.User{Name: "alice", PasswordHash: aliceHash, Admin: true, Groups: []string{"analysts"}},
		accounts.User{Name: "bob", PasswordHash: bobHash},
	)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, user, password string
		want                 *tokens.Principal
	}{
		{"right password", "alice", "wonderland", &tokens.Principal{Subject: "alice", Admin: true, Groups: []string{"analysts"},
			CredentialVersion: accounts.StaticVersion(accounts.User{PasswordHash: aliceHash, Admin: true, Groups: []string{"analysts"}})}},
		{"wrong password", "alice", "Wonderland", nil},
		{"unknown user", "mallory", "wonderland", nil},
		{"name differs in case", "Alice", "wonderland", nil},
		{"empty password", "alice", "", nil},
		{"72-byte password", "bob", long, &tokens.Principal{Subject: "bob", CredentialVersion: accounts.StaticVersion(accounts.User{PasswordHash: bobHash})}},
		{"password bcrypt would truncate", "bob", long + "extra", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := users.Authenticate(context.Background(), tt.user, tt.password)
			if tt.want == nil {
				if !errors.Is(err, tokens.ErrBadCredentials) {
					t.Fatalf("Authenticate: %v, want ErrBadCredentials", err)
				}
				if !cmp.Equal(got, tokens.Principal{}) {
					t.Errorf("principal %+v returned with an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(*tt.want, got); diff != "" {
				t.Errorf("principal (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewStaticUsersRefuses(t *testing.T) {
	h := hash(t, "x")
	tests := []struct {
		name  string
		users []accounts.User
	}{
		{"none", nil},
		{"duplicate", []accounts.User{{Name: "a", PasswordHash: h}, {Name: "a", PasswordHash: h}}},
		{"empty name", []accounts.User{{Name: "", PasswordHash: h}}},
		{"colon in name", []accounts.User{{Name: "a:b", PasswordHash: h}}},
		{"control character", []accounts.User{{Name: "a\nb", PasswordHash: h}}},
		{"plain text password", []accounts.User{{Name: "a", PasswordHash: []byte("secret")}}},
		{"MD5-crypt hash", []accounts.User{{Name: "a", PasswordHash: []byte("$1$saltsalt$abcdefghijklmnopqrstuv")}}},
		{"empty group", []accounts.User{{Name: "a", PasswordHash: h, Groups: []string{""}}}},
		{"bcrypt cost 31, days per login", []accounts.User{{Name: "a", PasswordHash: []byte(withCost(h, 31))}}},
		{"bcrypt salt outside its alphabet", []accounts.User{{Name: "a", PasswordHash: []byte(withChar(h, 59, '!'))}}},
		{"bcrypt cost with a sign", []accounts.User{{Name: "a", PasswordHash: []byte(withChar(h, 4, '+'))}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := accounts.NewStaticUsers(tt.users...); err == nil {
				t.Error("NewStaticUsers accepted them")
			}
		})
	}
}

func TestHashPassword(t *testing.T) {
	h, err := accounts.HashPassword("s3cret", 4)
	if err != nil {
		t.Fatal(err)
	}
	users, err := accounts.NewStaticUsers(accounts.User{Name: "a", PasswordHash: h})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := users.Authenticate(context.Background(), "a", "s3cret"); err != nil {
		t.Errorf("the hashed password does not authenticate: %v", err)
	}
	if _, err := accounts.HashPassword(strings.Repeat("x", 73), 4); err == nil {
		t.Error("HashPassword accepted a password bcrypt would truncate")
	}
	if _, err := accounts.HashPassword("x", 3); err == nil {
		t.Error("HashPassword accepted cost 3")
	}
	if _, err := accounts.HashPassword("x", accounts.MaxBcryptCost+1); err == nil {
		t.Errorf("HashPassword accepted cost %d", accounts.MaxBcryptCost+1)
	}
}

func TestParseHTPasswd(t *testing.T) {
	t.Parallel() // bcrypt at a file's cost takes a second under the race detector
	a, b := string(fileHash(t, "alice-pw")), string(fileHash(t, "bob-pw"))
	file := "# scorehub users\n\n" +
		"alice:" + a + ":admin, analysts\r\n" +
		"  # indented comment\n" +
		"bob:" + b + "\n"
	users, err := accounts.ParseHTPasswd(strings.NewReader(file), "users.htpasswd")
	if err != nil {
		t.Fatal(err)
	}
	if users.Len() != 2 {
		t.Errorf("%d users, want 2", users.Len())
	}
	got, err := users.Authenticate(context.Background(), "alice", "alice-pw")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tokens.Principal{Subject: "alice", Admin: true, Groups: []string{"admin", "analysts"},
		CredentialVersion: accounts.StaticVersion(accounts.User{PasswordHash: []byte(a), Admin: true, Groups: []string{"admin", "analysts"}})}, got); diff != "" {
		t.Errorf("alice (-want +got):\n%s", diff)
	}
	got, err = users.Authenticate(context.Background(), "bob", "bob-pw")
	if err != nil {
		t.Fatal(err)
	}
	if got.Admin || len(got.Groups) != 0 {
		t.Errorf("bob is %+v; a line without groups gives none", got)
	}
}

// TestParseHTPasswdRefuses: other hash formats are refused at load with an
// error naming the line and the format, never repeating the hash.
func TestParseHTPasswdRefuses(t *testing.T) {
	t.Parallel() // bcrypt at a file's cost takes a second under the race detector
	h := fileHash(t, "pw")
	good := "alice:" + string(h) + "\n"
	tests := []struct {
		name, line, want string
	}{
		{"Apache MD5", "bob:$apr1$w6D0cJ1e$BnLuWBRV3VtdE1WeX3rUo/", "Apache MD5"},
		{"SHA-1", "bob:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=", "SHA-1"},
		{"crypt", "bob:rqXexS6ZhobKA", "crypt or plain text"},
		{"plain text", "bob:hunter2", "crypt or plain text"},
		{"SHA-512-crypt", "bob:$6$salt$hash", "SHA-512-crypt"},
		{"no hash", "bob", "name:hash"},
		{"too many fields", "bob:" + string(h) + ":g:extra", "name:hash"},
		{"duplicate user", "alice:" + string(h), `"alice" already defined on line 2`},
		{"bcrypt cost above the limit, which would hang the start", "bob:" + withCost(h, 31), "cost 31 is above 17"},
		{"bcrypt cost 4, guessed a thousand times a second", "bob:" + string(hash(t, "pw")), "bcrypt cost 4 is below 10"},
		{"bcrypt cost 9", "bob:" + withCost(h, 9), "bcrypt cost 9 is below 10"},
		{"bcrypt salt outside its alphabet, which no password matches", "bob:" + withChar(h, 10, '!'), "not bcrypt's base64"},
		{"truncated bcrypt", "bob:$2y$05$abc", "malformed bcrypt"},
		{"line longer than 64 KiB", "bob:" + strings.Repeat("x", 64<<10), "longer than 65536 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := "# users\n" + good + tt.line + "\n"
			_, err := accounts.ParseHTPasswd(strings.NewReader(file), "users.htpasswd")
			if err == nil {
				t.Fatal("ParseHTPasswd accepted the file")
			}
			msg := err.Error()
			if !strings.Contains(msg, "users.htpasswd:3:") || !strings.Contains(msg, tt.want) {
				t.Errorf("error %q should name users.htpasswd:3 and say %q", msg, tt.want)
			}
			if _, secret, ok := strings.Cut(tt.line, ":"); ok && len(secret) > 8 && strings.Contains(msg, secret) {
				t.Errorf("error %q repeats the hash", msg)
			}
		})
	}
	if _, err := accounts.ParseHTPasswd(strings.NewReader("# nobody\n"), "empty"); err == nil {
		t.Error("ParseHTPasswd accepted a file without users")
	}
}

// withCost returns a bcrypt hash with its cost field set to cost: the
// same hash as far as parsing goes, without the work of making it.
func withCost(h []byte, cost int) string {
	return fmt.Sprintf("%s%02d%s", h[:4], cost, h[6:])
}

// withChar returns h with the byte at i replaced by c.
func withChar(h []byte, i int, c byte) string {
	b := []byte(string(h))
	b[i] = c
	return string(b)
}

// TestParseHTPasswdByteOrderMark: a file saved with a UTF-8 byte order mark
// defines its first user under the name that follows the mark.
func TestParseHTPasswdByteOrderMark(t *testing.T) {
	t.Parallel() // bcrypt at a file's cost takes a second under the race detector
	users, err := accounts.ParseHTPasswd(strings.NewReader("\ufeffalice:"+string(fileHash(t, "pw"))+"\n"), "users.htpasswd")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := users.Authenticate(context.Background(), "alice", "pw"); err != nil {
		t.Errorf("alice cannot log in: %v", err)
	}
}

func TestLoadHTPasswd(t *testing.T) {
	t.Parallel() // bcrypt at a file's cost takes a second under the race detector
	path := filepath.Join(t.TempDir(), "users.htpasswd")
	if err := os.WriteFile(path, []byte("alice:"+string(fileHash(t, "pw"))+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	users, err := accounts.LoadHTPasswd(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := users.Authenticate(context.Background(), "alice", "pw"); err != nil {
		t.Error(err)
	}
	if _, err := accounts.LoadHTPasswd(path + ".missing"); err == nil {
		t.Error("LoadHTPasswd of a missing file succeeded")
	}
}
