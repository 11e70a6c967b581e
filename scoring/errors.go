package scoring

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/scorehub/scorehub/internal/httperr"
)

// Error is the error the handler answers with: an HTTP status, a stable
// snake_case Type, a Message safe to show the client, the JSON Pointer of the
// place in the request at fault, if any, and the cause, for the log only.
// [Decode] and [Request.Conform] return one for every fault of the request,
// and a [registry.Process] or an Authorize function may return one to choose
// what the client is told. Match it with [errors.As].
type Error = httperr.Error

// Stable type codes of this package's errors. The codes shared with other
// scorehub packages (not_found, endpoint_disabled, process_unavailable,
// body_too_large, timeout, internal_error, unavailable) are listed in the
// package documentation.
const (
	TypeMethodNotAllowed     = httperr.TypeMethodNotAllowed
	TypeUnsupportedMediaType = httperr.TypeUnsupportedMediaType
	TypeMalformedJSON        = httperr.TypeMalformedJSON
	TypeDuplicateKey         = httperr.TypeDuplicateKey
	TypeInvalidRequest       = httperr.TypeInvalidRequest
	TypeInvalidValue         = httperr.TypeInvalidValue
	TypeMixedTypes           = httperr.TypeMixedTypes
	TypeSchemaMismatch       = httperr.TypeSchemaMismatch
	TypeDuplicateMacro       = httperr.TypeDuplicateMacro
	TypeTooManyRows          = httperr.TypeTooManyRows
	TypeTooManyColumns       = httperr.TypeTooManyColumns
	TypeTooManyCells         = httperr.TypeTooManyCells
	TypeQueueFull            = httperr.TypeQueueFull
	TypeUnauthorized         = httperr.TypeUnauthorized
	TypeForbidden            = httperr.TypeForbidden
)

// Sentinel errors. Match them with [errors.Is].
var (
	// ErrQueueFull is returned by [Queues.Acquire] and [Queues.Run] when
	// the queue's waiting list is full. The handler answers 503 queue_full
	// with Retry-After.
	ErrQueueFull = errors.New("scoring: queue full")
	// ErrNoQueue is returned by [Queues.Acquire] and [Queues.Run] for a
	// queue the registry does not define.
	ErrNoQueue = errors.New("scoring: no such queue")
	// ErrUnauthorized, returned (or wrapped) by an Authorize function,
	// refuses a request that carries no acceptable credentials: 401
	// unauthorized.
	ErrUnauthorized = errors.New("scoring: unauthorized")
	// ErrForbidden, returned (or wrapped) by an Authorize function, refuses
	// a request whose caller may not use the group: 403 forbidden.
	ErrForbidden = errors.New("scoring: forbidden")
)

func badRequest(typ, pointer, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Type: typ, Message: fmt.Sprintf(format, args...), Pointer: pointer}
}

func tooLarge(typ, format string, args ...any) *Error {
	return &Error{Status: http.StatusRequestEntityTooLarge, Type: typ, Message: fmt.Sprintf(format, args...)}
}

var (
	errRouteNotFound = &Error{Status: http.StatusNotFound, Type: httperr.TypeNotFound, Message: "no scoring endpoint has this address"}
	errMethod        = &Error{Status: http.StatusMethodNotAllowed, Type: TypeMethodNotAllowed, Message: "scoring endpoints take POST requests only",
		Allow: http.MethodPost}
	errNeedsToken = &Error{Status: http.StatusUnauthorized, Type: TypeUnauthorized, Message: "this endpoint needs a valid token"}
	errMediaType  = &Error{Status: http.StatusUnsupportedMediaType, Type: TypeUnsupportedMediaType,
		Message: "the request body must be sent as Content-Type: application/json (UTF-8)"}
	errQueueFull = &Error{Status: http.StatusServiceUnavailable, Type: TypeQueueFull,
		Message: "the endpoint's execution queue is full; retry later"}
	errNoQueue = &Error{Status: http.StatusServiceUnavailable, Type: httperr.TypeUnavailable,
		Message: "the endpoint's execution queue is not defined"}
	errInternal = &Error{Status: http.StatusInternalServerError, Type: httperr.TypeInternal, Message: "internal error"}
)

// authError maps what an Authorize function returned to the answer:
// an *Error as it is, the sentinels to 401 and 403, anything else to 500
// (the request is refused either way).
func authError(err error) *Error {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e
	case errors.Is(err, ErrUnauthorized):
		return &Error{Status: http.StatusUnauthorized, Type: TypeUnauthorized,
			Message: "this endpoint needs a valid token", Err: err}
	case errors.Is(err, ErrForbidden):
		return &Error{Status: http.StatusForbidden, Type: TypeForbidden,
			Message: "the token does not allow using this web API group", Err: err}
	}
	return errInternal.Wrap(fmt.Errorf("scoring: authorize: %w", err))
}

// pointer returns the JSON Pointer (RFC 6901) of key in row row of "data".
func pointer(row int, key string) string {
	var b strings.Builder
	b.Grow(len("/data/") + 8 + len(key))
	b.WriteString("/data/")
	b.WriteString(strconv.Itoa(row))
	b.WriteByte('/')
	b.WriteString(escapePointer(key))
	return b.String()
}

// escapePointer escapes a key as a JSON Pointer token: ~ as ~0, / as ~1.
func escapePointer(key string) string {
	if !strings.ContainsAny(key, "~/") {
		return key
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
}

func rowPointer(row int) string { return "/data/" + strconv.Itoa(row) }
