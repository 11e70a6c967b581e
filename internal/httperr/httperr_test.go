package httperr

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/scorehub/scorehub/problem"
)

// domain is an error of a domain package: a sentinel with its code, the
// sentence a client is told and a Go text with what the client must not
// see.
func domain(code problem.Code, message string) *problem.Error {
	return &problem.Error{Code: code, Message: message, Text: "domain: " + string(code) + ": internal detail"}
}

// A domain error that says when to try again is answered with Retry-After;
// one that says nothing without.
func TestFromTakesRetryAfterFromTheError(t *testing.T) {
	storeDown := domain(problem.StoreUnavailable, "the store cannot be reached")
	for _, tt := range []struct {
		name string
		err  error
		want int
	}{
		{"store down, wrapped", fmt.Errorf("postgres: %w: %w", storeDown.WithRetryAfter(2), io.ErrUnexpectedEOF), 2},
		{"none", storeDown, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := From(tt.err)
			if e.Status != http.StatusServiceUnavailable || e.RetryAfter != tt.want {
				t.Errorf("From = %d, Retry-After %d; want 503, %d", e.Status, e.RetryAfter, tt.want)
			}
			w := httptest.NewRecorder()
			Write(w, httptest.NewRequest(http.MethodPut, "/x", nil), slog.New(slog.DiscardHandler), tt.err)
			if got, want := w.Header().Get("Retry-After"), strconv.Itoa(tt.want); tt.want > 0 && got != want {
				t.Errorf("Retry-After header %q, want %q", got, want)
			}
			if !strings.Contains(w.Body.String(), `"type":"store_unavailable"`) {
				t.Errorf("body %s", w.Body)
			}
		})
	}
}

func TestFromMapsEveryKnownError(t *testing.T) {
	notFound := domain(problem.NotFound, "nothing is stored under that name")
	tests := []struct {
		name       string
		err        error
		status     int
		code       problem.Code
		message    string // "" = not checked
		pointer    string
		safeReason bool // the message must not repeat the cause
	}{
		{"own error", &problem.Error{Status: http.StatusTeapot, Code: "teapot", Message: "short and stout"}, http.StatusTeapot, "teapot", "short and stout", "", false},
		{"status from the code", New(problem.QueueFull, "full"), 503, problem.QueueFull, "full", "", false},
		{"zero status from the code", &problem.Error{Code: problem.InvalidToken, Message: "expired"}, 401, problem.InvalidToken, "expired", "", false},
		{"wrapped own error", fmt.Errorf("ctx: %w", New(problem.InvalidRequest, "bad")), 400, problem.InvalidRequest, "bad", "", false},
		{"body limit", &http.MaxBytesError{Limit: 10}, 413, problem.BodyTooLarge, "", "", false},
		{"read timeout", &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}, 408, problem.RequestTimeout, "", "", true},
		{"domain error with a sentence", fmt.Errorf("x: %w", domain(problem.PreconditionFailed, "record \"g/p\" is at revision 4, not 3")),
			412, problem.PreconditionFailed, "record \"g/p\" is at revision 4, not 3", "", true},
		{"domain error with a pointer", domain(problem.InvalidReference, "no queue").At("/endpoints/0/queue"), 422, problem.InvalidReference, "no queue", "/endpoints/0/queue", true},
		{"a sentinel wrapped with detail", fmt.Errorf("registry: deployment %q: %w", "g/p", notFound), 404, problem.NotFound, "nothing is stored under that name", "", true},
		{"a sentinel's detail", notFound.Detail("domain: deployment \"g/p\" does not exist", "deployment \"g/p\" does not exist"),
			404, problem.NotFound, "deployment \"g/p\" does not exist", "", true},
		{"disabled", domain(problem.EndpointDisabled, "off"), 404, problem.EndpointDisabled, "off", "", true},
		{"in use", domain(problem.InUse, "used"), 409, problem.InUse, "used", "", true},
		{"process missing", domain(problem.ProcessUnavailable, "gone"), 503, problem.ProcessUnavailable, "gone", "", true},
		{"unknown code", domain("mystery", "a mystery"), 500, "mystery", "a mystery", "", true},
		{"deadline", context.DeadlineExceeded, 504, problem.Timeout, "", "", true},
		{"cancelled", context.Canceled, statusClientClosedRequest, problem.ClientClosedRequest, "", "", true},
		{"anything else", errors.New("disk on fire at /var/secret"), 500, problem.Internal, "internal error", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := From(tt.err)
			if e.Status != tt.status || e.Code != tt.code || e.Pointer != tt.pointer {
				t.Errorf("From = %d %s %q, want %d %s %q", e.Status, e.Code, e.Pointer, tt.status, tt.code, tt.pointer)
			}
			if tt.message != "" && e.Message != tt.message {
				t.Errorf("message %q, want %q", e.Message, tt.message)
			}
			if tt.safeReason && (e.Message == tt.err.Error() || strings.Contains(e.Message, "internal detail")) {
				t.Errorf("message %q repeats the cause", e.Message)
			}
		})
	}
}

