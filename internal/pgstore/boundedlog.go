package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scorehub/scorehub/registry"
)

// boundedLog is what the prediction log and the payload log of a DB
// share: the DB, whether the store was closed, and when its bounds were
// last applied. Its Close leaves the DB open; later calls fail with
// closedErr.
type boundedLog struct {
	db        *DB
	closedErr error // the store's ErrClosed
	closed    atomic.Bool

	mu     sync.Mutex // guards pruned and due
	pruned time.Time  // when, by the store's clock, the bounds were last applied
	due    bool       // the bounds are to be applied on the next Append
}

// check checks a call's context and that the store and its DB are open.
func (s *boundedLog) check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed.Load() || s.db.closed.Load() {
		return s.closedErr
	}
	return nil
}

// err is wrap for the store: a DB closed meanwhile is the store's
// ErrClosed.
func (s *boundedLog) err(err error) error {
	err = s.db.wrap(err)
	if errors.Is(err, registry.ErrClosed) {
		return fmt.Errorf("%w: %w", s.closedErr, err)
	}
	return err
}

// Close implements the store's Close: later calls fail with its
// ErrClosed. The DB stays open.
func (s *boundedLog) Close() error {
	s.closed.Store(true)
	return nil
}
