package durability

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/e2e/internal/harness"
)

// crashClient talks to one run of the server. TestSoak uses it too.
type crashClient struct {
	base   string
	token  string
	client *http.Client
	// observe, when not nil, is told of every answer do receives.
	observe func(method, path string, status int, took time.Duration)
}

func newCrashClient(base string) *crashClient {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	return &crashClient{base: base, client: &http.Client{Transport: tr, Timeout: time.Minute}}
}

func (c *crashClient) close() { c.client.CloseIdleConnections() }

func (c *crashClient) adminToken(t *testing.T) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, c.base+"/api/rest/tokenservice", nil)
	req.SetBasicAuth("admin", harness.AdminPassword)
	res, err := c.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var got struct{ IDToken string }
	if err := json.NewDecoder(res.Body).Decode(&got); err != nil || res.StatusCode != http.StatusOK || got.IDToken == "" {
		t.Fatalf("token service: %d %v", res.StatusCode, err)
	}
	return got.IDToken
}

// do sends one request and reads the whole answer. err is not nil when no
// complete answer came: the request may or may not have taken effect.
func (c *crashClient) do(method, path, contentType, ifMatch, body string) (int, map[string]any, error) {
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if ifMatch != "" {
		req.Header.Set("If-Match", ifMatch)
	}
	var record func(int, time.Duration)
	if c.observe != nil {
		record = func(status int, d time.Duration) { c.observe(method, path, status, d) }
	}
	return c.roundTrip(req, record)
}

// roundTrip sends req through c's client and reads the whole answer as
// JSON, an empty one as nil. record, when not nil, is told the status and
// how long the answer took. err is not nil when no complete answer came.
func (c *crashClient) roundTrip(req *http.Request, record func(status int, d time.Duration)) (int, map[string]any, error) {
	start := time.Now()
	res, err := c.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, nil, err
	}
	if record != nil {
		record(res.StatusCode, time.Since(start))
	}
	var got map[string]any
	if len(b) > 0 {
		if err := json.Unmarshal(b, &got); err != nil {
			return 0, nil, fmt.Errorf("%s %s answered %d with no JSON: %w", req.Method, req.URL.Path, res.StatusCode, err)
		}
	}
	return res.StatusCode, got, nil
}

// crashRecord is a record as far as the test tells writes apart: a group
// (Enabled always true, no Endpoints) or a deployment.
type crashRecord struct {
	Exists      bool
	Revision    uint64
	Description string
	Enabled     bool
	Endpoints   string
}

// crashRecordOf reads a group's or a deployment's JSON.
func crashRecordOf(got map[string]any) crashRecord {
	r := crashRecord{Exists: true, Enabled: true}
	rev, _ := got["revision"].(float64)
	r.Revision = uint64(rev)
	r.Description, _ = got["description"].(string)
	if e, ok := got["enabled"].(bool); ok {
		r.Enabled = e
	}
	eps, _ := got["endpoints"].([]any)
	var s []string
	for _, e := range eps {
		e := e.(map[string]any)
		s = append(s, fmt.Sprintf("%v=%v/%v/%v", e["alias"], e["process"], e["queue"], e["timeoutMs"]))
	}
	r.Endpoints = strings.Join(s, ";")
	return r
}

// crashWrite is one write and the record it leaves when it takes effect.
type crashWrite struct {
	method, path, contentType, ifMatch, body string
	key                                      string // of the record written; "" for a job
	want                                     crashRecord
}

// crashWriter owns one group, crash-w<n>, and its deployments d0…d2, and
// writes them one write at a time, so that it knows what each must hold.
// TestSoak's management writers are crashWriters too.
type crashWriter struct {
	id      int
	rng     *rand.Rand
	group   string
	records map[string]crashRecord // by key: "" for the group, else the deployment path
	pending *crashWrite            // the write no complete answer came for
	jobs    []string               // jobs acknowledged this round
	seq     int
}

func newCrashWriter(id int, rng *rand.Rand) *crashWriter {
	return &crashWriter{id: id, rng: rng, group: "crash-w" + strconv.Itoa(id), records: map[string]crashRecord{}}
}

// path is where the record of key is read and written.
func (w *crashWriter) path(key string) string {
	if key == "" {
		return "/api/v1/webapigroups/" + w.group
	}
	return "/api/v1/deployments/" + w.group + "/" + key
}

// run writes until the server stops answering or, when until is not zero,
// until then.
func (w *crashWriter) run(t *testing.T, c *crashClient, acked *atomic.Int64, until time.Time) {
	for until.IsZero() || time.Now().Before(until) {
		wr := w.next()
		status, got, err := c.do(wr.method, wr.path, wr.contentType, wr.ifMatch, wr.body)
		if err != nil {
			w.pending = &wr
			return
		}
		if status/100 != 2 {
			t.Errorf("writer %d: %s %s answered %d %v, want 2xx", w.id, wr.method, wr.path, status, got)
			continue
		}
		acked.Add(1)
		if wr.key == "" && wr.path == "/executions/jobs" {
			id, _ := got["id"].(string)
			if id == "" {
				t.Errorf("writer %d: job submission answered %d %v without an id", w.id, status, got)
			}
			w.jobs = append(w.jobs, id)
			continue
		}
		have := crashRecord{}
		if status != http.StatusNoContent {
			have = crashRecordOf(got)
		}
		if have != wr.want {
			t.Errorf("writer %d: %s %s answered %+v, want %+v", w.id, wr.method, wr.path, have, wr.want)
		}
		w.records[wr.key] = have
	}
}

