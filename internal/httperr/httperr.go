package httperr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"

	"github.com/scorehub/scorehub/registry"
)

// Error is an error a client is told about. Type is a stable snake_case code
// clients may branch on; Message is one human sentence safe to show; Pointer
// is the JSON pointer of the place in the request at fault, if any. Fields,
// when several places are at fault, lists every one of them, Pointer then
// being the first. Err is the cause, for the log only.
type Error struct {
	Status  int
	Type    string
	Message string
	Pointer string
	Fields  []FieldError
	Err     error
}

// FieldError is one place in a request at fault: its JSON pointer and a
// phrase saying what is wrong there.
type FieldError struct {
	Pointer string `json:"pointer"`
	Message string `json:"message"`
}

// New returns an error with the given status, type and message.
func New(status int, typ, message string) *Error {
	return &Error{Status: status, Type: typ, Message: message}
}

// Newf is New with a formatted message.
func Newf(status int, typ, format string, args ...any) *Error {
	return &Error{Status: status, Type: typ, Message: fmt.Sprintf(format, args...)}
}

// At returns a copy of e that points at pointer.
func (e *Error) At(pointer string) *Error {
	c := *e
	c.Pointer = pointer
	return &c
}

// Wrap returns a copy of e whose cause is err.
func (e *Error) Wrap(err error) *Error {
	c := *e
	c.Err = err
	return &c
}

func (e *Error) Error() string {
	s := e.Type + ": " + e.Message
	if e.Pointer != "" {
		s += " (at " + e.Pointer + ")"
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Stable type codes shared by several packages.
const (
	TypeInternal       = "internal_error"
	TypeNotFound       = "not_found"
	TypeBodyTooLarge   = "body_too_large"
	TypeTimeout        = "timeout"
	TypeClientGone     = "client_closed_request"
	TypeUnavailable    = "unavailable"
	TypeConflict       = "conflict"
	TypeAlreadyExists  = "already_exists"
	TypeInUse          = "in_use"
	TypePrecondition   = "precondition_failed"
	TypeInvalidRef     = "invalid_reference"
	TypeDisabled       = "endpoint_disabled"
	TypeProcessMissing = "process_unavailable"
	TypeRequestTimeout = "request_timeout"
)

// StatusClientClosedRequest is the status logged for a request whose client
// left before the answer (nginx's convention); the client never sees it.
const StatusClientClosedRequest = 499

// From maps err to what the client is told. An *Error anywhere in err's chain
// is used as it is; errors of the registry, of context and of
// [http.MaxBytesReader] get their status, as does a read past the
// server's read deadline (408); anything else is a 500 that says
// only "internal error".
func From(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var mb *http.MaxBytesError
	var conflict *registry.ConflictError
	var inv *registry.InvalidError
	switch {
	case errors.As(err, &mb):
		return &Error{Status: http.StatusRequestEntityTooLarge, Type: TypeBodyTooLarge,
			Message: fmt.Sprintf("the request body is larger than %d bytes", mb.Limit), Err: err}
	case errors.Is(err, os.ErrDeadlineExceeded):
		// The server's read timeout passed while the request was read.
		return &Error{Status: http.StatusRequestTimeout, Type: TypeRequestTimeout,
			Message: "the request was not received in time", Err: err}
	case errors.As(err, &conflict):
		if conflict.Want == 0 {
			return &Error{Status: http.StatusConflict, Type: TypeAlreadyExists, Message: fmt.Sprintf("%s %q already exists", conflict.Kind, conflict.Name), Err: err}
		}
		return &Error{Status: http.StatusPreconditionFailed, Type: TypePrecondition,
			Message: fmt.Sprintf("%s %q is at revision %d, not %d", conflict.Kind, conflict.Name, conflict.Current, conflict.Want), Err: err}
	case errors.As(err, &inv):
		return &Error{Status: http.StatusUnprocessableEntity, Type: TypeInvalidRef, Message: inv.Message, Pointer: inv.Pointer, Err: err}
	case errors.Is(err, registry.ErrDisabled):
		return &Error{Status: http.StatusNotFound, Type: TypeDisabled, Message: "the endpoint's deployment is disabled", Err: err}
	case errors.Is(err, registry.ErrNotFound):
		return &Error{Status: http.StatusNotFound, Type: TypeNotFound, Message: trimPrefix(err), Err: err}
	case errors.Is(err, registry.ErrExists):
		return &Error{Status: http.StatusConflict, Type: TypeAlreadyExists, Message: trimPrefix(err), Err: err}
	case errors.Is(err, registry.ErrInUse):
		return &Error{Status: http.StatusConflict, Type: TypeInUse, Message: trimPrefix(err), Err: err}
	case errors.Is(err, registry.ErrUnavailable):
		return &Error{Status: http.StatusServiceUnavailable, Type: TypeProcessMissing, Message: "the endpoint's process is not available in this server", Err: err}
	case errors.Is(err, registry.ErrClosed):
		return &Error{Status: http.StatusServiceUnavailable, Type: TypeUnavailable, Message: "the service is shutting down", Err: err}
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Status: http.StatusGatewayTimeout, Type: TypeTimeout, Message: "the process did not finish in time", Err: err}
	case errors.Is(err, context.Canceled):
		return &Error{Status: StatusClientClosedRequest, Type: TypeClientGone, Message: "the request was cancelled", Err: err}
	}
	return &Error{Status: http.StatusInternalServerError, Type: TypeInternal, Message: "internal error", Err: err}
}

// trimPrefix turns a registry error's text into a sentence for the client:
// registry messages name only what the client sent.
func trimPrefix(err error) string {
	s := err.Error()
	const p = "registry: "
	for len(s) > len(p) && s[:len(p)] == p {
		s = s[len(p):]
	}
	return s
}

type body struct {
	Error struct {
		Type    string       `json:"type"`
		Message string       `json:"message"`
		Pointer string       `json:"pointer,omitempty"`
		Fields  []FieldError `json:"fields,omitempty"`
	} `json:"error"`
}

// Write sends err to the client as the JSON error shape with the status From
// gives it. Server faults (5xx) are logged at error level with their cause;
// the rest at debug level. logger may be nil (slog.Default is used).
func Write(w http.ResponseWriter, r *http.Request, logger *slog.Logger, err error) {
	e := From(err)
	if logger == nil {
		logger = slog.Default()
	}
	level := slog.LevelDebug
	if e.Status >= 500 {
		level = slog.LevelError
	}
	if logger.Enabled(r.Context(), level) {
		attrs := []any{"status", e.Status, "type", e.Type, "method", r.Method, "path", r.URL.Path}
		if e.Err != nil {
			attrs = append(attrs, "cause", e.Err.Error())
		}
		logger.Log(r.Context(), level, "request failed", attrs...)
	}
	WriteError(w, e)
}

// WriteError sends e as it is, without logging.
func WriteError(w http.ResponseWriter, e *Error) {
	var b body
	b.Error.Type, b.Error.Message, b.Error.Pointer, b.Error.Fields = e.Type, e.Message, e.Pointer, e.Fields
	out, _ := json.Marshal(b) // strings only: cannot fail
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Del("Content-Length")
	w.WriteHeader(e.Status)
	w.Write(append(out, '\n'))
}
