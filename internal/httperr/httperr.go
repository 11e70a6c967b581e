package httperr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// Error is an error a client is told about, carrying its whole answer.
//
// Type is a stable snake_case code clients may branch on; Status is the HTTP
// status, zero meaning the one [StatusOf] gives Type. Message is one human
// sentence safe to show; Pointer is the JSON pointer of the place in the
// request at fault, if any. Fields, when several places are at fault, lists
// every one of them, Pointer then being the first.
//
// Challenge, RetryAfter, Allow and AcceptPatch are the headers the answer
// needs: WWW-Authenticate (a 401 without one gets a bare "Bearer", as RFC
// 9110 requires one), Retry-After in whole seconds (sent when positive),
// Allow (405) and Accept-Patch (415 of a PATCH route). Err is the cause, for
// the log only.
//
// An Error is a value: the methods return changed copies, so one may be
// shared by concurrent requests.
type Error struct {
	Status      int
	Type        string
	Message     string
	Pointer     string
	Fields      []FieldError
	Challenge   string
	RetryAfter  int
	Allow       string
	AcceptPatch string
	Err         error
}

// FieldError is one place in a request at fault: its JSON pointer and a
// phrase saying what is wrong there.
type FieldError struct {
	Pointer string `json:"pointer"`
	Message string `json:"message"`
}

// New returns an error of type typ, with the status [StatusOf] gives it.
func New(typ, message string) *Error {
	return &Error{Status: StatusOf(typ), Type: typ, Message: message}
}

