package accounts

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/crypto/bcrypt"

	"github.com/scorehub/scorehub/tokens"
)

// User is one account of [StaticUsers].
type User struct {
	// Name is the user name, the subject of the user's tokens: non-empty,
	// at most 256 bytes, no colon and no control characters.
	Name string
	// PasswordHash is a bcrypt hash of the password ($2a$, $2b$ or $2y$)
	// of a cost up to [MaxBcryptCost].
	PasswordHash []byte
	// Admin users may change the service.
	Admin bool
	// Groups are the user groups the user is in.
	Groups []string
}

// maxPassword is the longest password bcrypt reads; it ignores the rest, so
// longer passwords are refused rather than truncated.
const maxPassword = 72

// StaticUsers authenticates against a fixed set of users, from code or from
// an htpasswd file ([LoadHTPasswd]). An unknown name costs a bcrypt
// comparison against a dummy hash of the cost most users have (the higher
// on a tie), so it takes as long as a wrong password for them. A user of
// another cost answers in another time than an unknown name, which tells
// that the user exists: give every user the same cost. Its principals carry
// the user's [tokens.CredentialVersion], and it is a [tokens.CredentialSource] that knows
// them. StaticUsers is safe for concurrent use.
type StaticUsers struct {
	users map[string]staticUser
	dummy []byte
}

// staticUser is a User with its credential version, computed once.
type staticUser struct {
	User
	version string
}

var _ tokens.Authenticator = (*StaticUsers)(nil)

// NewStaticUsers checks users (names unique and well formed, hashes bcrypt)
// and returns a StaticUsers holding copies of them. At least one user is
// required.
func NewStaticUsers(users ...User) (*StaticUsers, error) {
	if len(users) == 0 {
		return nil, errors.New("tokens: no users")
	}
	s := &StaticUsers{users: make(map[string]staticUser, len(users))}
	costs := map[int]int{} // users by cost
	for _, u := range users {
		if err := checkUserName(u.Name); err != nil {
			return nil, err
		}
		if _, dup := s.users[u.Name]; dup {
			return nil, fmt.Errorf("tokens: user %q appears twice", u.Name)
		}
		cost, err := bcryptCost(u.PasswordHash)
		if err != nil {
			return nil, fmt.Errorf("tokens: user %q: %w", u.Name, err)
		}
		costs[cost]++
		for _, g := range u.Groups {
			if err := tokens.CheckName("group", g); err != nil {
				return nil, fmt.Errorf("tokens: user %q: %w", u.Name, err)
			}
		}
		u.PasswordHash = slices.Clone(u.PasswordHash)
		u.Groups = slices.Clone(u.Groups)
		s.users[u.Name] = staticUser{User: u, version: staticVersion(u)}
	}
	dummy, err := bcrypt.GenerateFromPassword([]byte(rand.Text()), commonest(costs))
	if err != nil {
		return nil, fmt.Errorf("tokens: dummy hash: %w", err)
	}
	s.dummy = dummy
	return s, nil
}

// staticVersion is the credential version of a user of [StaticUsers]: of
// the password hash, the admin flag and the groups, so that a change of
// any of them in a users file ends the tokens issued before it. Parts are
// separated by a NUL, which none of them holds.
func staticVersion(u User) string {
	b := append([]byte(nil), u.PasswordHash...)
	if u.Admin {
		b = append(b, 0, 'a')
	}
	for _, g := range u.Groups {
		b = append(append(b, 0, 'g'), g...)
	}
	return tokens.CredentialVersion(b)
}

// commonest returns the key of counts with the highest count, the highest
// key on a tie.
func commonest(counts map[int]int) int {
	best := 0
	for k, n := range counts {
		if n > counts[best] || n == counts[best] && k > best {
			best = k
		}
	}
	return best
}

// MaxBcryptCost is the highest bcrypt cost accepted, as htpasswd's own
// limit. Every step doubles the time each login takes; beyond it a single
// password check would take minutes, or days at bcrypt's own maximum of 31.
const MaxBcryptCost = 17

