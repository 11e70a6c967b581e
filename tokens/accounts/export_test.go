package accounts

import (
	"context"

	"golang.org/x/crypto/bcrypt"
)

// What the external tests read of a value's configuration, which hosts
// have no need to read back.

func (s *StaticUsers) Len() int { return len(s.users) }

// NewCheapAccounts is Open allowing bcrypt costs down to
// bcrypt.MinCost, so that tests creating many users run fast.
func OpenCheap(ctx context.Context, cfg Config) (*Book, error) {
	return newAccounts(ctx, cfg, bcrypt.MinCost)
}

// StaticVersion is the credential version StaticUsers gives u.
func StaticVersion(u User) string { return staticVersion(u) }
