package tokens

import (
	"context"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// What the external tests read of a value's configuration, which hosts
// have no need to read back.

func (i *Issuer) Validity() time.Duration { return i.validity }

func (s *KeySet) Retention() time.Duration { return s.retention }

func (s *StaticUsers) Len() int { return len(s.users) }

// NewCheapAccounts is NewAccounts allowing bcrypt costs down to
// bcrypt.MinCost, so that tests creating many users run fast.
func NewCheapAccounts(ctx context.Context, cfg AccountsConfig) (*Accounts, error) {
	return newAccounts(ctx, cfg, bcrypt.MinCost)
}

// StaticVersion is the credential version StaticUsers gives u.
func StaticVersion(u User) string { return staticVersion(u) }

// NewFileKeyStore is the store LoadOrCreateKeySet keeps the file at path
// in, for a path where no file is yet.
func NewFileKeyStore(path string) KeyStore {
	s, err := openFileKeyStore(path)
	if err != nil {
		panic(err) // nothing is read: there is no file
	}
	return s
}
