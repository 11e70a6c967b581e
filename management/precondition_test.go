package management

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/registry"
)

func TestPrecondition(t *testing.T) {
	tests := []struct {
		name     string
		ifMatch  []string // header values; nil: no header
		bodyRev  uint64
		status   int // of parsePrecondition's error, 0 for none
		exists   bool
		cur      uint64
		want     uint64 // revision to write with
		wantCode int    // of revision's error, 0 for none
	}{
		{name: "nothing asked, stored", exists: true, cur: 3, want: registry.AnyRevision},
		{name: "nothing asked, missing", want: registry.AnyRevision},
		{name: "current revision", ifMatch: []string{`"3"`}, exists: true, cur: 3, want: 3},
		{name: "stale revision", ifMatch: []string{`"2"`}, exists: true, cur: 3, wantCode: 412},
		{name: "one of a list", ifMatch: []string{`"1", "3"`}, exists: true, cur: 3, want: 3},
		{name: "list over two headers", ifMatch: []string{`"1"`, `"3"`}, exists: true, cur: 3, want: 3},
		{name: "star, stored", ifMatch: []string{"*"}, exists: true, cur: 3, want: 3},
		{name: "star, missing", ifMatch: []string{"*"}, wantCode: 412},
		{name: "revision of a missing record", ifMatch: []string{`"1"`}, wantCode: 412},
		{name: "weak tag never matches", ifMatch: []string{`W/"3"`}, exists: true, cur: 3, wantCode: 412},
		{name: "opaque tag never matches", ifMatch: []string{`"abc"`}, exists: true, cur: 3, wantCode: 412},
		{name: "unquoted", ifMatch: []string{`3`}, status: 400},
		{name: "empty", ifMatch: []string{``}, status: 400},
		{name: "stray quote", ifMatch: []string{`"3"x"`}, status: 400},
		{name: "body revision alone", bodyRev: 3, exists: true, cur: 3, want: 3},
		{name: "stale body revision", bodyRev: 2, exists: true, cur: 3, wantCode: 412},
		{name: "body agrees with If-Match", ifMatch: []string{`"2", "3"`}, bodyRev: 3, exists: true, cur: 3, want: 3},
		{name: "body disagrees with If-Match", ifMatch: []string{`"2"`}, bodyRev: 3, status: 400},
		{name: "body revision under star", ifMatch: []string{"*"}, bodyRev: 2, exists: true, cur: 3, wantCode: 412},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPut, "/", nil)
			for _, v := range tt.ifMatch {
				r.Header.Add("If-Match", v)
			}
			p, err := parsePrecondition(r, tt.bodyRev, "/revision")
			if got := statusOf(err); got != tt.status {
				t.Fatalf("parsePrecondition: status %d (%v), want %d", got, err, tt.status)
			}
			if err != nil {
				return
			}
			rev, err := p.revision("queue", "q", tt.exists, tt.cur, registry.AnyRevision)
			if got := statusOf(err); got != tt.wantCode {
				t.Fatalf("revision: status %d (%v), want %d", got, err, tt.wantCode)
			}
			if err == nil && rev != tt.want {
				t.Errorf("revision %d, want %d", rev, tt.want)
			}
		})
	}
}

func statusOf(err error) int {
	if err == nil {
		return 0
	}
	return httperr.From(err).Status
}
