package image

import (
	"context"

	"github.com/scorehub/scorehub/problem"
)

// Store keeps one state image of type T: it loads the state and commits
// the next one. It applies no rule of its own: the owner of the state
// checks every rule of a write on the state it holds, and asks the store to
// commit the result, so a store is only persistence and one conformance
// suite (package imagetest) proves any implementation.
//
// A state counts the commits that made it: its sequence number, which the
// owner's type keeps (a Seq field or method); a new store's state is at 0.
// A commit is conditional, so that a store several writers share (several
// server replicas on one database) stays consistent without trusting any
// writer's view: it names the sequence number of the state it was decided
// on (base), and next is at base+1. A store that keeps one image compares
// base with the number it holds; a database does the same in the
// transaction that writes (UPDATE of a sequence row WHERE seq = base).
// Either way a commit whose base is no longer the stored state's fails with
// [ErrStale] and changes nothing; the writer loads the store again and
// decides afresh.
//
// Implementations must be safe for concurrent use. Commit returns only
// once next is committed (durable, for a durable store); a failed Commit
// leaves the stored state as it was, or, where a failure after the point
// of no return cannot be ruled out, as it would be after the commit. A
// state, once loaded or committed, is never changed: the caller must not
// change what Load returns, and the store must not change what Commit is
// given.
type Store[T any] interface {
	// Load returns the state as last committed.
	Load(ctx context.Context) (*T, error)

	// Commit makes next the stored state if the stored state's sequence
	// number is still base and next's is base+1, and fails with
	// [ErrStale] otherwise.
	Commit(ctx context.Context, base uint64, next *T) error
}

// Notifier is a [Store] that other writers share. A [Writer] over a
// Notifier subscribes to it and publishes every newer state it is given,
// so that what other writers commit (another replica's write) reaches this
// process without waiting for a write of its own.
type Notifier[T any] interface {
	Store[T]
	// Subscribe calls fn with the stored state after changes committed by
	// other writers. fn must be quick and must not call the store. A state
	// no newer than the last one published is ignored, so a store may also
	// report its own writers' commits, or report a change twice. Once
	// cancel has returned, fn is not called again; fn must not call
	// cancel.
	Subscribe(fn func(*T)) (cancel func())
}

// ErrStale reports a commit whose base is no longer the stored state's
// sequence number: another writer committed in between. A [Writer] loads
// the store again and decides the write afresh; it returns ErrStale only
// when the store keeps changing under it. It is the one such error of
// every store, whatever its state; packages registry and tokens name it
// for their hosts (registry.ErrStale, tokens.ErrStale).
var ErrStale = &problem.Error{Code: problem.Conflict, Text: "image: store changed by another writer",
	Message: "the stored state kept changing while this request was applied; retry"}
