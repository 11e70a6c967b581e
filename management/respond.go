package management

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/go-json-experiment/json"
)

// timeOrNull is t for a member the answer shows as null when t is zero
// (a job not started, a token never used).
func timeOrNull(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// writeJSON sends v as a JSON answer with status.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	body, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		return fmt.Errorf("management: encode %T: %w", v, err)
	}
	body = append(body, '\n')
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
	return nil
}

// createdOrOK is the status of a PUT that stored revision rev: 201 when the
// write created the record (its first revision), 200 when it changed one.
func createdOrOK(rev uint64) int {
	if rev == 1 {
		return http.StatusCreated
	}
	return http.StatusOK
}

// quote quotes a name for a message.
func quote(s string) string { return strconv.Quote(s) }