// Newf is New with a formatted message.
func Newf(typ, format string, args ...any) *Error {
	return New(typ, fmt.Sprintf(format, args...))
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

// WithChallenge returns a copy of e sent with WWW-Authenticate: challenge.
func (e *Error) WithChallenge(challenge string) *Error {
	c := *e
	c.Challenge = challenge
	return &c
}

// WithRetryAfter returns a copy of e sent with Retry-After: seconds (at
// least 1).
func (e *Error) WithRetryAfter(seconds int) *Error {
	c := *e
	c.RetryAfter = max(seconds, 1)
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

// status is the status e is sent with.
func (e *Error) status() int {
	if e.Status != 0 {
		return e.Status
	}
	return StatusOf(e.Type)
}

// The stable type codes of scorehub's answers, each defined once. The
// packages re-export those their Go callers match.
const (
	TypeInternal             = "internal_error"
	TypeNotFound             = "not_found"
	TypeMethodNotAllowed     = "method_not_allowed"
	TypeUnsupportedMediaType = "unsupported_media_type"
	TypeBodyTooLarge         = "body_too_large"
	TypeRequestTimeout       = "request_timeout"
	TypeClientGone           = "client_closed_request"
	TypeTimeout              = "timeout"
	TypeUnavailable          = "unavailable"
	// The store of the records, jobs or accounts cannot be reached for
	// now (a database that is down or restarting): a write is refused,
	// nothing is changed, and the answer (503) carries Retry-After.
	TypeStoreUnavailable = "store_unavailable"
	// The server holds as many request bodies as it may at once (503,
	// with Retry-After).
	TypeServerBusy = "server_busy"

	// Requests that are not well formed (400).
	TypeMalformedJSON    = "malformed_json"
	TypeInvalidRequest   = "invalid_request"
	TypeInvalidParameter = "invalid_parameter"
	TypeValidationFailed = "validation_failed"
	TypeDuplicateKey     = "duplicate_key"
	TypeInvalidValue     = "invalid_value"
	TypeMixedTypes       = "mixed_types"
	TypeSchemaMismatch   = "schema_mismatch"
	TypeDuplicateMacro   = "duplicate_macro"
	TypeTooManyRows      = "too_many_rows"
	TypeTooManyColumns   = "too_many_columns"
	TypeTooManyCells     = "too_many_cells"
	TypeInvalidRef       = "invalid_reference"
	TypePrecondition     = "precondition_failed"

	// Records and executions.
	TypeConflict       = "conflict"
	TypeAlreadyExists  = "already_exists"
	TypeInUse          = "in_use"
	TypeDisabled       = "endpoint_disabled"
	TypeProcessMissing = "process_unavailable"
	TypeQueueFull      = "queue_full"
	TypeJobNotFinished = "job_not_finished"
	TypeJobEnded       = "job_ended"

	// Credentials and limits.
	TypeUnauthorized = "unauthorized"
	TypeInvalidToken = "invalid_token"
	TypeForbidden    = "forbidden"
	TypeRateLimited  = "rate_limited"
	TypeCORSRejected = "cors_rejected"
	// A caller's share of the job store is used up (429), or the store's
	// room for job results is (507).
	TypeJobQuota    = "job_quota_exceeded"
	TypeStorageFull = "storage_full"

	// Model files: of no format the server reads (415), or one it cannot
	// use, past a limit, or scoring other than the upload expected (422).
	TypeModelFormat  = "unsupported_model_format"
	TypeModelInvalid = "invalid_model"
	TypeModelLimit   = "model_limit_exceeded"
	TypeVerification = "verification_failed"
)

// StatusClientClosedRequest is the status logged for a request whose client
// left before the answer (nginx's convention); the client never sees it.
const StatusClientClosedRequest = 499

// StatusOf is the one mapping of type codes to HTTP statuses. A code it
// does not know is a 500: an error of a host's own type sets Status.
func StatusOf(typ string) int {
	switch typ {
	case TypeMalformedJSON, TypeInvalidRequest, TypeInvalidParameter, TypeValidationFailed,
		TypeDuplicateKey, TypeInvalidValue, TypeMixedTypes, TypeSchemaMismatch, TypeDuplicateMacro:
		return http.StatusBadRequest
	case TypeUnauthorized, TypeInvalidToken:
		return http.StatusUnauthorized
	case TypeForbidden, TypeCORSRejected:
		return http.StatusForbidden
	case TypeNotFound, TypeDisabled:
		return http.StatusNotFound
	case TypeMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case TypeRequestTimeout:
		return http.StatusRequestTimeout
	case TypeConflict, TypeAlreadyExists, TypeInUse, TypeJobNotFinished, TypeJobEnded:
		return http.StatusConflict
	case TypePrecondition:
		return http.StatusPreconditionFailed
	case TypeBodyTooLarge, TypeTooManyRows, TypeTooManyColumns, TypeTooManyCells:
		return http.StatusRequestEntityTooLarge
	case TypeUnsupportedMediaType, TypeModelFormat:
		return http.StatusUnsupportedMediaType
	case TypeInvalidRef, TypeModelInvalid, TypeModelLimit, TypeVerification:
		return http.StatusUnprocessableEntity
	case TypeRateLimited, TypeJobQuota:
		return http.StatusTooManyRequests
	case TypeClientGone:
		return StatusClientClosedRequest
	case TypeUnavailable, TypeStoreUnavailable, TypeProcessMissing, TypeQueueFull, TypeServerBusy:
		return http.StatusServiceUnavailable
	case TypeTimeout:
		return http.StatusGatewayTimeout
	case TypeStorageFull:
		return http.StatusInsufficientStorage
	}
	return http.StatusInternalServerError
}

// What a domain error says about itself. httperr looks for these methods on
// every error in a chain, so domain packages need not import it.
type (
	// typed is an error that knows its type code.
	typed interface {
		error
		ErrorType() string
	}
	// described is an error with a sentence safe to show the client.
	described interface {
		error
		ClientMessage() string
	}
	// pointed is an error about one place in the request.
	pointed interface {
		error
		ErrorPointer() string
	}
	// retrying is an error that says when the request may succeed if
	// sent again; a positive duration becomes Retry-After.
	retrying interface {
		error
		RetryAfter() time.Duration
	}
)

// generic is the sentence a client is told for a domain error that brings
// none of its own.
func generic(typ string) string {
	switch typ {
	case TypeNotFound:
		return "the resource does not exist"
	case TypeAlreadyExists:
		return "the resource already exists"
	case TypeInUse:
		return "the resource is in use"
	case TypePrecondition:
		return "the resource has changed since it was read"
	case TypeInvalidRef:
		return "the request names something that does not exist"
	case TypeDisabled:
		return "the endpoint's deployment is disabled"
	case TypeProcessMissing:
		return "the endpoint's process is not available in this server"
	case TypeUnavailable:
		return "the service is shutting down"
	case TypeServerBusy:
		return "the server is busy; retry later"
	case TypeStoreUnavailable:
		return "the store cannot be reached; nothing was changed; retry later"
	}
	if StatusOf(typ) >= 500 {
		return "internal error"
	}
	return "the request was refused"
}

// From maps err to what the client is told. An *Error anywhere in err's
// chain is used as it is; an error with an ErrorType method (optionally
// ClientMessage, ErrorPointer and RetryAfter) gets that type's status; errors of context
// and of [http.MaxBytesReader] get theirs, as does a read past the server's
// read deadline (408); anything else is a 500 that says only "internal
// error". The returned Error's Status is always set.
func From(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		if e.Status == 0 {
			c := *e
			c.Status = e.status()
			return &c
		}
		return e
	}
	var t typed
	if errors.As(err, &t) {
		typ := t.ErrorType()
		out := &Error{Status: StatusOf(typ), Type: typ, Message: generic(typ), Err: err}
		var d described
		if errors.As(err, &d) {
			out.Message = d.ClientMessage()
		}
		var p pointed
		if errors.As(err, &p) {
			out.Pointer = p.ErrorPointer()
		}
		var r retrying
		if errors.As(err, &r) && r.RetryAfter() > 0 {
			out.RetryAfter = int(math.Ceil(r.RetryAfter().Seconds()))
		}
		return out
	}
	var mb *http.MaxBytesError
	switch {
	case errors.As(err, &mb):
		return &Error{Status: http.StatusRequestEntityTooLarge, Type: TypeBodyTooLarge,
			Message: fmt.Sprintf("the request body is larger than %d bytes", mb.Limit), Err: err}
	case errors.Is(err, os.ErrDeadlineExceeded):
		// The server's read timeout passed while the request was read.
		return &Error{Status: http.StatusRequestTimeout, Type: TypeRequestTimeout,
			Message: "the request was not received in time", Err: err}
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Status: http.StatusGatewayTimeout, Type: TypeTimeout, Message: "the process did not finish in time", Err: err}
	case errors.Is(err, context.Canceled):
		return &Error{Status: StatusClientClosedRequest, Type: TypeClientGone, Message: "the request was cancelled", Err: err}
	}
	return &Error{Status: http.StatusInternalServerError, Type: TypeInternal, Message: "internal error", Err: err}
}

