package registry

import (
	"fmt"

	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry/process"

	"github.com/scorehub/scorehub/internal/image"
)

// Sentinel errors. Functions in this package wrap them with detail; match
// them with [errors.Is]. Each is a [*problem.Error]: its Code says what it
// is to an HTTP edge and to a host reading it with [errors.As], its Message
// is a sentence for a client that names nothing in particular; the errors
// that wrap them here say which record.
var (
	// ErrNotFound reports that a named record or process does not exist.
	ErrNotFound = &problem.Error{Code: problem.NotFound, Text: "registry: not found",
		Message: "nothing is stored under that name"}
	// ErrExists reports a create of a record or process name already taken.
	// It is [process.ErrExists], which the catalog returns.
	ErrExists = process.ErrExists
	// ErrConflict reports a write that named a revision other than the
	// current one. The error is a [*ConflictError].
	ErrConflict = &problem.Error{Code: problem.PreconditionFailed, Text: "registry: revision conflict",
		Message: "the record has changed since it was read"}
	// ErrStale reports a commit whose base is no longer the stored state's
	// Seq: another writer committed in between. A [Registry] loads the
	// store again and retries; it returns ErrStale only when the store
	// keeps changing under it. It is the one stale error of every store
	// (records, jobs, and those of package tokens, where it is
	// tokens.ErrStale).
	ErrStale = image.ErrStale
	// ErrInUse reports a delete of a record that others still refer to, or of
	// a built-in record (the DEFAULT group and queue).
	ErrInUse = &problem.Error{Code: problem.InUse, Text: "registry: in use", Message: "the record is in use"}
	// ErrInvalid reports a record that breaks a domain rule. The error is an
	// [*InvalidError] naming the field. It is [process.ErrInvalid], which
	// the catalog returns for a process name.
	ErrInvalid = process.ErrInvalid
	// ErrDisabled reports a lookup of an endpoint whose deployment is
	// disabled.
	ErrDisabled = &problem.Error{Code: problem.EndpointDisabled, Text: "registry: deployment disabled",
		Message: "the endpoint's deployment is disabled"}
	// ErrUnavailable reports an endpoint whose process is not in the catalog
	// (for example, a deployment stored by a build that registered it).
	ErrUnavailable = &problem.Error{Code: problem.ProcessUnavailable, Text: "registry: process unavailable",
		Message: "the endpoint's process is not available in this server"}
	// ErrVerification reports an upload whose verification rows the model
	// scored differently from the predictions the upload expected.
	ErrVerification = &problem.Error{Code: problem.VerificationFailed, Text: "registry: model verification failed",
		Message: "the model does not reproduce the expected predictions"}
	// ErrStoreUnavailable reports a store that cannot be reached for now:
	// a database that is down, restarting or unreachable. A store wraps
	// the cause of such a failure in it (fmt.Errorf("…: %w: %w",
	// ErrStoreUnavailable, err)); the write it answers was not
	// acknowledged, and may be sent again once the store is back, as its
	// RetryAfter says (about when a restarted database takes connections).
	// Scoring reads the last snapshot and does not see it; an HTTP edge
	// answers 503 store_unavailable with Retry-After.
	ErrStoreUnavailable = &problem.Error{Code: problem.StoreUnavailable, Text: "registry: store unavailable",
		Message: "the store cannot be reached; nothing was changed; retry later", RetryAfter: 2}
	// ErrClosed reports use of a closed store or registry.
	ErrClosed = &problem.Error{Code: problem.Unavailable, Text: "registry: store closed",
		Message: "the service is shutting down"}
)

// errorf returns an error matching kind whose client message is the
// formatted sentence.
func errorf(kind *problem.Error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	return kind.Detail("registry: "+msg, msg)
}

// ConflictError is returned by a write whose revision is stale. It matches
// [ErrConflict], and wraps the [*problem.Error] a client is told.
type ConflictError struct {
	Kind    string // "group", "deployment", "queue", "model" or "alias"
	Name    string // the record's name; "group/path" for deployments, "model@alias" for aliases
	Want    uint64 // the revision the writer named
	Current uint64 // the revision stored; 0 when the record does not exist
}

func (e *ConflictError) Error() string {
	if e.Want == 0 {
		return fmt.Sprintf("registry: %s %q already exists at revision %d", e.Kind, e.Name, e.Current)
	}
	return "registry: " + e.message()
}

// message says what failed in terms of the request.
func (e *ConflictError) message() string {
	switch {
	case e.Want == 0:
		return fmt.Sprintf("%s %q already exists", e.Kind, e.Name)
	case e.Current == 0:
		return fmt.Sprintf("%s %q does not exist (revision %d named)", e.Kind, e.Name, e.Want)
	}
	return fmt.Sprintf("%s %q is at revision %d, not %d", e.Kind, e.Name, e.Current, e.Want)
}

// Unwrap is what a client is told: already_exists for a create of a record
// that exists, precondition_failed for a write that named another revision;
// either matches [ErrConflict].
func (e *ConflictError) Unwrap() error {
	p := ErrConflict.Detail(e.Error(), e.message())
	if e.Want == 0 {
		p.Code = problem.AlreadyExists
	}
	return p
}

// InvalidError is a record that breaks a domain rule. Pointer is the JSON
// pointer of the offending field within the record as the management API
// shows it (for example "/endpoints/0/queue"). It matches [ErrInvalid], and
// wraps the [*problem.Error] a client is told: invalid_reference, with
// Message, at Pointer.
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

// Unwrap is what a client is told.
func (e *InvalidError) Unwrap() error { return ErrInvalid.Detail(e.Error(), e.Message).At(e.Pointer) }

func invalid(pointer, format string, args ...any) error {
	return &InvalidError{Pointer: pointer, Message: fmt.Sprintf(format, args...)}
}
