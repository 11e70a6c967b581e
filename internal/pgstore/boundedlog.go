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

// pruneIfDue applies the bounds of the log named what with prune when
// they are due at now: on the first Append, and then once interval of the
// store's clock has passed. Only one call at a time applies them; the
// others go on. A prune that fails is logged and tried again on the next
// Append.
func (s *boundedLog) pruneIfDue(ctx context.Context, now time.Time, interval time.Duration, what string, prune func(context.Context, time.Time) error) {
	s.mu.Lock()
	due := s.due || now.Sub(s.pruned) >= interval
	if due {
		s.pruned, s.due = now, false
	}
	s.mu.Unlock()
	if !due {
		return
	}
	if err := prune(ctx, now); err != nil {
		s.db.log.Warn("postgres: apply the bounds of the "+what+"; tried again on the next append", "err", s.err(err))
		s.mu.Lock()
		s.due = true
		s.mu.Unlock()
	}
}
