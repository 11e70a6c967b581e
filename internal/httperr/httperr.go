package httperr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/scorehub/scorehub/internal/redact"
	"github.com/scorehub/scorehub/problem"
)

// New returns an answer of code, with the status [StatusOf] gives it.
func New(code problem.Code, message string) *problem.Error {
	return &problem.Error{Status: StatusOf(code), Code: code, Message: message}
}

// Newf is New with a formatted message.
func Newf(code problem.Code, format string, args ...any) *problem.Error {
	return New(code, fmt.Sprintf(format, args...))
}

// statusClientClosedRequest is the status logged for a request whose client
// left before the answer (nginx's convention); the client never sees it.
const statusClientClosedRequest = 499

// StatusOf is the one mapping of codes to HTTP statuses. A code it does not
// know is a 500: an error of a host's own code sets Status.
func StatusOf(code problem.Code) int {
	s, _ := lookup(code)
	return s
}

// lookup is StatusOf that also says whether the table knows code.
func lookup(code problem.Code) (status int, known bool) {
	switch code {
	case problem.MalformedJSON, problem.InvalidRequest, problem.InvalidParameter, problem.ValidationFailed,
		problem.DuplicateKey, problem.InvalidValue, problem.MixedTypes, problem.SchemaMismatch, problem.DuplicateMacro:
		return http.StatusBadRequest, true
	case problem.Unauthorized, problem.InvalidToken:
		return http.StatusUnauthorized, true
	case problem.Forbidden, problem.CORSRejected:
		return http.StatusForbidden, true
	case problem.NotFound, problem.EndpointDisabled:
		return http.StatusNotFound, true
	case problem.MethodNotAllowed:
		return http.StatusMethodNotAllowed, true
	case problem.RequestTimeout:
		return http.StatusRequestTimeout, true
	case problem.Conflict, problem.AlreadyExists, problem.InUse, problem.JobNotFinished, problem.JobEnded:
		return http.StatusConflict, true
	case problem.PreconditionFailed:
		return http.StatusPreconditionFailed, true
	case problem.BodyTooLarge, problem.TooManyRows, problem.TooManyColumns, problem.TooManyCells, problem.TooManyResultCells, problem.ResponseTooLarge:
		return http.StatusRequestEntityTooLarge, true
	case problem.UnsupportedMediaType, problem.UnsupportedModelFormat:
		return http.StatusUnsupportedMediaType, true
	case problem.InvalidReference, problem.InvalidModel, problem.ModelLimitExceeded, problem.VerificationFailed:
		return http.StatusUnprocessableEntity, true
	case problem.RateLimited, problem.JobQuotaExceeded:
		return http.StatusTooManyRequests, true
	case problem.ClientClosedRequest:
		return statusClientClosedRequest, true
	case problem.Unavailable, problem.StoreUnavailable, problem.ProcessUnavailable, problem.QueueFull, problem.ServerBusy:
		return http.StatusServiceUnavailable, true
	case problem.Timeout:
		return http.StatusGatewayTimeout, true
	case problem.StorageFull:
		return http.StatusInsufficientStorage, true
	case problem.Internal:
		return http.StatusInternalServerError, true
	}
	return http.StatusInternalServerError, false
}

// From maps err to what the client is told. The first [*problem.Error] in
// err's chain is used as it is, its Status set from its Code when zero; one
// of a domain package (with Text) keeps err as the cause the log sees.
// Errors of context and of [http.MaxBytesReader] get their answers, as does
// a read past the server's read deadline (408); anything else is a 500 that
// says only "internal error". The returned Error's Status is always set.
func From(err error) *problem.Error {
	e, _ := answer(err)
	return e
}

// answer is From that also says whether the answer's status is known: set
// by the error, or given by the table for its code.
func answer(err error) (*problem.Error, bool) {
	var e *problem.Error
	if errors.As(err, &e) {
		if e.Status != 0 && e.Text == "" {
			return e, true
		}
		c := *e
		if c.Text != "" {
			// A domain error: the log is told its Go text and what wraps
			// it, not just the cause of the sentinel it wraps.
			c.Text, c.Err = "", err
		}
		known := true
		if c.Status == 0 {
			c.Status, known = lookup(c.Code)
		}
		return &c, known
	}
	var mb *http.MaxBytesError
	switch {
	case errors.As(err, &mb):
		return &problem.Error{Status: http.StatusRequestEntityTooLarge, Code: problem.BodyTooLarge,
			Message: fmt.Sprintf("the request body is larger than %d bytes", mb.Limit), Err: err}, true
	case errors.Is(err, os.ErrDeadlineExceeded):
		// The server's read timeout passed while the request was read.
		return &problem.Error{Status: http.StatusRequestTimeout, Code: problem.RequestTimeout,
			Message: "the request was not received in time", Err: err}, true
	case errors.Is(err, context.DeadlineExceeded):
		return &problem.Error{Status: http.StatusGatewayTimeout, Code: problem.Timeout,
			Message: "the process did not finish in time", Err: err}, true
	case errors.Is(err, context.Canceled):
		return &problem.Error{Status: statusClientClosedRequest, Code: problem.ClientClosedRequest,
			Message: "the request was cancelled", Err: err}, true
	}
	return &problem.Error{Status: http.StatusInternalServerError, Code: problem.Internal, Message: "internal error", Err: err}, true
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

// logLevel is the level an answer with status is logged at: error for a
// fault of the server (5xx), warn for 504, which says an endpoint's process
// ran past its own timeout, and debug for what the client caused (4xx, 499
// included: the client left), which the access log already records and
// the packages that refuse a request log as they see fit (one line per
// failed login, say). So level=ERROR means the server needs looking at.
func logLevel(status int) slog.Level {
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
		Type    problem.Code         `json:"type"`
		Message string               `json:"message"`
		Pointer string               `json:"pointer,omitempty"`
		Fields  []problem.FieldError `json:"fields,omitempty"`
	} `json:"error"`
}

// Write is the one way scorehub answers with an error: it sends err as the
// JSON error shape with the status and headers [From] gives it, and logs
// it with its cause at the level [logLevel] gives. An error whose code the
// status table does not know, and which sets no Status, is answered 500
// and logged at error level as a fault of the server. logger may be nil
// (slog.Default is used).
func Write(w http.ResponseWriter, r *http.Request, logger *slog.Logger, err error) {
	e, known := answer(err)
	if logger == nil {
		logger = slog.Default()
	}
	if !known {
		logger.ErrorContext(r.Context(), "httperr: error code not in the status table; answered 500",
			"type", string(e.Code), "method", r.Method, "path", redact.Secrets(r.URL.Path))
	}
	level := logLevel(e.Status)
	if logger.Enabled(r.Context(), level) {
		attrs := []any{"status", e.Status, "type", string(e.Code), "method", r.Method, "path", redact.Secrets(r.URL.Path)}
		if e.Err != nil {
			attrs = append(attrs, "cause", e.Err.Error())
		}
		logger.Log(r.Context(), level, "request failed", attrs...)
	}
	var b body
	b.Error.Type, b.Error.Message, b.Error.Pointer, b.Error.Fields = e.Code, e.Message, e.Pointer, e.Fields
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
