package registry

import (
	"errors"
	"fmt"
)

// Sentinel errors. Functions in this package wrap them with detail; match them
// with [errors.Is].
var (
	// ErrNotFound reports that a named record or process does not exist.
	ErrNotFound = errors.New("registry: not found")
	// ErrExists reports a create of a record or process name already taken.
	ErrExists = errors.New("registry: already exists")
	// ErrConflict reports a write that named a revision other than the
	// current one. The error is a [*ConflictError].
	ErrConflict = errors.New("registry: revision conflict")
	// ErrInUse reports a delete of a record that others still refer to, or of
	// a built-in record (the DEFAULT group and queue).
	ErrInUse = errors.New("registry: in use")
	// ErrInvalid reports a record that breaks a domain rule. The error is an
	// [*InvalidError] naming the field.
	ErrInvalid = errors.New("registry: invalid")
	// ErrDisabled reports a lookup of an endpoint whose deployment is
	// disabled.
	ErrDisabled = errors.New("registry: deployment disabled")
	// ErrUnavailable reports an endpoint whose process is not in the catalog
	// (for example, a deployment stored by a build that registered it).
	ErrUnavailable = errors.New("registry: process unavailable")
	// ErrClosed reports use of a closed store.
	ErrClosed = errors.New("registry: store closed")
)

// ConflictError is returned by a write whose revision is stale. It matches
// [ErrConflict].
type ConflictError struct {
	Kind    string // "group", "deployment" or "queue"
	Name    string // the record's name; "group/path" for deployments
	Want    uint64 // the revision the writer named
	Current uint64 // the revision stored; 0 when the record does not exist
}

func (e *ConflictError) Error() string {
	if e.Current == 0 {
		return fmt.Sprintf("registry: %s %q does not exist (revision %d named)", e.Kind, e.Name, e.Want)
	}
	if e.Want == 0 {
		return fmt.Sprintf("registry: %s %q already exists at revision %d", e.Kind, e.Name, e.Current)
	}
	return fmt.Sprintf("registry: %s %q is at revision %d, not %d", e.Kind, e.Name, e.Current, e.Want)
}

// Is reports whether target is [ErrConflict].
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// InvalidError is a record that breaks a domain rule. Pointer is the JSON
// pointer of the offending field within the record as the management API
// shows it (for example "/endpoints/0/queue"). It matches [ErrInvalid].
type InvalidError struct {
	Pointer string
	Message string
}

func (e *InvalidError) Error() string {
	if e.Pointer == "" {
		return "registry: " + e.Message
	}
	return fmt.Sprintf("registry: %s: %s", e.Pointer, e.Message)
}

// Is reports whether target is [ErrInvalid].
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

func invalid(pointer, format string, args ...any) error {
	return &InvalidError{Pointer: pointer, Message: fmt.Sprintf(format, args...)}
}