// The log is told the whole Go story of a domain error, context included,
// and the cause of an answer composed at the edge, whose own text would
// repeat the type and message it logs beside.
func TestWriteLogsTheCause(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"domain error wrapped", fmt.Errorf("management: put %q: %w", "g/p", domain(problem.NotFound, "no such thing")),
			`cause="management: put \"g/p\": domain: not_found: internal detail"`},
		{"domain error", domain(problem.InUse, "used"), `cause="domain: in_use: internal detail"`},
		{"answer with a cause", New(problem.InvalidRequest, "unreadable").Wrap(io.ErrUnexpectedEOF), `cause="unexpected EOF"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf strings.Builder
			logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
			Write(httptest.NewRecorder(), httptest.NewRequest(http.MethodPut, "/x", nil), logger, tt.err)
			if !strings.Contains(buf.String(), tt.want) {
				t.Errorf("logged %q, want %s", buf.String(), tt.want)
			}
		})
	}
}

func TestWriteSendsTheHeadersTheErrorCarries(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want http.Header
	}{
		{"challenge", New(problem.InvalidToken, "expired").WithChallenge(`Bearer error="invalid_token"`),
			http.Header{"Www-Authenticate": {`Bearer error="invalid_token"`}}},
		{"401 without a challenge", New(problem.Unauthorized, "no token"), http.Header{"Www-Authenticate": {"Bearer"}}},
		{"retry after", fmt.Errorf("q: %w", New(problem.QueueFull, "full").WithRetryAfter(3)), http.Header{"Retry-After": {"3"}}},
		{"retry after at least a second", New(problem.RateLimited, "slow").WithRetryAfter(0), http.Header{"Retry-After": {"1"}}},
		{"allow", &problem.Error{Code: problem.MethodNotAllowed, Message: "POST only", Allow: "POST"}, http.Header{"Allow": {"POST"}}},
		{"accept patch", &problem.Error{Code: problem.UnsupportedMediaType, Message: "m", AcceptPatch: "application/merge-patch+json"},
			http.Header{"Accept-Patch": {"application/merge-patch+json"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			Write(rec, httptest.NewRequest(http.MethodGet, "/x", nil), nil, tt.err)
			got := http.Header{}
			for _, k := range []string{"Www-Authenticate", "Retry-After", "Allow", "Accept-Patch"} {
				if v := rec.Header().Values(k); v != nil {
					got[k] = v
				}
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("headers (-want +got):\n%s", d)
			}
		})
	}
}

func TestWriteShapeAndLogging(t *testing.T) {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/x", nil)
	Write(rec, req, nil, New("invalid_value", "nested values are not allowed").At("/data/3/age"))
	if rec.Code != http.StatusBadRequest {
		t.Errorf("status %d, want 400", rec.Code)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	var got map[string]map[string]string
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatalf("body %q is not JSON: %v", rec.Body, err)
	}
	want := map[string]map[string]string{"error": {"type": "invalid_value", "message": "nested values are not allowed", "pointer": "/data/3/age"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("body (-want +got):\n%s", d)
	}

	rec = httptest.NewRecorder()
	Write(rec, req, nil, errors.New("secret cause"))
	got = nil
	json.Unmarshal(rec.Body.Bytes(), &got)
	if rec.Code != 500 || got["error"]["message"] != "internal error" {
		t.Errorf("internal failure answered %d %v, want 500 \"internal error\"", rec.Code, got)
	}
	if _, ok := got["error"]["pointer"]; ok {
		t.Errorf("pointer present without a place at fault: %v", got)
	}
}

func TestMediaTypeMessage(t *testing.T) {
	const want = "the body must be JSON"
	tests := []struct{ got, msg string }{
		{"application/x-www-form-urlencoded", want + "; got application/x-www-form-urlencoded"},
		{"", want + "; the request has no Content-Type"},
		{"text/plain; x=" + strings.Repeat("é", 60), want + "; got text/plain; x=" + strings.Repeat("é", 33) + "…"},
	}
	for _, tt := range tests {
		if got := MediaTypeMessage(want, tt.got); got != tt.msg {
			t.Errorf("MediaTypeMessage(%q) = %q, want %q", tt.got, got, tt.msg)
		}
	}
}

// TestWriteLogLevels checks that only faults of the server are logged at
// error level: an endpoint's timeout is a warning, what the client caused
// (a bad body, a missing token, leaving early) is for debugging.
func TestWriteLogLevels(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"internal", errors.New("disk on fire"), "level=ERROR"},
		{"endpoint timeout", context.DeadlineExceeded, "level=WARN"},
		{"client gone", context.Canceled, "level=DEBUG"},
		{"bad value", New("invalid_value", "nested values are not allowed"), "level=DEBUG"},
		{"unauthorized", &problem.Error{Status: http.StatusUnauthorized, Code: "unauthorized", Message: "no token"}, "level=DEBUG"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf strings.Builder
			logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
			Write(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/x", nil), logger, tt.err)
			if !strings.HasPrefix(buf.String(), "time=") || !strings.Contains(buf.String(), " "+tt.want+" ") {
				t.Errorf("logged %q, want %s", buf.String(), tt.want)
			}
		})
	}
}

func TestWriteListsEveryField(t *testing.T) {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/x", nil)
	e := New("validation_failed", "2 fields are invalid").At("/endpoints/0/alias")
	e.Fields = []problem.FieldError{
		{Pointer: "/endpoints/0/alias", Message: "is required"},
		{Pointer: "/endpoints/1/timeoutMs", Message: "must be at least 0"},
	}
	Write(rec, req, nil, e)
	var got struct {
		Error struct {
			Type    string               `json:"type"`
			Pointer string               `json:"pointer"`
			Fields  []problem.FieldError `json:"fields"`
		} `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatalf("body %q is not JSON: %v", rec.Body, err)
	}
	if got.Error.Pointer != "/endpoints/0/alias" {
		t.Errorf("pointer %q, want the first field's", got.Error.Pointer)
	}
	if d := cmp.Diff(e.Fields, got.Error.Fields); d != "" {
		t.Errorf("fields (-want +got):\n%s", d)
	}

	rec = httptest.NewRecorder()
	Write(rec, req, nil, New(problem.NotFound, "no such thing"))
	if bytes.Contains(rec.Body.Bytes(), []byte(`"fields"`)) {
		t.Errorf("an error without fields sent %s, want no fields member", rec.Body)
	}
}

func TestBearerChallenge(t *testing.T) {
	tests := []struct {
		realm, code, description, want string
	}{
		{"", "", "", "Bearer"},
		{"scorehub", "", "", `Bearer realm="scorehub"`},
		{"scorehub", "invalid_token", "the token expired", `Bearer realm="scorehub", error="invalid_token", error_description="the token expired"`},
		{"", "insufficient_scope", `a "quoted" \ word`, `Bearer error="insufficient_scope", error_description="a \"quoted\" \\ word"`},
	}
	for _, tt := range tests {
		if got := BearerChallenge(tt.realm, tt.code, tt.description); got != tt.want {
			t.Errorf("BearerChallenge(%q, %q, %q) = %s, want %s", tt.realm, tt.code, tt.description, got, tt.want)
		}
	}
}
