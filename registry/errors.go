package registry

import "fmt"

// Type codes of this package's errors, as the HTTP edge reads them through
// ErrorType. The table that turns them into statuses is the edge's.
const (
	typeNotFound       = "not_found"
	typeAlreadyExists  = "already_exists"
	typeConflict       = "conflict"
	typeInUse          = "in_use"
	typePrecondition   = "precondition_failed"
	typeInvalidRef     = "invalid_reference"
	typeDisabled       = "endpoint_disabled"
	typeProcessMissing = "process_unavailable"
	typeUnavailable    = "unavailable"
)

// Sentinel errors. Functions in this package wrap them with detail; match them
// with [errors.Is]. Each says what it is to an HTTP edge through
// ErrorType() string and ClientMessage() string, as do the errors that wrap
// them here.
var (
	// ErrNotFound reports that a named record or process does not exist.
	ErrNotFound error = &sentinel{"registry: not found", typeNotFound, "nothing is stored under that name"}
	// ErrExists reports a create of a record or process name already taken.
	ErrExists error = &sentinel{"registry: already exists", typeAlreadyExists, "the name is already taken"}
	// ErrConflict reports a write that named a revision other than the
	// current one. The error is a [*ConflictError].
	ErrConflict error = &sentinel{"registry: revision conflict", typePrecondition, "the record has changed since it was read"}
	// ErrStale reports a [Commit] whose Base is no longer the stored state's
	// Seq: another writer committed in between. A [Registry] loads the
	// store again and retries; it returns ErrStale only when the store
	// keeps changing under it.
	ErrStale error = &sentinel{"registry: store changed by another writer", typeConflict,
		"the records kept changing while this request was applied; retry"}
	// ErrInUse reports a delete of a record that others still refer to, or of
	// a built-in record (the DEFAULT group and queue).
	ErrInUse error = &sentinel{"registry: in use", typeInUse, "the record is in use"}
	// ErrInvalid reports a record that breaks a domain rule. The error is an
	// [*InvalidError] naming the field.
	ErrInvalid error = &sentinel{"registry: invalid", typeInvalidRef, "the record is not valid"}
	// ErrDisabled reports a lookup of an endpoint whose deployment is
	// disabled.
	ErrDisabled error = &sentinel{"registry: deployment disabled", typeDisabled, "the endpoint's deployment is disabled"}
	// ErrUnavailable reports an endpoint whose process is not in the catalog
	// (for example, a deployment stored by a build that registered it).
	ErrUnavailable error = &sentinel{"registry: process unavailable", typeProcessMissing,
		"the endpoint's process is not available in this server"}
	// ErrClosed reports use of a closed store or registry.
	ErrClosed error = &sentinel{"registry: store closed", typeUnavailable, "the service is shutting down"}
)

// sentinel is one of the sentinel errors: its text for logs, its type code
// and a sentence for a client that names nothing in particular.
type sentinel struct{ text, typ, client string }

func (e *sentinel) Error() string         { return e.text }
func (e *sentinel) ErrorType() string     { return e.typ }
func (e *sentinel) ClientMessage() string { return e.client }

// recordError is a sentinel about one named record. Its text, for logs,
// is the Go chain; its client message names only what the client sent.
type recordError struct {
	err    error // a *sentinel
	text   string
	client string
}

func (e *recordError) Error() string         { return e.text }
func (e *recordError) Unwrap() error         { return e.err }
func (e *recordError) ErrorType() string     { return e.err.(*sentinel).typ }
func (e *recordError) ClientMessage() string { return e.client }

// notFound reports that no kind is stored as name.
func notFound(kind, name string) error {
	return &recordError{ErrNotFound,
		fmt.Sprintf("registry: %s %q: %v", kind, name, ErrNotFound),
		fmt.Sprintf("%s %q does not exist", kind, name)}
}

// exists reports a create of kind name, which is taken.
func exists(kind, name string) error {
	return &recordError{ErrExists,
		fmt.Sprintf("registry: %s %q: %v", kind, name, ErrExists),
		fmt.Sprintf("%s %q already exists", kind, name)}
}

// builtIn reports a delete of the built-in kind name.
func builtIn(kind, name string) error {
	return &recordError{ErrInUse,
		fmt.Sprintf("registry: %s %q is built in: %v", kind, name, ErrInUse),
		fmt.Sprintf("%s %q is built in and cannot be deleted", kind, name)}
}

// inUse reports a delete of kind name, which others refer to as why says.
func inUse(kind, name, why string) error {
	return &recordError{ErrInUse,
		fmt.Sprintf("registry: %s %q cannot be deleted, %s: %v", kind, name, why, ErrInUse),
		fmt.Sprintf("%s %q cannot be deleted: %s", kind, name, why)}
}

// ConflictError is returned by a write whose revision is stale. It matches
// [ErrConflict].
type ConflictError struct {
	Kind    string // "group", "deployment" or "queue"
	Name    string // the record's name; "group/path" for deployments
	Want    uint64 // the revision the writer named
	Current uint64 // the revision stored; 0 when the record does not exist
}

func (e *ConflictError) Error() string {
	if e.Want == 0 {
		return fmt.Sprintf("registry: %s %q already exists at revision %d", e.Kind, e.Name, e.Current)
	}
	return "registry: " + e.ClientMessage()
}

// ClientMessage says what failed in terms of the request.
func (e *ConflictError) ClientMessage() string {
	switch {
	case e.Want == 0:
		return fmt.Sprintf("%s %q already exists", e.Kind, e.Name)
	case e.Current == 0:
		return fmt.Sprintf("%s %q does not exist (revision %d named)", e.Kind, e.Name, e.Want)
	}
	return fmt.Sprintf("%s %q is at revision %d, not %d", e.Kind, e.Name, e.Current, e.Want)
}

// ErrorType is "already_exists" for a create of a record that exists, and
// "precondition_failed" for a write that named another revision.
func (e *ConflictError) ErrorType() string {
	if e.Want == 0 {
		return typeAlreadyExists
	}
	return typePrecondition
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

// ErrorType is "invalid_reference".
func (e *InvalidError) ErrorType() string { return typeInvalidRef }

// ClientMessage is the field's pointer, when there is one, and what is
// wrong there.
func (e *InvalidError) ClientMessage() string {
	if e.Pointer == "" {
		return e.Message
	}
	return e.Pointer + " " + e.Message
}

// ErrorPointer is Pointer.
func (e *InvalidError) ErrorPointer() string { return e.Pointer }

// Is reports whether target is [ErrInvalid].
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

func invalid(pointer, format string, args ...any) error {
	return &InvalidError{Pointer: pointer, Message: fmt.Sprintf(format, args...)}
}
