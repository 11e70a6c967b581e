package accounts_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/scorehub/scorehub/tokens/accounts"
)

// TestCreateUserRefusesLookalikeNames is an admin creating a user whose
// name passes for an existing one (stored alice and aion, root of the users file)
// or hides characters: a collision is a 409 naming the existing user, any
// other rule a 400 at /name naming the rule.
func TestCreateUserRefusesLookalikeNames(t *testing.T) {
	f := newAccountsFixture(t, nil)
	f.createUser(t, "alice")
	f.createUser(t, "aion")
	for _, tc := range []struct {
		name, user string
		err        error
		status     int
		typ        string
		pointer    string
		phrase     string
	}{
		{"capitalised", "Alice", accounts.ErrExists, 409, "already_exists", "", `user name "Alice" is taken: it reads as the name of the existing user "alice"`},
		{"capitals, of a file user", "ROOT", accounts.ErrExists, 409, "already_exists", "", `the existing user "root"`},
		{"full-width letters", "ａｌｉｃｅ", accounts.ErrExists, 409, "already_exists", "", `the existing user "alice"`},
		{"Cyrillic look-alikes alone", "аӏісе", accounts.ErrExists, 409, "already_exists", "", `the existing user "alice"`},
		{"Cyrillic look-alikes of a file user", "гоот", accounts.ErrExists, 409, "already_exists", "", `the existing user "root"`},
		{"Cyrillic capitals", "АLІСЕ", accounts.ErrInvalid, 400, "validation_failed", "/name", "mixes the scripts Cyrillic and Latin"},
		{"Greek capitals", "ΑΙΟΝ", accounts.ErrExists, 409, "already_exists", "", `the existing user "aion"`},
		{"a Cyrillic first letter", "\u0430lice", accounts.ErrInvalid, 400, "validation_failed", "/name", "mixes the scripts Cyrillic and Latin"},
		{"a Greek letter among Latin", "r\u03bfot", accounts.ErrInvalid, 400, "validation_failed", "/name", "mixes the scripts Greek and Latin"},
		{"a leading space", " alice", accounts.ErrInvalid, 400, "validation_failed", "/name", "white space or an invisible character (U+0020, character 1)"},
		{"a trailing space", "alice ", accounts.ErrInvalid, 400, "validation_failed", "/name", "(U+0020, character 6)"},
		{"a space inside", "ali ce", accounts.ErrInvalid, 400, "validation_failed", "/name", "white space"},
		{"a no-break space", "ali\u00a0ce", accounts.ErrInvalid, 400, "validation_failed", "/name", "U+00A0"},
		{"a zero-width space", "ali\u200bce", accounts.ErrInvalid, 400, "validation_failed", "/name", "invisible character (U+200B"},
		{"a soft hyphen", "ali\u00adce", accounts.ErrInvalid, 400, "validation_failed", "/name", "U+00AD"},
		{"a word joiner", "ali\u2060ce", accounts.ErrInvalid, 400, "validation_failed", "/name", "U+2060"},
		{"a zero-width joiner", "ali\u200dce", accounts.ErrInvalid, 400, "validation_failed", "/name", "U+200D"},
		{"a byte order mark", "\ufeffalice", accounts.ErrInvalid, 400, "validation_failed", "/name", "U+FEFF"},
		{"a symbol", "alice\u2603", accounts.ErrInvalid, 400, "validation_failed", "/name", "RFC 8265"},
		{"a compatibility ligature", "\ufb01sh", accounts.ErrInvalid, 400, "validation_failed", "/name", "RFC 8265"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.a.CreateUser(context.Background(), accounts.NewUser{Name: tc.user, Password: goodPassword})
			wantRefusal(t, err, tc.err, tc.status, tc.typ, tc.pointer, tc.phrase, "")
		})
	}
	if names := accountNames(f.a.Users()); !slices.Equal(names, []string{"aion", "alice", "root"}) {
		t.Errorf("after refused creates the users are %q, want [aion alice root]", names)
	}
}

// TestCreateUserAcceptsNamesOfOneScript: the rules refuse look-alikes, not
// names outside ASCII.
func TestCreateUserAcceptsNamesOfOneScript(t *testing.T) {
	f := newAccountsFixture(t, nil)
	for _, name := range []string{"Ann", "josé", "ivan.petrov", "иван", "Ωμέγα", "張偉", "山田taro", "o'brien-2", "ann_b"} {
		if _, err := f.a.CreateUser(context.Background(), accounts.NewUser{Name: name, Password: goodPassword}); err != nil {
			t.Errorf("%q was refused: %v", name, err)
		}
	}
}

// TestLookalikeNamesCreatedAtOnce: of names that read alike, created at
// once through two Books on one store (two replicas), exactly one is
// stored, whatever the order.
func TestLookalikeNamesCreatedAtOnce(t *testing.T) {
	store := accounts.NewMemoryStore()
	var books []*accounts.Book
	for range 2 {
		b, err := accounts.OpenCheap(context.Background(), accounts.Config{Store: store, BcryptCost: 4})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		books = append(books, b)
	}
	names := []string{"bob", "Bob", "BOB", "ｂｏｂ", "ВОВ", "bOb"}
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() {
			_, errs[i] = books[i%2].CreateUser(context.Background(), accounts.NewUser{Name: name, Password: goodPassword})
		})
	}
	wg.Wait()
	created := 0
	for i, err := range errs {
		switch {
		case err == nil:
			created++
		case !errors.Is(err, accounts.ErrExists):
			t.Errorf("creating %q: %v, want ErrExists", names[i], err)
		}
	}
	st, err := store.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if created != 1 || len(st.Users) != 1 {
		t.Errorf("%d creates succeeded and the store holds %d users, want 1 and 1: %v", created, len(st.Users), errs)
	}
}

// TestStoredLookalikeNamesKeepWorking: users stored before the rules under
// names that read alike each keep their account; only a new name is
// compared with them.
func TestStoredLookalikeNamesKeepWorking(t *testing.T) {
	store := accounts.NewMemoryStore()
	ctx := context.Background()
	var users []accounts.StoredUser
	for _, name := range []string{"Ann", "ann", "ann "} {
		users = append(users, accounts.StoredUser{Name: name, PasswordHash: hash(t, name+" password"), CredentialVersion: "v-" + name,
			Revision: 1, CreatedAt: t0, UpdatedAt: t0})
	}
	if err := store.Commit(ctx, 0, &accounts.State{Seq: 1, Users: users, Change: &accounts.Change{User: &users[0]}}); err != nil {
		t.Fatal(err)
	}
	b, err := accounts.OpenCheap(ctx, accounts.Config{Store: store, BcryptCost: 4, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, u := range users {
		if p, err := b.Authenticate(ctx, u.Name, u.Name+" password"); err != nil || p.Subject != u.Name {
			t.Errorf("%q logs in as %q, %v", u.Name, p.Subject, err)
		}
	}
	admin := true
	if got, err := b.UpdateUser(ctx, "ann ", 0, accounts.UserUpdate{Admin: &admin}); err != nil || !got.Admin {
		t.Errorf("updating %q: %+v, %v", "ann ", got, err)
	}
	_, err = b.CreateUser(ctx, accounts.NewUser{Name: "ANN", Password: goodPassword})
	wantRefusal(t, err, accounts.ErrExists, 409, "already_exists", "", `the existing user "Ann"`, "")
}
