package accounts_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/bcrypt"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/tokens"
	"github.com/scorehub/scorehub/tokens/accounts"
)

const goodPassword = "correct horse battery"

// readOnlyUsers are users of a file that a test can change, as a host that
// reads its users file again does.
type readOnlyUsers struct {
	cur atomic.Pointer[accounts.StaticUsers]
}

func newReadOnlyUsers(t testing.TB, users ...accounts.User) *readOnlyUsers {
	r := &readOnlyUsers{}
	r.set(t, users...)
	return r
}

func (r *readOnlyUsers) set(t testing.TB, users ...accounts.User) {
	t.Helper()
	s, err := accounts.NewStaticUsers(users...)
	if err != nil {
		t.Fatal(err)
	}
	r.cur.Store(s)
}

func (r *readOnlyUsers) Authenticate(ctx context.Context, name, password string) (tokens.Principal, error) {
	return r.cur.Load().Authenticate(ctx, name, password)
}

func (r *readOnlyUsers) CredentialVersion(ctx context.Context, subject string) (string, bool, error) {
	return r.cur.Load().CredentialVersion(ctx, subject)
}

func (r *readOnlyUsers) Principals() []tokens.Principal { return r.cur.Load().Principals() }

// failingStore is a store whose commits fail while fail is set.
type failingStore struct {
	accounts.Store
	fail atomic.Bool
}

var errDiskFull = errors.New("disk full")

func (s *failingStore) Commit(ctx context.Context, base uint64, next *accounts.State) error {
	if s.fail.Load() {
		return errDiskFull
	}
	return s.Store.Commit(ctx, base, next)
}

// accountsFixture is a Book over a memory store, with a file user
// "root", a settable clock and a captured log.
type accountsFixture struct {
	a      *accounts.Book
	store  *failingStore
	files  *readOnlyUsers
	clock  *testutil.Clock
	log    *testutil.LockedBuffer
	config accounts.Config
}

func newAccountsFixture(t testing.TB, change func(*accounts.Config)) *accountsFixture {
	t.Helper()
	f := &accountsFixture{
		store: &failingStore{Store: accounts.NewMemoryStore()},
		files: newReadOnlyUsers(t, accounts.User{Name: "root", PasswordHash: hash(t, "root password!"), Admin: true, Groups: []string{"admin"}}),
		clock: newClock(),
		log:   &testutil.LockedBuffer{},
	}
	f.config = accounts.Config{Store: f.store, ReadOnly: f.files, BcryptCost: bcrypt.MinCost, Now: f.clock.Now,
		Logger: slog.New(slog.NewTextHandler(f.log, nil))}
	if change != nil {
		change(&f.config)
	}
	a, err := accounts.OpenCheap(context.Background(), f.config)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	f.a = a
	return f
}

func (f *accountsFixture) createUser(t testing.TB, name string, groups ...string) accounts.Account {
	t.Helper()
	acc, err := f.a.CreateUser(context.Background(), accounts.NewUser{Name: name, Password: goodPassword, Groups: groups})
	if err != nil {
		t.Fatal(err)
	}
	return acc
}

func (f *accountsFixture) createToken(t testing.TB, owner string) (accounts.APIToken, string) {
	t.Helper()
	tok, secret, err := f.a.CreateAPIToken(context.Background(), accounts.NewAPIToken{Name: "ci of " + owner, Owner: owner})
	if err != nil {
		t.Fatal(err)
	}
	return tok, secret
}

// wantRefusal checks that err is what an HTTP client would be told: the
// status, type code and pointer, and a message holding the phrase and
// never the secret.
func wantRefusal(t *testing.T, err error, sentinel error, status int, typ, pointer, phrase, secret string) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("error %v does not match %v", err, sentinel)
	}
	e := httperr.From(err)
	if e.Status != status || string(e.Code) != typ || e.Pointer != pointer {
		t.Errorf("client is told %d %s at %q, want %d %s at %q (%v)", e.Status, string(e.Code), e.Pointer, status, typ, pointer, err)
	}
	if !strings.Contains(e.Message, phrase) {
		t.Errorf("client message %q does not say %q", e.Message, phrase)
	}
	if secret != "" && (strings.Contains(e.Message, secret) || strings.Contains(err.Error(), secret)) {
		t.Errorf("error %q repeats the secret", err)
	}
}

