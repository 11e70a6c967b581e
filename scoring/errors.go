package scoring

import (
	"errors"
	"net/http"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/problem"
)

// Sentinel errors. Match them with [errors.Is]. Each is a
// [*problem.Error] whose code says what it is to the HTTP edge, so the
// handler answers it without a mapping of its own.
var (
	// ErrQueueFull is returned by [Queues.Acquire] and [Queues.Run] when
	// the queue's waiting list is full. The handler answers 503 queue_full
	// with Retry-After.
	ErrQueueFull = &problem.Error{Code: problem.QueueFull, Text: "scoring: queue full",
		Message: "the endpoint's execution queue is full; retry later"}
	// ErrNoQueue is returned by [Queues.Acquire] and [Queues.Run] for a
	// queue the registry does not define: 503 unavailable.
	ErrNoQueue = &problem.Error{Code: problem.Unavailable, Text: "scoring: no such queue",
		Message: "the endpoint's execution queue is not defined"}
	// ErrUnauthorized, returned (or wrapped) by an Authorize function,
	// refuses a request that carries no acceptable credentials: 401
	// unauthorized, with the challenge "Bearer".
	ErrUnauthorized = &problem.Error{Code: problem.Unauthorized, Text: "scoring: unauthorized",
		Message: "this endpoint needs a valid token"}
	// ErrForbidden, returned (or wrapped) by an Authorize function, refuses
	// a request whose caller may not use the group: 403 forbidden.
	ErrForbidden = &problem.Error{Code: problem.Forbidden, Text: "scoring: forbidden",
		Message: "the token does not allow using this web API group"}
)

// composed returns the first [*problem.Error] in err's chain if it is an
// answer composed for the client, or nil if there is none or it is a
// package's sentinel, or its detail, passed on (which has Text): a process
// or an Authorize function chooses its answer with the one, and fails with
// the other as with any error.
func composed(err error) *problem.Error {
	var e *problem.Error
	if errors.As(err, &e) && e.Text == "" {
		return e
	}
	return nil
}

// mediaTypeError is the 415 for a body declared as contentType.
func mediaTypeError(contentType string) *problem.Error {
	return &problem.Error{Status: http.StatusUnsupportedMediaType, Code: problem.UnsupportedMediaType,
		Message: httperr.MediaTypeMessage("the request body must be JSON in UTF-8 (Content-Type: application/json)", contentType)}
}

var (
	errRouteNotFound = &problem.Error{Status: http.StatusNotFound, Code: problem.NotFound, Message: "no scoring endpoint has this address"}
	errMethod        = &problem.Error{Status: http.StatusMethodNotAllowed, Code: problem.MethodNotAllowed, Message: "scoring endpoints take POST requests only",
		Allow: http.MethodPost}
	errInternal = &problem.Error{Status: http.StatusInternalServerError, Code: problem.Internal, Message: "internal error"}
)