// bcryptCost returns the cost of a bcrypt hash, refusing anything else:
// another format, a cost outside bcrypt.MinCost to [MaxBcryptCost], or salt
// and hash that are not bcrypt's base64, which no password would ever match.
func bcryptCost(hash []byte) (int, error) {
	const hashLen = 60 // "$2b$" + 2 cost digits + "$" + 53 of salt and hash
	h := string(hash)
	if len(h) != hashLen || !(strings.HasPrefix(h, "$2a$") || strings.HasPrefix(h, "$2b$") || strings.HasPrefix(h, "$2y$")) {
		return 0, errors.New("password hash is not bcrypt ($2a$, $2b$ or $2y$)")
	}
	cost, err := bcrypt.Cost(hash)
	if err != nil {
		return 0, fmt.Errorf("bad bcrypt hash: %w", err)
	}
	if cost > MaxBcryptCost {
		return 0, fmt.Errorf("bcrypt cost %d is above %d", cost, MaxBcryptCost)
	}
	if !isDigit(h[4]) || !isDigit(h[5]) || h[6] != '$' || strings.IndexFunc(h[7:], notBcryptBase64) >= 0 {
		return 0, errors.New("bad bcrypt hash: the cost is not two digits, or salt and hash are not bcrypt's base64")
	}
	return cost, nil
}

// isDigit reports whether c is an ASCII digit. bcrypt reads the cost with
// strconv.Atoi, which would also take "+9".
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// notBcryptBase64 reports whether r is outside bcrypt's base64 alphabet.
func notBcryptBase64(r rune) bool {
	return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '.' || r == '/')
}

func checkUserName(name string) error {
	if err := tokens.CheckName("user name", name); err != nil {
		return err
	}
	if strings.Contains(name, ":") {
		return fmt.Errorf("tokens: user name %q has a colon", name)
	}
	return nil
}

// Authenticate returns the principal of the user name if password is
// theirs, and an error matching [tokens.ErrBadCredentials] otherwise.
func (s *StaticUsers) Authenticate(ctx context.Context, name, password string) (tokens.Principal, error) {
	if err := ctx.Err(); err != nil {
		return tokens.Principal{}, err
	}
	u, known := s.users[name]
	hash := u.PasswordHash
	if !known {
		hash = s.dummy
	}
	// The comparison runs whatever else is wrong, so every failure costs
	// the same.
	match := bcrypt.CompareHashAndPassword(hash, []byte(password)) == nil
	if !known || !match || len(password) > maxPassword {
		return tokens.Principal{}, tokens.ErrBadCredentials
	}
	return tokens.Principal{Subject: u.Name, Admin: u.Admin, Groups: slices.Clone(u.Groups), CredentialVersion: u.version}, nil
}

// HashPassword returns the bcrypt hash of password at cost (zero means
// bcrypt.DefaultCost, at most [MaxBcryptCost]), for building [User] values
// in code. Passwords longer
// than 72 bytes are refused: bcrypt would ignore the rest. It applies no
// other rule: check a password a person chose with [CheckNewPassword]
// first, as the Book does, since the hash no longer tells how weak it is.
func HashPassword(password string, cost int) ([]byte, error) {
	if cost == 0 {
		cost = bcrypt.DefaultCost
	}
	if cost < bcrypt.MinCost || cost > MaxBcryptCost {
		return nil, fmt.Errorf("tokens: bcrypt cost %d is outside %d to %d", cost, bcrypt.MinCost, MaxBcryptCost)
	}
	h, err := bcrypt.GenerateFromPassword([]byte(password), cost)
	if err != nil {
		return nil, fmt.Errorf("tokens: hash password: %w", err)
	}
	return h, nil
}

var _ ReadOnlyUsers = (*StaticUsers)(nil)

// Principals returns every user as [StaticUsers.Authenticate] would,
// sorted by name.
func (s *StaticUsers) Principals() []tokens.Principal {
	out := make([]tokens.Principal, 0, len(s.users))
	for _, u := range s.users {
		out = append(out, tokens.Principal{Subject: u.Name, Admin: u.Admin, Groups: slices.Clone(u.Groups), CredentialVersion: u.version})
	}
	slices.SortFunc(out, func(a, b tokens.Principal) int { return strings.Compare(a.Subject, b.Subject) })
	return out
}

var _ tokens.CredentialSource = (*StaticUsers)(nil)

// CredentialVersion returns the credential version of the user subject (of
// their password hash, admin flag and groups), and whether there is such a
// user. It never fails.
func (s *StaticUsers) CredentialVersion(_ context.Context, subject string) (string, bool, error) {
	u, ok := s.users[subject]
	if !ok {
		return "", false, nil
	}
	return u.version, true, nil
}