// MediaTypeMessage is the message of a 415: want, what the route takes,
// then the Content-Type the request declared, so that a client sending a
// form (as curl -d does) sees what went wrong. A long header is cut short.
func MediaTypeMessage(want, got string) string {
	if got == "" {
		return want + "; the request has no Content-Type"
	}
	if len(got) > 80 {
		got = strings.ToValidUTF8(got[:80], "") + "…"
	}
	return want + "; got " + got
}

// LogLevel is the level an answer with status is logged at: error for a
// fault of the server (5xx), warn for 504, which says an endpoint's process
// ran past its own timeout, and debug for what the client caused (4xx, 499
// included: the client left), which the access log already records and
// the packages that refuse a request log as they see fit (one line per
// failed login, say). So level=ERROR means the server needs looking at.
func LogLevel(status int) slog.Level {
	switch {
	case status == http.StatusGatewayTimeout:
		return slog.LevelWarn
	case status >= 500:
		return slog.LevelError
	}
	return slog.LevelDebug
}

type body struct {
	Error struct {
		Type    string       `json:"type"`
		Message string       `json:"message"`
		Pointer string       `json:"pointer,omitempty"`
		Fields  []FieldError `json:"fields,omitempty"`
	} `json:"error"`
}

// Write is the one way scorehub answers with an error: it sends err as the
// JSON error shape with the status and headers [From] gives it, and logs
// it with its cause at the level [LogLevel] gives. logger may be nil
// (slog.Default is used).
func Write(w http.ResponseWriter, r *http.Request, logger *slog.Logger, err error) {
	e := From(err)
	if logger == nil {
		logger = slog.Default()
	}
	level := LogLevel(e.Status)
	if logger.Enabled(r.Context(), level) {
		attrs := []any{"status", e.Status, "type", e.Type, "method", r.Method, "path", r.URL.Path}
		if e.Err != nil {
			attrs = append(attrs, "cause", e.Err.Error())
		}
		logger.Log(r.Context(), level, "request failed", attrs...)
	}
	var b body
	b.Error.Type, b.Error.Message, b.Error.Pointer, b.Error.Fields = e.Type, e.Message, e.Pointer, e.Fields
	out, _ := json.Marshal(b) // strings only: cannot fail
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Del("Content-Length")
	switch {
	case e.Challenge != "":
		h.Set("WWW-Authenticate", e.Challenge)
	case e.Status == http.StatusUnauthorized && h.Get("WWW-Authenticate") == "":
		h.Set("WWW-Authenticate", "Bearer")
	}
	if e.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	if e.Allow != "" {
		h.Set("Allow", e.Allow)
	}
	if e.AcceptPatch != "" {
		h.Set("Accept-Patch", e.AcceptPatch)
	}
	w.WriteHeader(e.Status)
	w.Write(append(out, '\n'))
}

// BearerChallenge builds a Bearer challenge (RFC 6750 §3) for an error's
// Challenge. Empty arguments are left out; values are sent as quoted
// strings, so callers pass printable ASCII only.
func BearerChallenge(realm, code, description string) string {
	var b strings.Builder
	b.WriteString("Bearer")
	sep := " "
	param := func(name, value string) {
		if value == "" {
			return
		}
		b.WriteString(sep)
		b.WriteString(name)
		b.WriteString(`="`)
		for i := 0; i < len(value); i++ {
			if c := value[i]; c == '"' || c == '\\' {
				b.WriteByte('\\')
			}
			b.WriteByte(value[i])
		}
		b.WriteByte('"')
		sep = ", "
	}
	param("realm", realm)
	param("error", code)
	param("error_description", description)
	return b.String()
}