func TestNewAccountsRefusesBadConfig(t *testing.T) {
	store := accounts.NewMemoryStore()
	for name, cfg := range map[string]accounts.Config{
		"no store":                  {},
		"bcrypt cost below 10":      {Store: store, BcryptCost: 9},
		"bcrypt cost above maximum": {Store: store, BcryptCost: accounts.MaxBcryptCost + 1},
		"negative password length":  {Store: store, MinPasswordLength: -1},
		"password length beyond 72": {Store: store, MinPasswordLength: 73},
		"negative token limit":      {Store: store, MaxAPITokensPerUser: -1},
		"negative last-used period": {Store: store, LastUsedInterval: -time.Second},
	} {
		t.Run(name, func(t *testing.T) {
			if a, err := accounts.Open(context.Background(), cfg); err == nil {
				a.Close()
				t.Error("NewAccounts accepted the config")
			}
		})
	}
}

func TestCreateUserRefuses(t *testing.T) {
	f := newAccountsFixture(t, nil)
	f.createUser(t, "alice")
	manyGroups := make([]string, 1001)
	for i := range manyGroups {
		manyGroups[i] = fmt.Sprintf("g%d", i)
	}
	for _, tc := range []struct {
		name    string
		user    accounts.NewUser
		err     error
		status  int
		typ     string
		pointer string
		phrase  string
	}{
		{"empty name", accounts.NewUser{Password: goodPassword}, accounts.ErrInvalid, 400, "validation_failed", "/name", "empty user name"},
		{"name with a colon", accounts.NewUser{Name: "a:b", Password: goodPassword}, accounts.ErrInvalid, 400, "validation_failed", "/name", "colon"},
		{"name with a control character", accounts.NewUser{Name: "a\nb", Password: goodPassword}, accounts.ErrInvalid, 400, "validation_failed", "/name", "control character"},
		{"name too long", accounts.NewUser{Name: strings.Repeat("a", 257), Password: goodPassword}, accounts.ErrInvalid, 400, "validation_failed", "/name", "longer than 256"},
		{"short password", accounts.NewUser{Name: "bob", Password: "short pass"}, accounts.ErrInvalid, 400, "validation_failed", "/password", "at least 12"},
		{"password beyond 72 bytes", accounts.NewUser{Name: "bob", Password: strings.Repeat("p", 73)}, accounts.ErrInvalid, 400, "validation_failed", "/password", "72 bytes"},
		{"bad group", accounts.NewUser{Name: "bob", Password: goodPassword, Groups: []string{"ok", ""}}, accounts.ErrInvalid, 400, "validation_failed", "/groups/1", "empty group"},
		{"group twice", accounts.NewUser{Name: "bob", Password: goodPassword, Groups: []string{"a", "b", "a"}}, accounts.ErrInvalid, 400, "validation_failed", "/groups/2", "twice"},
		{"too many groups", accounts.NewUser{Name: "bob", Password: goodPassword, Groups: manyGroups}, accounts.ErrInvalid, 400, "validation_failed", "/groups", "1000"},
		{"stored name", accounts.NewUser{Name: "alice", Password: goodPassword}, accounts.ErrExists, 409, "already_exists", "", `user "alice" already exists`},
		{"name of the users file", accounts.NewUser{Name: "root", Password: goodPassword}, accounts.ErrExists, 409, "already_exists", "", `user "root" already exists`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.a.CreateUser(context.Background(), tc.user)
			wantRefusal(t, err, tc.err, tc.status, tc.typ, tc.pointer, tc.phrase, tc.user.Password)
		})
	}
	if names := accountNames(f.a.Users()); !slices.Equal(names, []string{"alice", "root"}) {
		t.Errorf("after refused creates the users are %v, want [alice root]", names)
	}
}

func accountNames(accs []accounts.Account) []string {
	var out []string
	for _, a := range accs {
		out = append(out, a.Name)
	}
	return out
}

