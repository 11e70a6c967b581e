package tokens

import (
	"context"

	"github.com/scorehub/scorehub/internal/image"
)

// accountImage is what MemoryAccountStore and FileAccountStore share: the
// image of the AccountState they keep.
type accountImage struct {
	img interface {
		image.Store[AccountState]
		Close() error
	}
}

// accountConfig is how the stores of this package keep an AccountState.
var accountConfig = image.MemConfig[AccountState]{
	Seq:    func(st *AccountState) uint64 { return st.Seq },
	Closed: ErrAccountsClosed,
}

// Load implements [AccountStore].
func (s *accountImage) Load(ctx context.Context) (*AccountState, error) { return s.img.Load(ctx) }

// Commit implements [AccountStore].
func (s *accountImage) Commit(ctx context.Context, base uint64, next *AccountState) error {
	return s.img.Commit(ctx, base, next)
}

// Close implements [AccountStore]. It waits for a commit in progress; a
// FileAccountStore then releases its directory for the next
// [OpenFileAccountStore]. Closing a closed store does nothing.
func (s *accountImage) Close() error { return s.img.Close() }

// MemoryAccountStore is an [AccountStore] that keeps users and API tokens
// in memory only. It is safe for concurrent use.
type MemoryAccountStore struct{ accountImage }

var _ AccountStore = (*MemoryAccountStore)(nil)

// NewMemoryAccountStore returns an empty store.
func NewMemoryAccountStore() *MemoryAccountStore {
	return &MemoryAccountStore{accountImage{image.NewMem(&AccountState{}, accountConfig)}}
}
