package registry

import (
	"fmt"
	"time"

	"github.com/scorehub/scorehub/internal/image"
)

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
	typeStoreDown      = "store_unavailable"
	typeJobQuota       = "job_quota_exceeded"
	typeStorageFull    = "storage_full"
	typeModelFormat    = "unsupported_model_format"
	typeModelInvalid   = "invalid_model"
	typeModelLimit     = "model_limit_exceeded"
	typeVerification   = "verification_failed"
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
	// ErrStale reports a commit whose base is no longer the stored state's
	// Seq: another writer committed in between. A [Registry] loads the
	// store again and retries; it returns ErrStale only when the store
	// keeps changing under it. It is the one stale error of every store
	// (records, jobs, and those of package tokens, where it is
	// tokens.ErrStale).
	ErrStale = image.ErrStale
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
	// ErrModelFormat reports a model file of no format the catalog reads,
	// or of a kind that is never read because loading it runs code.
	ErrModelFormat error = &sentinel{"registry: unsupported model format", typeModelFormat,
		"the file is not a model of a format this server reads"}
	// ErrModelInvalid reports a model file that cannot be used as it is:
	// malformed, inconsistent with its metadata, or using a feature its
	// format's reader does not support (the message names it).
	ErrModelInvalid error = &sentinel{"registry: invalid model", typeModelInvalid, "the model file cannot be used"}
	// ErrModelLimit reports a model file past one of its format's limits
	// (trees, nodes, depth, features, classes).
	ErrModelLimit error = &sentinel{"registry: model past a limit", typeModelLimit, "the model is larger than this server allows"}
	// ErrVerification reports an upload whose verification rows the model
	// scored differently from the predictions the upload expected.
	ErrVerification error = &sentinel{"registry: model verification failed", typeVerification,
		"the model does not reproduce the expected predictions"}
	// ErrStoreUnavailable reports a store that cannot be reached for now:
	// a database that is down, restarting or unreachable. A store wraps
	// the cause of such a failure in it (fmt.Errorf("…: %w: %w",
	// ErrStoreUnavailable, err)); the write it answers was not
	// acknowledged, and may be sent again once the store is back, as its
	// RetryAfter says. Scoring reads the last snapshot and does not see
	// it; an HTTP edge answers 503 store_unavailable with Retry-After.
	ErrStoreUnavailable error = &passing{sentinel{"registry: store unavailable", typeStoreDown,
		"the store cannot be reached; nothing was changed; retry later"}, storeRetryAfter}
	// ErrClosed reports use of a closed store or registry.
	ErrClosed error = &sentinel{"registry: store closed", typeUnavailable, "the service is shutting down"}
)

// storeRetryAfter is when a client refused with [ErrStoreUnavailable] is
// told to try again: about when a restarted database takes connections.
const storeRetryAfter = 2 * time.Second

// sentinel is one of the sentinel errors: its text for logs, its type code
// and a sentence for a client that names nothing in particular.
type sentinel struct{ text, typ, client string }

func (e *sentinel) Error() string         { return e.text }
func (e *sentinel) ErrorType() string     { return e.typ }
func (e *sentinel) ClientMessage() string { return e.client }

// passing is a sentinel of a failure that passes, with when to try again.
type passing struct {
	sentinel
	after time.Duration
}

// RetryAfter is when a request refused with the error may be sent again.
func (e *passing) RetryAfter() time.Duration { return e.after }

// detailed is a sentinel with a sentence about the record at fault: the
// sentence is what a client is told, the sentinel what callers match.
type detailed struct {
	kind error // a *sentinel
	msg  string
}

// errorf returns an error matching kind whose client message is the
// formatted sentence.
func errorf(kind error, format string, args ...any) error {
	return &detailed{kind: kind, msg: fmt.Sprintf(format, args...)}
}

func (e *detailed) Error() string         { return "registry: " + e.msg }
func (e *detailed) Unwrap() error         { return e.kind }
func (e *detailed) ErrorType() string     { return e.kind.(interface{ ErrorType() string }).ErrorType() }
func (e *detailed) ClientMessage() string { return e.msg }

// ConflictError is returned by a write whose revision is stale. It matches
// [ErrConflict].
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

// ClientMessage is the sentence about the field.
func (e *InvalidError) ClientMessage() string { return e.Message }

// ErrorPointer is Pointer.
func (e *InvalidError) ErrorPointer() string { return e.Pointer }

// Is reports whether target is [ErrInvalid].
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

func invalid(pointer, format string, args ...any) error {
	return &InvalidError{Pointer: pointer, Message: fmt.Sprintf(format, args...)}
}