func TestMinPasswordLengthCountsCharacters(t *testing.T) {
	f := newAccountsFixture(t, func(c *accounts.Config) { c.MinPasswordLength = 4 })
	if _, err := f.a.CreateUser(context.Background(), accounts.NewUser{Name: "bob", Password: "äöü"}); !errors.Is(err, accounts.ErrInvalid) {
		t.Errorf("a password of 3 characters (6 bytes) was not refused under a minimum of 4: %v", err)
	}
	if _, err := f.a.CreateUser(context.Background(), accounts.NewUser{Name: "bob", Password: "äöüß"}); err != nil {
		t.Errorf("a password of 4 characters was refused: %v", err)
	}
}

func TestUsersListsStoredAndFileUsers(t *testing.T) {
	f := newAccountsFixture(t, nil)
	created, err := f.a.CreateUser(context.Background(), accounts.NewUser{Name: "alice", Password: goodPassword, Admin: true, Groups: []string{"analysts"}})
	if err != nil {
		t.Fatal(err)
	}
	f.createUser(t, "zed")
	want := []accounts.Account{
		{Name: "alice", Admin: true, Groups: []string{"analysts"}, Source: accounts.SourceAPI, Revision: 1, CreatedAt: t0, UpdatedAt: t0},
		{Name: "root", Admin: true, Groups: []string{"admin"}, Source: accounts.SourceFile},
		{Name: "zed", Source: accounts.SourceAPI, Revision: 1, CreatedAt: t0, UpdatedAt: t0},
	}
	if diff := cmp.Diff(want, f.a.Users()); diff != "" {
		t.Errorf("Users (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want[0], created); diff != "" {
		t.Errorf("CreateUser returned (-want +got):\n%s", diff)
	}
	for _, w := range want {
		if got, ok := f.a.User(w.Name); !ok || !cmp.Equal(got, w) {
			t.Errorf("User(%q) = %+v, %v; want %+v", w.Name, got, ok, w)
		}
	}
	if _, ok := f.a.User("nobody"); ok {
		t.Error("User of an unknown name reports one")
	}
}

func TestUpdateAndDeleteUserRefuse(t *testing.T) {
	f := newAccountsFixture(t, nil)
	f.createUser(t, "alice")
	ctx := context.Background()
	short, bad := "short", []string{"a\x00"}
	for _, tc := range []struct {
		name       string
		user       string
		ifRevision uint64
		update     accounts.UserUpdate
		err        error
		status     int
		typ        string
		pointer    string
		phrase     string
	}{
		{"unknown user", "bob", 0, accounts.UserUpdate{}, accounts.ErrNotFound, 404, "not_found", "", `user "bob" does not exist`},
		{"user of the users file", "root", 0, accounts.UserUpdate{}, accounts.ErrReadOnly, 409, "conflict", "", `user "root" is managed in the users file`},
		{"stale revision", "alice", 2, accounts.UserUpdate{}, accounts.ErrRevision, 412, "precondition_failed", "", `user "alice" is at revision 1, not 2`},
		{"short password", "alice", 0, accounts.UserUpdate{Password: &short}, accounts.ErrInvalid, 400, "validation_failed", "/password", "at least 12"},
		{"bad group", "alice", 0, accounts.UserUpdate{Groups: &bad}, accounts.ErrInvalid, 400, "validation_failed", "/groups/0", "control character"},
	} {
		t.Run("update "+tc.name, func(t *testing.T) {
			_, err := f.a.UpdateUser(ctx, tc.user, tc.ifRevision, tc.update)
			wantRefusal(t, err, tc.err, tc.status, tc.typ, tc.pointer, tc.phrase, short)
		})
		if tc.pointer != "" {
			continue
		}
		t.Run("delete "+tc.name, func(t *testing.T) {
			err := f.a.DeleteUser(ctx, tc.user, tc.ifRevision)
			wantRefusal(t, err, tc.err, tc.status, tc.typ, tc.pointer, tc.phrase, "")
		})
	}
	if got, _ := f.a.User("alice"); got.Revision != 1 {
		t.Errorf("after refused updates alice is at revision %d, want 1", got.Revision)
	}
}

func TestUpdateUser(t *testing.T) {
	f := newAccountsFixture(t, nil)
	ctx := context.Background()
	f.createUser(t, "alice", "analysts")
	f.clock.Advance(time.Minute)
	admin, groups := true, []string{"analysts", "risk"}
	got, err := f.a.UpdateUser(ctx, "alice", 1, accounts.UserUpdate{Admin: &admin, Groups: &groups})
	if err != nil {
		t.Fatal(err)
	}
	want := accounts.Account{Name: "alice", Admin: true, Groups: groups, Source: accounts.SourceAPI, Revision: 2,
		CreatedAt: t0, UpdatedAt: t0.Add(time.Minute)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("UpdateUser returned (-want +got):\n%s", diff)
	}
	// Revision 0 changes whatever the revision; nil fields stay.
	newPassword := "a new long password"
	got, err = f.a.UpdateUser(ctx, "alice", 0, accounts.UserUpdate{Password: &newPassword})
	if err != nil {
		t.Fatal(err)
	}
	if got.Revision != 3 || !got.Admin || !slices.Equal(got.Groups, groups) {
		t.Errorf("after a password change alice is %+v, want revision 3, admin and groups kept", got)
	}
	if _, err := f.a.Authenticate(ctx, "alice", goodPassword); !errors.Is(err, tokens.ErrBadCredentials) {
		t.Errorf("the old password still works: %v", err)
	}
	if _, err := f.a.Authenticate(ctx, "alice", newPassword); err != nil {
		t.Errorf("the new password does not work: %v", err)
	}
	if err := f.a.DeleteUser(ctx, "alice", 3); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.a.User("alice"); ok {
		t.Error("a deleted user is still listed")
	}
	if _, err := f.a.Authenticate(ctx, "alice", newPassword); !errors.Is(err, tokens.ErrBadCredentials) {
		t.Errorf("a deleted user still logs in: %v", err)
	}
}

func TestAuthenticate(t *testing.T) {
	f := newAccountsFixture(t, nil)
	ctx := context.Background()
	if _, err := f.a.CreateUser(ctx, accounts.NewUser{Name: "alice", Password: goodPassword, Admin: true, Groups: []string{"analysts"}}); err != nil {
		t.Fatal(err)
	}
	cv, _, _ := f.a.CredentialVersion(ctx, "alice")
	rootCV, _, _ := f.files.CredentialVersion(ctx, "root")
	for _, tc := range []struct {
		name, user, password string
		want                 tokens.Principal
	}{
		{"stored user", "alice", goodPassword, tokens.Principal{Subject: "alice", Admin: true, Groups: []string{"analysts"}, CredentialVersion: cv}},
		{"user of the users file", "root", "root password!", tokens.Principal{Subject: "root", Admin: true, Groups: []string{"admin"}, CredentialVersion: rootCV}},
		{"wrong password", "alice", "wrong password!", tokens.Principal{}},
		{"unknown user", "nobody", goodPassword, tokens.Principal{}},
		{"password of another user", "root", goodPassword, tokens.Principal{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := f.a.Authenticate(ctx, tc.user, tc.password)
			if tc.want.Subject == "" {
				if !errors.Is(err, tokens.ErrBadCredentials) {
					t.Errorf("Authenticate: %v, want ErrBadCredentials", err)
				}
				if err := f.a.CheckPassword(ctx, tc.user, tc.password); !errors.Is(err, tokens.ErrBadCredentials) {
					t.Errorf("CheckPassword: %v, want ErrBadCredentials", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, p); diff != "" {
				t.Errorf("principal (-want +got):\n%s", diff)
			}
			if err := f.a.CheckPassword(ctx, tc.user, tc.password); err != nil {
				t.Errorf("CheckPassword: %v", err)
			}
		})
	}
	if cv == "" || cv == rootCV {
		t.Errorf("stored user's credential version %q is empty or another user's", cv)
	}
}

func TestUnknownUserCostsABcryptComparison(t *testing.T) {
	f := newAccountsFixture(t, func(c *accounts.Config) { c.ReadOnly = nil; c.BcryptCost = 8 })
	ctx := context.Background()
	f.createUser(t, "alice")
	// fastest is the least work of a few refusals: the CPU time of the
	// thread that checks, which other programs on the machine do not
	// lengthen, where the system tells it; else the time it took, which
	// scheduling noise only lengthens.
	fastest := func(name string) time.Duration {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		best := time.Hour
		for range 5 {
			start, cpuStart := time.Now(), must(testutil.ThreadCPU())
			if _, err := f.a.Authenticate(ctx, name, "wrong password!"); !errors.Is(err, tokens.ErrBadCredentials) {
				t.Fatal(err)
			}
			took := time.Since(start)
			if cpu, ok := testutil.ThreadCPU(); ok {
				took = cpu - cpuStart
			}
			best = min(best, took)
		}
		return best
	}
	wrong, unknown := fastest("alice"), fastest("nobody")
	// A map miss that answered at once would tell a caller the name is
	// unknown.
	if unknown < wrong/2 {
		t.Errorf("an unknown user is refused in %v, a wrong password in %v: the difference tells which names exist", unknown, wrong)
	}
}

func TestCredentialVersionChangesWithTheUser(t *testing.T) {
	f := newAccountsFixture(t, nil)
	ctx := context.Background()
	f.createUser(t, "alice", "analysts")
	version := func() string {
		t.Helper()
		v, ok, err := f.a.CredentialVersion(ctx, "alice")
		if err != nil || !ok || v == "" {
			t.Fatalf("CredentialVersion(alice) = %q, %v, %v", v, ok, err)
		}
		return v
	}
	password, admin, notAdmin, groups, sameGroups := "another long password", true, false, []string{"risk"}, []string{"risk"}
	for _, tc := range []struct {
		name    string
		update  accounts.UserUpdate
		changes bool
	}{
		{"password", accounts.UserUpdate{Password: &password}, true},
		{"admin flag", accounts.UserUpdate{Admin: &admin}, true},
		{"groups", accounts.UserUpdate{Groups: &groups}, true},
		{"same groups", accounts.UserUpdate{Groups: &sameGroups}, false},
		{"admin flag back", accounts.UserUpdate{Admin: &notAdmin}, true},
		{"nothing", accounts.UserUpdate{}, false},
	} {
		before := version()
		if _, err := f.a.UpdateUser(ctx, "alice", 0, tc.update); err != nil {
			t.Fatal(err)
		}
		if after := version(); (after != before) != tc.changes {
			t.Errorf("changing %s: credential version %q → %q, want changed %v", tc.name, before, after, tc.changes)
		}
	}
	if err := f.a.DeleteUser(ctx, "alice", 0); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := f.a.CredentialVersion(ctx, "alice"); ok || err != nil {
		t.Errorf("a deleted user has credential version %q, %v, %v; want unknown", v, ok, err)
	}
	want, _, _ := f.files.CredentialVersion(ctx, "root")
	if v, ok, err := f.a.CredentialVersion(ctx, "root"); v != want || !ok || err != nil {
		t.Errorf("CredentialVersion(root) = %q, %v, %v; want the users file's %q", v, ok, err, want)
	}
}

// An idToken issued for a stored user's password is refused once the
// password changes, as a Verifier over a Book asks.
func TestAccountsRevokeIDTokens(t *testing.T) {
	f := newAccountsFixture(t, nil)
	ctx := context.Background()
	fx := newFixture(t)
	v, err := tokens.NewVerifier(tokens.VerifierConfig{Keys: fx.keys, Issuer: testIssuer, Audience: testAudience,
		Now: fx.clock.Now, Credentials: f.a})
	if err != nil {
		t.Fatal(err)
	}
	f.createUser(t, "alice")
	f.createUser(t, "bob")
	login := func(name string) string {
		p, err := f.a.Authenticate(ctx, name, goodPassword)
		if err != nil {
			t.Fatal(err)
		}
		return fx.issue(t, p)
	}
	aliceToken, bobToken := login("alice"), login("bob")
	if _, err := v.Verify(ctx, aliceToken); err != nil {
		t.Fatalf("a fresh token is refused: %v", err)
	}
	password := "a brand new password"
	if _, err := f.a.UpdateUser(ctx, "alice", 0, accounts.UserUpdate{Password: &password}); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(ctx, aliceToken); !errors.Is(err, tokens.ErrRevoked) {
		t.Errorf("a token of the old password: %v, want ErrRevoked", err)
	}
	if err := f.a.DeleteUser(ctx, "bob", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(ctx, bobToken); !errors.Is(err, tokens.ErrRevoked) {
		t.Errorf("a token of a deleted user: %v, want ErrRevoked", err)
	}
}

// must is v, whether or not ok: a ThreadCPU that cannot tell is checked
// at its second reading.
func must(v time.Duration, _ bool) time.Duration { return v }
