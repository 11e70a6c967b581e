package registry

import (
	"fmt"
)

// Sentinel errors. Functions in this package wrap them with detail; match them
// with [errors.Is]. Each also says what it is to an HTTP edge through an
// ErrorType method (a stable snake_case code), and the errors that wrap them
// carry a ClientMessage naming only what the caller sent, so no Go error
// chain reaches a client.
var (
	// ErrNotFound reports that a named record or process does not exist.
	ErrNotFound error = &sentinel{"not_found", "registry: not found"}
	// ErrExists reports a create of a record or process name already taken.
	ErrExists error = &sentinel{"already_exists", "registry: already exists"}
	// ErrConflict reports a write that named a revision other than the
	// current one. The error is a [*ConflictError].
	ErrConflict error = &sentinel{"precondition_failed", "registry: revision conflict"}
	// ErrInUse reports a delete of a record that others still refer to, or of
	// a built-in record (the DEFAULT group and queue).
	ErrInUse error = &sentinel{"in_use", "registry: in use"}
	// ErrInvalid reports a record that breaks a domain rule. The error is an
	// [*InvalidError] naming the field.
	ErrInvalid error = &sentinel{"invalid_reference", "registry: invalid"}
	// ErrDisabled reports a lookup of an endpoint whose deployment is
	// disabled.
	ErrDisabled error = &sentinel{"endpoint_disabled", "registry: deployment disabled"}
	// ErrUnavailable reports an endpoint whose process is not in the catalog
	// (for example, a deployment stored by a build that registered it).
	ErrUnavailable error = &sentinel{"process_unavailable", "registry: process unavailable"}
	// ErrClosed reports use of a closed store.
	ErrClosed error = &sentinel{"unavailable", "registry: store closed"}
)

// sentinel is the type of the package's sentinel errors: its text for the
// log and its type code for the HTTP edge.
type sentinel struct{ code, text string }

func (e *sentinel) Error() string     { return e.text }
func (e *sentinel) ErrorType() string { return e.code }

// detailed is a sentinel with a sentence about the record at fault: the
// sentence is what a client is told, the sentinel what callers match.
type detailed struct {
	kind error
	msg  string
}

// errorf returns an error matching kind whose client message is the
// formatted sentence.
func errorf(kind error, format string, args ...any) error {
	return &detailed{kind: kind, msg: fmt.Sprintf(format, args...)}
}

func (e *detailed) Error() string         { return "registry: " + e.msg }
func (e *detailed) Unwrap() error         { return e.kind }
func (e *detailed) ClientMessage() string { return e.msg }

// ConflictError is returned by a write whose revision is stale. It matches
// [ErrConflict], or [ErrExists] when a create finds the record stored.
type ConflictError struct {
	Kind    string // "group", "deployment" or "queue"
	Name    string // the record's name; "group/path" for deployments
	Want    uint64 // the revision the writer named
	Current uint64 // the revision stored; 0 when the record does not exist
}

func (e *ConflictError) Error() string {
	if e.Want == 0 && e.Current != 0 {
		return fmt.Sprintf("registry: %s %q already exists at revision %d", e.Kind, e.Name, e.Current)
	}
	return "registry: " + e.ClientMessage()
}

// ClientMessage says what is stored and what the writer named.
func (e *ConflictError) ClientMessage() string {
	if e.Current == 0 {
		return fmt.Sprintf("%s %q does not exist (revision %d named)", e.Kind, e.Name, e.Want)
	}
	if e.Want == 0 {
		return fmt.Sprintf("%s %q already exists", e.Kind, e.Name)
	}
	return fmt.Sprintf("%s %q is at revision %d, not %d", e.Kind, e.Name, e.Current, e.Want)
}

// ErrorType is already_exists for a create that found the record stored,
// precondition_failed otherwise.
func (e *ConflictError) ErrorType() string {
	if e.Want == 0 {
		return "already_exists"
	}
	return "precondition_failed"
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

// ErrorType is invalid_reference.
func (e *InvalidError) ErrorType() string { return "invalid_reference" }

// ClientMessage is the sentence about the field.
func (e *InvalidError) ClientMessage() string { return e.Message }

// ErrorPointer is the JSON pointer of the field.
func (e *InvalidError) ErrorPointer() string { return e.Pointer }

func invalid(pointer, format string, args ...any) error {
	return &InvalidError{Pointer: pointer, Message: fmt.Sprintf(format, args...)}
}
