package httperr

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/scorehub/scorehub/registry"
)

func TestFromMapsEveryKnownError(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		status     int
		typ        string
		pointer    string
		safeReason bool // the message must not repeat the cause
	}{
		{"own error", New(http.StatusTeapot, "teapot", "short and stout"), http.StatusTeapot, "teapot", "", false},
		{"wrapped own error", fmt.Errorf("ctx: %w", New(400, "bad", "bad")), 400, "bad", "", false},
		{"body limit", &http.MaxBytesError{Limit: 10}, 413, TypeBodyTooLarge, "", false},
		{"read timeout", &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}, 408, TypeRequestTimeout, "", true},
		{"stale revision", &registry.ConflictError{Kind: "deployment", Name: "g/p", Want: 3, Current: 4}, 412, TypePrecondition, "", false},
		{"create existing", &registry.ConflictError{Kind: "group", Name: "g", Want: 0, Current: 1}, 409, TypeAlreadyExists, "", false},
		{"invalid reference", &registry.InvalidError{Pointer: "/endpoints/0/queue", Message: "no queue"}, 422, TypeInvalidRef, "/endpoints/0/queue", false},
		{"disabled", fmt.Errorf("x: %w", registry.ErrDisabled), 404, TypeDisabled, "", false},
		{"not found", fmt.Errorf("registry: deployment %q: %w", "g/p", registry.ErrNotFound), 404, TypeNotFound, "", false},
		{"in use", registry.ErrInUse, 409, TypeInUse, "", false},
		{"exists", registry.ErrExists, 409, TypeAlreadyExists, "", false},
		{"process missing", registry.ErrUnavailable, 503, TypeProcessMissing, "", true},
		{"closed store", registry.ErrClosed, 503, TypeUnavailable, "", true},
		{"deadline", context.DeadlineExceeded, 504, TypeTimeout, "", true},
		{"cancelled", context.Canceled, StatusClientClosedRequest, TypeClientGone, "", true},
		{"anything else", errors.New("disk on fire at /var/secret"), 500, TypeInternal, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := From(tt.err)
			if e.Status != tt.status || e.Type != tt.typ || e.Pointer != tt.pointer {
				t.Errorf("From = %d %s %q, want %d %s %q", e.Status, e.Type, e.Pointer, tt.status, tt.typ, tt.pointer)
			}
			if tt.safeReason && e.Message == tt.err.Error() {
				t.Errorf("message %q repeats the cause", e.Message)
			}
		})
	}
}

func TestWriteShapeAndLogging(t *testing.T) {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/x", nil)
	Write(rec, req, nil, New(http.StatusBadRequest, "invalid_value", "nested values are not allowed").At("/data/3/age"))
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

func TestWriteListsEveryField(t *testing.T) {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/x", nil)
	e := New(http.StatusBadRequest, "validation_failed", "2 fields are invalid").At("/endpoints/0/alias")
	e.Fields = []FieldError{
		{Pointer: "/endpoints/0/alias", Message: "is required"},
		{Pointer: "/endpoints/1/timeoutMs", Message: "must be at least 0"},
	}
	Write(rec, req, nil, e)
	var got struct {
		Error struct {
			Type    string       `json:"type"`
			Pointer string       `json:"pointer"`
			Fields  []FieldError `json:"fields"`
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
	Write(rec, req, nil, New(http.StatusNotFound, TypeNotFound, "no such thing"))
	if bytes.Contains(rec.Body.Bytes(), []byte(`"fields"`)) {
		t.Errorf("an error without fields sent %s, want no fields member", rec.Body)
	}
}