// next chooses the next write from the records as acknowledged.
func (w *crashWriter) next() crashWrite {
	w.seq++
	desc := fmt.Sprintf("writer %d write %d ", w.id, w.seq) + strings.Repeat(strconv.Itoa(w.seq%10), w.rng.IntN(3000))
	g := w.records[""]
	if !g.Exists {
		return crashWrite{method: http.MethodPost, path: "/api/v1/webapigroups", contentType: "application/json",
			body: crashJSON(map[string]any{"name": w.group, "description": desc}),
			want: crashRecord{Exists: true, Revision: 1, Description: desc, Enabled: true}}
	}
	deployments := 0
	for k, r := range w.records {
		if k != "" && r.Exists {
			deployments++
		}
	}
	switch n := w.rng.IntN(100); {
	case n < 15:
		return crashWrite{method: http.MethodPut, path: w.path(""), contentType: "application/json", ifMatch: crashETag(g.Revision),
			body: crashJSON(map[string]any{"description": desc}),
			want: crashRecord{Exists: true, Revision: g.Revision + 1, Description: desc, Enabled: true}}
	case n < 20 && deployments == 0:
		return crashWrite{method: http.MethodDelete, path: w.path(""), ifMatch: crashETag(g.Revision)}
	case n < 30:
		return crashWrite{method: http.MethodPost, path: "/executions/jobs", contentType: "application/json",
			key:  "",
			body: `{"process":"iris","data":[{"sepal_length":5.1,"sepal_width":3.5,"petal_length":1.4,"petal_width":0.2}]}`}
	}
	key := "d" + strconv.Itoa(w.rng.IntN(crashSlots))
	d := w.records[key]
	enabled := w.rng.IntN(2) == 0
	if !d.Exists {
		eps, want := w.endpoints()
		return crashWrite{method: http.MethodPost, path: "/api/v1/deployments", contentType: "application/json", key: key,
			body: crashJSON(map[string]any{"group": w.group, "path": key, "description": desc, "enabled": enabled, "endpoints": eps}),
			want: crashRecord{Exists: true, Revision: 1, Description: desc, Enabled: enabled, Endpoints: want}}
	}
	switch w.rng.IntN(10) {
	case 0, 1, 2, 3:
		eps, want := w.endpoints()
		return crashWrite{method: http.MethodPut, path: w.path(key), contentType: "application/json", ifMatch: crashETag(d.Revision), key: key,
			body: crashJSON(map[string]any{"description": desc, "enabled": enabled, "endpoints": eps}),
			want: crashRecord{Exists: true, Revision: d.Revision + 1, Description: desc, Enabled: enabled, Endpoints: want}}
	case 4, 5, 6, 7:
		return crashWrite{method: http.MethodPatch, path: w.path(key), contentType: "application/merge-patch+json", ifMatch: crashETag(d.Revision), key: key,
			body: crashJSON(map[string]any{"description": desc, "enabled": enabled}),
			want: crashRecord{Exists: true, Revision: d.Revision + 1, Description: desc, Enabled: enabled, Endpoints: d.Endpoints}}
	default:
		return crashWrite{method: http.MethodDelete, path: w.path(key), ifMatch: crashETag(d.Revision), key: key}
	}
}

// endpoints returns one to three endpoints for a body and as crashRecordOf
// reads them back.
func (w *crashWriter) endpoints() ([]map[string]any, string) {
	var eps []map[string]any
	var s []string
	for i := range 1 + w.rng.IntN(3) {
		timeout := []int{0, 1000, 5000}[w.rng.IntN(3)]
		alias := "a" + strconv.Itoa(i)
		eps = append(eps, map[string]any{"alias": alias, "process": "iris", "timeoutMs": timeout})
		s = append(s, fmt.Sprintf("%s=iris/DEFAULT/%d", alias, timeout))
	}
	return eps, strings.Join(s, ";")
}

// reconcile reads the writer's records from the restarted server: each must
// be as last acknowledged or, for the one write in flight at the kill, as
// that write would leave it. The records then hold what the server has.
func (w *crashWriter) reconcile(t *testing.T, round int, c *crashClient) {
	t.Helper()
	keys := []string{""}
	for i := range crashSlots {
		keys = append(keys, "d"+strconv.Itoa(i))
	}
	for _, key := range keys {
		status, got, err := c.do(http.MethodGet, w.path(key), "", "", "")
		if err != nil || (status != http.StatusOK && status != http.StatusNotFound) {
			t.Fatalf("round %d: GET %s: %d %v %v", round, w.path(key), status, got, err)
		}
		have := crashRecord{}
		if status == http.StatusOK {
			have = crashRecordOf(got)
		}
		want := w.records[key]
		if have == want {
			continue
		}
		if p := w.pending; p != nil && p.key == key && p.path != "/executions/jobs" && have == p.want {
			w.records[key] = have // the write in flight took effect, whole
			continue
		}
		what := "no write to it was in flight"
		if p := w.pending; p != nil && p.key == key && p.path != "/executions/jobs" {
			what = fmt.Sprintf("in flight: %s %s leaving %+v", p.method, p.path, crashShort(p.want))
		}
		t.Errorf("round %d: %s after the kill (-acknowledged +found; %s):\n%s", round, w.path(key), what,
			cmp.Diff(crashShort(want), crashShort(have)))
	}
	w.pending = nil
}

// crashShort shortens a record's description for messages.
func crashShort(r crashRecord) crashRecord {
	if len(r.Description) > 40 {
		r.Description = r.Description[:40] + "…"
	}
	return r
}

func crashETag(rev uint64) string { return `"` + strconv.FormatUint(rev, 10) + `"` }

func crashJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
