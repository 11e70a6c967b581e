package accounts

import (
	"context"

	"github.com/scorehub/scorehub/internal/image"
)

// accountImage is what MemoryStore and FileStore share: the
// image of the State they keep.
type accountImage struct {
	img interface {
		image.Store[State]
		Close() error
	}
}

// accountConfig is how the stores of this package keep an State.
var accountConfig = image.MemConfig[State]{
	Seq:    func(st *State) uint64 { return st.Seq },
	Closed: ErrClosed,
}

// Load implements [Store].
func (s *accountImage) Load(ctx context.Context) (*State, error) { return s.img.Load(ctx) }

// Commit implements [Store].
func (s *accountImage) Commit(ctx context.Context, base uint64, next *State) error {
	return s.img.Commit(ctx, base, next)
}

// Close implements [Store]. It waits for a commit in progress; a
// FileStore then releases its directory for the next
// [OpenFileStore]. Closing a closed store does nothing.
func (s *accountImage) Close() error { return s.img.Close() }

// MemoryStore is a [Store] that keeps users and API tokens
// in memory only. It is safe for concurrent use.
type MemoryStore struct{ accountImage }

var _ Store = (*MemoryStore)(nil)

// NewMemoryStore returns an empty store.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{accountImage{image.NewMem(&State{}, accountConfig)}}
}
