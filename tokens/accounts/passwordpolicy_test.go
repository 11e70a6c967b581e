package accounts_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/tokens/accounts"
)

// trivialPasswords are passwords of the default minimum length or longer
// that an attacker tries first, with the phrase of the rule each breaks.
var trivialPasswords = []struct {
	name, password, phrase string
}{
	{"one letter repeated", "aaaaaaaaaaaa", "repetitive"},
	{"a common password", "password1234", "most common"},
	{"a common password, capitalised", "Password1234", "most common"},
	{"a common password in full-width letters", "ｐａｓｓｗｏｒｄ１２３４", "most common"},
	{"digits in a row, a common password", "123456789012", "most common"},
	{"digits in a row round the end", "567890123456", "consecutive"},
	{"twelve spaces", strings.Repeat(" ", 12), "white space"},
	{"tabs and line breaks", "\t\n \t\n \t\n \t\n ", "white space"},
	{"a short unit repeated", "abcabcabcabc", "repetitive"},
	{"a word repeated with a tail", "horsehorseho", "repetitive"},
	{"two characters", "abababbbabaa", "repetitive"},
	{"the alphabet", "abcdefghijkl", "consecutive"},
	{"the alphabet backwards", "ZYXWVUTSRQPO", "consecutive"},
	{"a keyboard row", "qwertyuiopas", "consecutive"},
	{"digits backwards", "210987654321", "consecutive"},
	{"a common password between spaces", "  password1234  ", "most common"},
	{"digits in a row after a space", " 567890123456", "consecutive"},
}

func TestCheckNewPasswordRefusesTrivialPasswords(t *testing.T) {
	for _, tc := range trivialPasswords {
		t.Run(tc.name, func(t *testing.T) {
			err := accounts.CheckNewPassword(tc.password, 0)
			wantRefusal(t, err, accounts.ErrInvalid, 400, "validation_failed", "/password", tc.phrase, strings.TrimSpace(tc.password))
		})
	}
}

func TestCheckNewPasswordAccepts(t *testing.T) {
	for _, p := range []string{
		goodPassword,
		"correct horse battery staple",
		"ann-password-1",
		"a long passphrase",
		"äöüß and more",
		"qwerty123456x", // a common password with one more character
		"1234567890abc", // a run and then another
		"   spaced   out   ",
	} {
		if err := accounts.CheckNewPassword(p, 0); err != nil {
			t.Errorf("%q was refused: %v", p, err)
		}
	}
}

func TestCheckNewPasswordMinimumLength(t *testing.T) {
	if err := accounts.CheckNewPassword("short pass", 0); !strings.Contains(httperr.From(err).Message, "at least 12") {
		t.Errorf("a password of 10 characters under the default minimum: %v, want at least 12 required", err)
	}
	if err := accounts.CheckNewPassword("mustang1", 8); !strings.Contains(httperr.From(err).Message, "most common") {
		t.Errorf("a common password of 8 characters under a minimum of 8: %v, want it refused as common", err)
	}
}

// TestBookRefusesTrivialPasswords: a trivial password is refused whether a
// user is created with it or their password is changed to it, and the
// refused user cannot log in with it.
func TestBookRefusesTrivialPasswords(t *testing.T) {
	f := newAccountsFixture(t, nil)
	ctx := context.Background()
	f.createUser(t, "alice")
	for _, tc := range trivialPasswords {
		t.Run("create, "+tc.name, func(t *testing.T) {
			_, err := f.a.CreateUser(ctx, accounts.NewUser{Name: "mallory", Password: tc.password})
			wantRefusal(t, err, accounts.ErrInvalid, 400, "validation_failed", "/password", tc.phrase, strings.TrimSpace(tc.password))
			if _, err := f.a.Authenticate(ctx, "mallory", tc.password); err == nil {
				t.Error("the user refused can log in")
			}
		})
		t.Run("update, "+tc.name, func(t *testing.T) {
			_, err := f.a.UpdateUser(ctx, "alice", 0, accounts.UserUpdate{Password: &tc.password})
			wantRefusal(t, err, accounts.ErrInvalid, 400, "validation_failed", "/password", tc.phrase, strings.TrimSpace(tc.password))
			if _, err := f.a.Authenticate(ctx, "alice", tc.password); err == nil {
				t.Error("alice can log in with the refused password")
			}
		})
	}
	if got, _ := f.a.User("alice"); got.Revision != 1 {
		t.Errorf("after refused password changes alice is at revision %d, want 1", got.Revision)
	}
}

// TestCommonPasswordsFile: the list is as its header says it was derived,
// so that each entry can match a password as the check folds it.
func TestCommonPasswordsFile(t *testing.T) {
	b, err := os.ReadFile("commonpasswords.txt")
	if err != nil {
		t.Fatal(err)
	}
	var entries []string
	for line := range strings.Lines(string(b)) {
		if p := strings.TrimSuffix(line, "\n"); !strings.HasPrefix(p, "#") {
			entries = append(entries, p)
		}
	}
	if len(entries) < 3000 {
		t.Errorf("the list has %d entries, want a few thousand", len(entries))
	}
	if !slices.IsSorted(entries) || len(slices.Compact(slices.Clone(entries))) != len(entries) {
		t.Error("the list is not sorted, or holds an entry twice")
	}
	for _, p := range entries {
		if len(p) < 8 || p != strings.ToLower(p) || strings.TrimSpace(p) != p {
			t.Errorf("entry %q is shorter than 8, not lower-case, or has spaces", p)
		}
	}
}
