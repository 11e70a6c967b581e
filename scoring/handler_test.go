package scoring_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring"
	"github.com/scorehub/scorehub/scoring/internal/wire"
)

// waitFor polls cond until it holds; the deadline only keeps a broken test
// from hanging.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testutil.Eventually(t, 30*time.Second, what, cond)
}

func TestHandlerRoutes(t *testing.T) {
	f := newFixture(t, scoring.Config{}, process.ProcessInfo{Name: "echo", Process: echo})
	long := strings.Repeat("a", 129)
	tests := []struct {
		name, method, target string
		want                 apiError
	}{
		{"the endpoint", "POST", "/DEFAULT/api/v1/services/demo/echo", apiError{}},
		{"escaped letters name the same endpoint", "POST", "/%44EFAULT/api/v1/services/d%65mo/echo", apiError{}},
		{"root", "POST", "/", apiError{Status: 404, Type: "not_found"}},
		{"group only", "POST", "/DEFAULT", apiError{Status: 404, Type: "not_found"}},
		{"no alias", "POST", "/DEFAULT/api/v1/services/demo", apiError{Status: 404, Type: "not_found"}},
		{"empty alias", "POST", "/DEFAULT/api/v1/services/demo/", apiError{Status: 404, Type: "not_found"}},
		{"a segment too many", "POST", "/DEFAULT/api/v1/services/demo/echo/x", apiError{Status: 404, Type: "not_found"}},
		{"another API version", "POST", "/DEFAULT/api/v2/services/demo/echo", apiError{Status: 404, Type: "not_found"}},
		{"an escaped slash", "POST", "/DEFAULT/api/v1/services/de%2Fmo/echo", apiError{Status: 404, Type: "not_found"}},
		{"dot-dot", "POST", "/DEFAULT/api/v1/services/../echo", apiError{Status: 404, Type: "not_found"}},
		{"escaped dot-dot", "POST", "/DEFAULT/api/v1/services/%2E%2E/echo", apiError{Status: 404, Type: "not_found"}},
		{"dot", "POST", "/DEFAULT/api/v1/services/demo/.", apiError{Status: 404, Type: "not_found"}},
		{"a leading dash", "POST", "/-DEFAULT/api/v1/services/demo/echo", apiError{Status: 404, Type: "not_found"}},
		{"a space", "POST", "/DEFAULT/api/v1/services/de%20mo/echo", apiError{Status: 404, Type: "not_found"}},
		{"an escaped percent sign", "POST", "/DEFAULT/api/v1/services/de%25mo/echo", apiError{Status: 404, Type: "not_found"}},
		{"an escaped percent sign before hex digits", "POST", "/DEFAULT/api/v1/services/de%2565mo/echo", apiError{Status: 404, Type: "not_found"}},
		{"a name too long", "POST", "/DEFAULT/api/v1/services/" + long + "/echo", apiError{Status: 404, Type: "not_found"}},
		{"an unknown group", "POST", "/other/api/v1/services/demo/echo", apiError{Status: 404, Type: "not_found"}},
		{"an unknown deployment", "POST", "/DEFAULT/api/v1/services/other/echo", apiError{Status: 404, Type: "not_found"}},
		{"an unknown alias", "POST", "/DEFAULT/api/v1/services/demo/other", apiError{Status: 404, Type: "not_found"}},
		{"names are case-sensitive", "POST", "/default/api/v1/services/demo/echo", apiError{Status: 404, Type: "not_found"}},
		{"GET", "GET", "/DEFAULT/api/v1/services/demo/echo", apiError{Status: 405, Type: "method_not_allowed"}},
		{"PUT", "PUT", "/DEFAULT/api/v1/services/demo/echo", apiError{Status: 405, Type: "method_not_allowed"}},
		{"GET on an unknown endpoint", "GET", "/DEFAULT/api/v1/services/demo/other", apiError{Status: 405, Type: "method_not_allowed"}},
		{"GET on another path", "GET", "/DEFAULT/api/v1/other", apiError{Status: 404, Type: "not_found"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := serve(f.h, tc.method, tc.target, "application/json", `{"data":[{"a":1}]}`)
			got := errorOf(t, w)
			got.Message = ""
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s\nbody %s", diff, w.Body)
			}
			if allow := w.Header().Get("Allow"); (tc.want.Status == 405) != (allow == "POST") {
				t.Errorf("Allow = %q", allow)
			}
		})
	}
}

// TestHandlerMountedUnderPrefix: behind http.StripPrefix or with
// Config.Prefix, the handler answers under the prefix only, and an escaped
// slash in a name is a 404 either way.
func TestHandlerMountedUnderPrefix(t *testing.T) {
	for _, own := range []bool{false, true} {
		t.Run(fmt.Sprintf("Config.Prefix=%v", own), func(t *testing.T) {
			cfg := scoring.Config{}
			if own {
				cfg.Prefix = "/webapi/"
			}
			f := newFixture(t, cfg, process.ProcessInfo{Name: "echo", Process: echo})
			mux := http.NewServeMux()
			if own {
				mux.Handle("/", f.h) // sees every path, as a handler mounted at the root
			} else {
				mux.Handle("/webapi/", http.StripPrefix("/webapi", f.h))
			}
			srv := httptest.NewServer(mux)
			defer srv.Close()
			for target, want := range map[string]int{
				"/webapi/DEFAULT/api/v1/services/demo/echo":        200,
				"/webapi/DEFAULT/api/v1/services/de%2Fmo/echo":     404,
				"/webapi/DEFAULT/api/v1/services/demo%2Fecho/echo": 404,
				"/DEFAULT/api/v1/services/demo/echo":               404,
				"/webapiDEFAULT/api/v1/services/demo/echo":         404,
				"/webap%69/DEFAULT/api/v1/services/demo/echo":      404,
			} {
				resp, err := http.Post(srv.URL+target, "application/json", strings.NewReader(`{"data":[{"a":1}]}`))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != want {
					t.Errorf("POST %s: %d, want %d", target, resp.StatusCode, want)
				}
			}
		})
	}
}

func TestHandlerContentType(t *testing.T) {
	f := newFixture(t, scoring.Config{}, process.ProcessInfo{Name: "echo", Process: echo})
	for ct, ok := range map[string]bool{
		"application/json":                   true,
		"application/json; charset=utf-8":    true,
		"application/json;charset=UTF-8":     true,
		"Application/JSON; charset=\"utf8\"": true,
		"application/json; foo=bar":          true,
		"":                                   false,
		"text/plain":                         false,
		"application/x-www-form-urlencoded":  false,
		"application/json; charset=latin1":   false,
		"application/json-patch+json":        false,
		"application/jsonx":                  false,
		"application/json; charset":          false,
	} {
		t.Run(ct, func(t *testing.T) {
			w := serve(f.h, "POST", "/DEFAULT/api/v1/services/demo/echo", ct, `{"data":[{"a":1}]}`)
			got := errorOf(t, w)
			if ok && got.Status != 0 {
				t.Errorf("refused: %+v", got)
			}
			if !ok && (got.Status != 415 || got.Type != "unsupported_media_type") {
				t.Errorf("answer %+v, want 415 unsupported_media_type", got)
			}
			// The answer names what was sent, so that a form posted by
			// curl -d is recognised for what it is.
			wantTail := "; got " + ct
			if ct == "" {
				wantTail = "; the request has no Content-Type"
			}
			if !ok && (!strings.HasPrefix(got.Message, "the request body must be JSON in UTF-8 (Content-Type: application/json)") || !strings.HasSuffix(got.Message, wantTail)) {
				t.Errorf("message %q, want one naming application/json and ending %q", got.Message, wantTail)
			}
		})
	}
}

// The issue's own test: a 20-digit ID and 1.10 come back unchanged.
func TestHandlerEchoesInputsExactly(t *testing.T) {
	f := newFixture(t, scoring.Config{}, process.ProcessInfo{Name: "double", Process: double})
	w := f.post("double", "", `{"data":[{"id":12345678901234567890,"x":1.10,"name":"caf\u00e9","ok":true,"none":null}]}`)
	if w.Code != 200 {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	want := `{"data":[{"id":12345678901234567890,"x":1.10,"name":"caf\u00e9","ok":true,"none":null,"double":2.2}]}` + "\n"
	if got := w.Body.String(); got != want {
		t.Errorf("body\n got %s\nwant %s", got, want)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
}

// TestHandlerResultNamesChange: a process whose result columns change
// from one request to the next (here named by a macro) is answered with
// the names of each request's own result, whatever the one before had.
func TestHandlerResultNamesChange(t *testing.T) {
	named := process.ProcessFunc(func(_ context.Context, in process.Input) (*process.Table, error) {
		names := strings.Split(in.Macros["names"], ",")
		cols := make([]process.Column, len(names))
		for i, n := range names {
			cols[i] = process.NumberColumn(n, []float64{float64(i)}, nil)
		}
		return process.NewTable(1, cols...)
	})
	f := newFixture(t, scoring.Config{}, process.ProcessInfo{Name: "named", Process: named})
	for _, names := range []string{"p,q", "p,q", "p,r", "r", "p,q", "q,p", `a\"b,q`} {
		w := f.post("named", "names="+url.QueryEscape(names), `{"data":[{"x":1}]}`)
		var want strings.Builder
		want.WriteString(`{"data":[{"x":1`)
		for i, n := range strings.Split(names, ",") {
			b, _ := json.Marshal(n)
			fmt.Fprintf(&want, ",%s:%d", b, i)
		}
		want.WriteString("}]}\n")
		if w.Code != http.StatusOK || w.Body.String() != want.String() {
			t.Errorf("names %q: %d %s, want %s", names, w.Code, w.Body, want.String())
		}
	}
}

func TestHandlerStreamsLargeResponses(t *testing.T) {
	f := newFixture(t, scoring.Config{}, process.ProcessInfo{Name: "double", Process: double})
	var b strings.Builder
	b.WriteString(`{"data":[`)
	for i := range 5000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"x":%d,"label":"row number %d"}`, i, i)
	}
	b.WriteString(`]}`)
	body := b.String()

	req, err := wire.Decode(strings.NewReader(body), wire.Limits{MaxBodyBytes: scoring.DefaultMaxBodyBytes,
		MaxRows: scoring.DefaultMaxRows, MaxColumns: scoring.DefaultMaxColumns, MaxCells: scoring.DefaultMaxCells})
	if err != nil {
		t.Fatal(err)
	}
	result, err := double.Score(context.Background(), process.Input{Table: req.Table})
	if err != nil {
		t.Fatal(err)
	}
	want, err := wire.AppendResponse(nil, req, result)
	if err != nil {
		t.Fatal(err)
	}

	w := f.post("double", "", body)
	if w.Code != 200 {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	if got := w.Body.String(); got != string(want) {
		t.Errorf("streamed body differs from AppendResponse (%d vs %d bytes)", len(got), len(want))
	}
}

// TestHandlerStreamsWideAnswers: an answer of wide rows, whose rows grow
// longer as it goes, is encoded in parts sized by the rows before them and
// reads as a single pass writes it.
func TestHandlerStreamsWideAnswers(t *testing.T) {
	const width = 200
	names := make([]string, width)
	for j := range names {
		names[j] = fmt.Sprintf("score(%d)", j)
	}
	wide := process.ProcessFunc(func(_ context.Context, in process.Input) (*process.Table, error) {
		n := in.Table.Rows()
		cols := make([]process.Column, width)
		for j := range cols {
			v := make([]float64, n)
			for i := range v {
				v[i] = float64(i*j) / 7
			}
			cols[j] = process.NumberColumn(names[j], v, nil)
		}
		return process.NewTable(n, cols...)
	})
	f := newFixture(t, scoring.Config{}, process.ProcessInfo{Name: "wide", Process: wide})
	var b strings.Builder
	b.WriteString(`{"data":[`)
	for i := range 4000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"x":%d,"label":%q}`, i, strings.Repeat("w", i/4))
	}
	b.WriteString(`]}`)
	body := b.String()

	req, err := wire.Decode(strings.NewReader(body), wire.Limits{MaxBodyBytes: scoring.DefaultMaxBodyBytes,
		MaxRows: scoring.DefaultMaxRows, MaxColumns: scoring.DefaultMaxColumns, MaxCells: scoring.DefaultMaxCells})
	if err != nil {
		t.Fatal(err)
	}
	result, err := wide.Score(context.Background(), process.Input{Table: req.Table})
	if err != nil {
		t.Fatal(err)
	}
	want, err := wire.AppendResponse(nil, req, result)
	if err != nil {
		t.Fatal(err)
	}
	w := f.post("wide", "", body)
	if w.Code != 200 {
		t.Fatalf("status %d: %.200s", w.Code, w.Body)
	}
	if got := w.Body.String(); got != string(want) {
		t.Errorf("streamed body differs from AppendResponse (%d vs %d bytes)", len(got), len(want))
	}
}

func TestHandlerMacros(t *testing.T) {
	var got atomic.Pointer[map[string]string]
	macros := process.ProcessFunc(func(_ context.Context, in process.Input) (*process.Table, error) {
		got.Store(&in.Macros)
		return process.NewTable(in.Table.Rows())
	})
	f := newFixture(t, scoring.Config{}, process.ProcessInfo{Name: "macros", Process: macros})
	tests := []struct {
		query string
		want  map[string]string
		err   apiError
	}{
		{"", nil, apiError{}},
		{"threshold=0.7", map[string]string{"threshold": "0.7"}, apiError{}},
		{"threshold=0.7&mode=fast+mode&flag&empty=", map[string]string{"threshold": "0.7", "mode": "fast mode", "flag": "", "empty": ""}, apiError{}},
		{"name=%C3%A9t%C3%A9", map[string]string{"name": "été"}, apiError{}},
		{"threshold=0.7&threshold=0.8", nil, apiError{Status: 400, Type: "duplicate_macro"}},
		{"a=1&a=1", nil, apiError{Status: 400, Type: "duplicate_macro"}},
		{"a=%zz", nil, apiError{Status: 400, Type: "invalid_request"}},
		{"=x", nil, apiError{Status: 400, Type: "invalid_request"}},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			got.Store(nil)
			w := f.post("macros", tc.query, `{"data":[{"a":1}]}`)
			e := errorOf(t, w)
			e.Message = ""
			if diff := cmp.Diff(tc.err, e); diff != "" {
				t.Fatalf("answer (-want +got):\n%s", diff)
			}
			if tc.err.Status != 0 {
				if got.Load() != nil {
					t.Error("the process ran for a refused request")
				}
				return
			}
			if diff := cmp.Diff(tc.want, *got.Load()); diff != "" {
				t.Errorf("macros (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHandlerEmptyDataSkipsTheProcess(t *testing.T) {
	var calls atomic.Int32
	counting := process.ProcessFunc(func(_ context.Context, in process.Input) (*process.Table, error) {
		calls.Add(1)
		return process.NewTable(in.Table.Rows())
	})
	schema := []process.ColumnSpec{{Name: "x", Kind: process.Number, Required: true}}
	f := newFixture(t, scoring.Config{}, process.ProcessInfo{Name: "count", Process: counting, Input: schema})
	for _, body := range []string{`{"data":[]}`, `{"schema":{"fields":[]},"data":[ ]}`} {
		w := f.post("count", "", body)
		if w.Code != 200 || w.Body.String() != `{"data":[]}`+"\n" {
			t.Errorf("%s: %d %s", body, w.Code, w.Body)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("the process ran %d times", n)
	}
}

func TestHandlerLimits(t *testing.T) {
	f := newFixture(t, scoring.Config{Limits: scoring.Limits{MaxBodyBytes: 64, MaxRows: 2, MaxColumns: 2, MaxCells: 3}},
		process.ProcessInfo{Name: "echo", Process: echo})
	tests := []struct {
		name string
		body string
		want string
	}{
		{"body", `{"data":[{"a":"` + strings.Repeat("x", 64) + `"}]}`, "body_too_large"},
		{"rows", `{"data":[{},{},{}]}`, "too_many_rows"},
		{"columns", `{"data":[{"a":1,"b":2,"c":3}]}`, "too_many_columns"},
		{"cells", `{"data":[{"a":1},{"b":2}]}`, "too_many_cells"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := errorOf(t, f.post("echo", "", tc.body))
			if got.Status != 413 || got.Type != tc.want {
				t.Errorf("answer %+v, want 413 %s", got, tc.want)
			}
		})
	}
	t.Run("body of unknown length", func(t *testing.T) {
		r := httptest.NewRequest("POST", "/DEFAULT/api/v1/services/demo/echo",
			io.MultiReader(strings.NewReader(`{"data":[{"a":"`), strings.NewReader(strings.Repeat("x", 100)+`"}]}`)))
		r.Header.Set("Content-Type", "application/json")
		if r.ContentLength != -1 {
			t.Fatalf("ContentLength = %d", r.ContentLength)
		}
		w := httptest.NewRecorder()
		f.h.ServeHTTP(w, r)
		if got := errorOf(t, w); got.Status != 413 || got.Type != "body_too_large" {
			t.Errorf("answer %+v", got)
		}
	})
	t.Run("announced length over the limit", func(t *testing.T) {
		var read atomic.Bool
		r := httptest.NewRequest("POST", "/DEFAULT/api/v1/services/demo/echo", readFunc(func(p []byte) (int, error) {
			read.Store(true)
			return 0, io.EOF
		}))
		r.ContentLength = 1 << 20
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		f.h.ServeHTTP(w, r)
		if got := errorOf(t, w); got.Status != 413 {
			t.Errorf("answer %+v", got)
		}
		if read.Load() {
			t.Error("the body was read although its announced length is over the limit")
		}
	})
}

type readFunc func(p []byte) (int, error)

func (f readFunc) Read(p []byte) (int, error) { return f(p) }

func TestHandlerSchema(t *testing.T) {
	var seen atomic.Pointer[[]colView]
	record := process.ProcessFunc(func(_ context.Context, in process.Input) (*process.Table, error) {
		v := viewTable(in.Table)
		seen.Store(&v)
		return process.NewTable(in.Table.Rows())
	})
	schema := []process.ColumnSpec{{Name: "age", Kind: process.Number, Required: true}, {Name: "score", Kind: process.Number}}
	f := newFixture(t, scoring.Config{}, process.ProcessInfo{Name: "p", Process: record, Input: schema})

	w := f.post("p", "", `{"data":[{"name":"x"}]}`)
	if got := errorOf(t, w); got.Status != 400 || got.Type != "schema_mismatch" || !strings.Contains(got.Message, `"age"`) {
		t.Errorf("missing required column: %+v", got)
	}
	w = f.post("p", "", `{"data":[{"age":"old"}]}`)
	if got := errorOf(t, w); got.Status != 400 || got.Type != "schema_mismatch" || got.Pointer != "/data/0/age" {
		t.Errorf("wrong kind: %+v", got)
	}
	if seen.Load() != nil {
		t.Fatal("the process ran for a request that breaks its schema")
	}
	w = f.post("p", "", `{"data":[{"age":3,"score":null}]}`)
	if w.Code != 200 {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	if diff := cmp.Diff([]colView{num("age", 3.0), num("score", nil)}, *seen.Load()); diff != "" {
		t.Errorf("the process saw (-want +got):\n%s", diff)
	}
}

func TestHandlerProcessFailures(t *testing.T) {
	procs := []process.ProcessInfo{
		{Name: "panics", Process: process.ProcessFunc(func(context.Context, process.Input) (*process.Table, error) {
			panic("the model file is corrupt")
		})},
		{Name: "short", Process: process.ProcessFunc(func(_ context.Context, in process.Input) (*process.Table, error) {
			return process.NewTable(in.Table.Rows()-1, process.NumberColumn("r", make([]float64, in.Table.Rows()-1), nil))
		})},
		{Name: "nil", Process: process.ProcessFunc(func(context.Context, process.Input) (*process.Table, error) {
			return nil, nil
		})},
		{Name: "fails", Process: process.ProcessFunc(func(context.Context, process.Input) (*process.Table, error) {
			return nil, errors.New("database password is hunter2")
		})},
		{Name: "own-timeout", Process: process.ProcessFunc(func(context.Context, process.Input) (*process.Table, error) {
			return nil, fmt.Errorf("calling the model server: %w", context.DeadlineExceeded)
		})},
		{Name: "own-not-found", Process: process.ProcessFunc(func(context.Context, process.Input) (*process.Table, error) {
			return nil, fmt.Errorf("lookup: %w", registry.ErrNotFound)
		})},
		{Name: "rejects", Process: process.ProcessFunc(func(context.Context, process.Input) (*process.Table, error) {
			return nil, fmt.Errorf("checking input: %w", &problem.Error{Status: 422, Code: "unknown_category", Message: "the category is unknown", Pointer: "/data/1/cat"})
		})},
	}
	for _, prompt := range []bool{false, true} {
		t.Run(fmt.Sprintf("prompt=%v", prompt), func(t *testing.T) {
			for i := range procs {
				procs[i].Prompt = prompt
			}
			testProcessFailures(t, newFixture(t, scoring.Config{}, procs...))
		})
	}
}

// testProcessFailures checks the answers to the processes of
// TestHandlerProcessFailures, run on a worker or on the request's
// goroutine.
func testProcessFailures(t *testing.T, f *fixture) {
	internal := apiError{Status: 500, Type: "internal_error", Message: "internal error"}
	tests := []struct {
		alias string
		want  apiError
		log   []string
	}{
		{"panics", internal, []string{"process panicked", "the model file is corrupt", "goroutine", "execute.go"}},
		{"short", internal, []string{"returned 1 rows for 2 input rows"}},
		{"nil", internal, []string{"no table"}},
		{"fails", internal, []string{"database password is hunter2"}},
		{"own-timeout", internal, []string{"calling the model server"}},
		{"own-not-found", internal, []string{"lookup"}},
		{"rejects", apiError{Status: 422, Type: "unknown_category", Message: "the category is unknown", Pointer: "/data/1/cat"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.alias, func(t *testing.T) {
			w := f.post(tc.alias, "", `{"data":[{"a":1},{"a":2}]}`)
			if diff := cmp.Diff(tc.want, errorOf(t, w)); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			logged := f.log.String()
			for _, s := range tc.log {
				if !strings.Contains(logged, s) {
					t.Errorf("the log lacks %q", s)
				}
			}
		})
	}
	st, _ := f.h.Queues().Stat(registry.DefaultQueue)
	if st.Failed != uint64(len(tests)) || st.Running != 0 {
		t.Errorf("queue figures %+v, want %d failed, none running", st, len(tests))
	}
}

// TestHandlerTimeout runs in a synctest bubble: the 20 ms deadlines pass
// on its clock, and the figures are read once every goroutine waits.
func TestHandlerTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		procs := []process.ProcessInfo{
			{Name: "heeds", Process: process.ProcessFunc(func(ctx context.Context, _ process.Input) (*process.Table, error) {
				<-ctx.Done()
				return nil, ctx.Err()
			})},
			{Name: "ignores", Process: process.ProcessFunc(func(_ context.Context, in process.Input) (*process.Table, error) {
				<-release
				return process.NewTable(in.Table.Rows())
			})},
		}
		f := newFixture(t, scoring.Config{DefaultTimeout: 20 * time.Millisecond}, procs...)
		for _, alias := range []string{"heeds", "ignores"} {
			if got := errorOf(t, f.post(alias, "", `{"data":[{"a":1}]}`)); got.Status != 504 || got.Type != "timeout" {
				t.Errorf("%s: answer %+v, want 504 timeout", alias, got)
			}
		}
		// The endpoint ran out of its own time: the server is well, so the
		// answer is no level=ERROR line an operator would be paged for.
		var timeouts int
		for _, line := range strings.Split(f.log.String(), "\n") {
			if strings.Contains(line, "status=504") {
				timeouts++
				if !strings.Contains(line, "level=WARN") {
					t.Errorf("504 logged as %q, want level=WARN", line)
				}
			}
		}
		if timeouts != 2 {
			t.Errorf("%d answers of 504 logged, want 2; log:\n%s", timeouts, f.log)
		}
		synctest.Wait()
		st, _ := f.h.Queues().Stat(registry.DefaultQueue)
		if st.TimedOut != 1 || st.Running != 1 {
			t.Errorf("figures %+v: the heeding process returns, and one that ignores its context keeps its slot until it returns", st)
		}
		close(release)
		synctest.Wait()
		st, _ = f.h.Queues().Stat(registry.DefaultQueue)
		if st.TimedOut != 2 || st.Completed != 0 {
			t.Errorf("figures %+v, want 2 timed out", st)
		}
		time.Sleep(workersIdleOut)
	})
}

// TestHandlerPromptTimeout: a process marked Prompt hears of the deadline
// by Err as well as by Done and is answered 504; one that breaks the
// promise by ignoring its context holds the answer until it returns. The
// deadlines pass on the bubble's clock.
func TestHandlerPromptTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		returned := make(chan struct{})
		procs := []process.ProcessInfo{
			{Name: "waits", Prompt: true, Process: process.ProcessFunc(func(ctx context.Context, _ process.Input) (*process.Table, error) {
				<-ctx.Done()
				return nil, ctx.Err()
			})},
			{Name: "polls", Prompt: true, Process: process.ProcessFunc(func(ctx context.Context, _ process.Input) (*process.Table, error) {
				for ctx.Err() == nil {
					time.Sleep(time.Millisecond)
				}
				return nil, ctx.Err()
			})},
			{Name: "ignores", Prompt: true, Process: process.ProcessFunc(func(_ context.Context, in process.Input) (*process.Table, error) {
				<-release
				defer close(returned)
				return process.NewTable(in.Table.Rows())
			})},
		}
		f := newFixture(t, scoring.Config{DefaultTimeout: 20 * time.Millisecond}, procs...)
		for _, alias := range []string{"waits", "polls"} {
			if got := errorOf(t, f.post(alias, "", `{"data":[{"a":1}]}`)); got.Status != 504 || got.Type != "timeout" {
				t.Errorf("%s: answer %+v, want 504 timeout", alias, got)
			}
		}
		answer := make(chan apiError, 1)
		go func() { answer <- errorOf(t, f.post("ignores", "", `{"data":[{"a":1}]}`)) }()
		time.Sleep(40 * time.Millisecond) // past the 20 ms timeout
		synctest.Wait()
		if st, _ := f.h.Queues().Stat(registry.DefaultQueue); st.Running != 1 {
			t.Fatalf("figures %+v past the deadline, want the ignoring process running", st)
		}
		select {
		case got := <-answer:
			t.Fatalf("answered %+v before the prompt process returned", got)
		default:
		}
		close(release)
		got := <-answer
		select {
		case <-returned:
		default:
			t.Error("answered before the process returned")
		}
		if got.Status != 504 || got.Type != "timeout" {
			t.Errorf("answer %+v, want 504 timeout", got)
		}
		st, _ := f.h.Queues().Stat(registry.DefaultQueue)
		if st.TimedOut != 3 || st.Running != 0 {
			t.Errorf("figures %+v, want 3 timed out, none running", st)
		}
	})
}

func TestHandlerEndpointTimeoutOverridesDefault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := process.ProcessFunc(func(ctx context.Context, in process.Input) (*process.Table, error) {
			if _, ok := ctx.Deadline(); !ok {
				return nil, errors.New("no deadline")
			}
			<-ctx.Done()
			return nil, ctx.Err()
		})
		f := newFixture(t, scoring.Config{DefaultTimeout: time.Hour}, process.ProcessInfo{Name: "slow", Process: slow})
		f.putDeployment(t, registry.Deployment{Group: "DEFAULT", Path: "demo", Enabled: true,
			Endpoints: []registry.Endpoint{{Alias: "slow", Process: "slow", Timeout: 10 * time.Millisecond}}})
		start := time.Now()
		if got := errorOf(t, f.post("slow", "", `{"data":[{"a":1}]}`)); got.Status != 504 {
			t.Errorf("answer %+v, want 504", got)
		}
		if took := time.Since(start); took != 10*time.Millisecond {
			t.Errorf("answered after %v, want at the endpoint's 10 ms", took)
		}
		time.Sleep(workersIdleOut)
	})
}

// blocker is a process that signals when it starts and returns when
// released (or its context ends).
type blocker struct {
	started chan struct{}
	release chan struct{}
}

func newBlocker() *blocker {
	return &blocker{started: make(chan struct{}, 16), release: make(chan struct{})}
}

func (b *blocker) Score(ctx context.Context, in process.Input) (*process.Table, error) {
	b.started <- struct{}{}
	select {
	case <-b.release:
		return process.NewTable(in.Table.Rows())
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func TestHandlerQueueFull(t *testing.T) {
	b := newBlocker()
	f := newFixture(t, scoring.Config{RetryAfter: 2500 * time.Millisecond}, process.ProcessInfo{Name: "block", Process: b})
	f.putQueue(t, registry.Queue{Name: "small", MaxConcurrent: 1, MaxWaiting: 1})
	f.putDeployment(t, registry.Deployment{Group: "DEFAULT", Path: "demo", Enabled: true,
		Endpoints: []registry.Endpoint{{Alias: "block", Process: "block", Queue: "small"}}})

	codes := make(chan int, 2)
	for range 2 {
		go func() { codes <- f.post("block", "", `{"data":[{"a":1}]}`).Code }()
	}
	<-b.started
	waitFor(t, "a request waiting", func() bool {
		st, _ := f.h.Queues().Stat("small")
		return st.Waiting == 1
	})
	w := f.post("block", "", `{"data":[{"a":1}]}`)
	if got := errorOf(t, w); got.Status != 503 || got.Type != "queue_full" {
		t.Errorf("answer %+v, want 503 queue_full", got)
	}
	if ra := w.Header().Get("Retry-After"); ra != "3" {
		t.Errorf("Retry-After = %q, want 3", ra)
	}
	close(b.release)
	for range 2 {
		if code := <-codes; code != 200 {
			t.Errorf("a queued request got %d", code)
		}
	}
	st, _ := f.h.Queues().Stat("small")
	want := scoring.QueueStats{Name: "small", MaxConcurrent: 1, MaxWaiting: 1, Completed: 2, Rejected: 1}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("figures (-want +got):\n%s", diff)
	}
}

// TestHandlerClientDisconnectCancelsTheProcess: when the client leaves, the
// process's context ends with context.Canceled, whether the process waits
// on Done or polls Err, on a worker or on the request's goroutine.
func TestHandlerClientDisconnectCancelsTheProcess(t *testing.T) {
	waits := func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	}
	polls := func(ctx context.Context) error {
		for ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		return ctx.Err()
	}
	for _, prompt := range []bool{false, true} {
		for name, wait := range map[string]func(context.Context) error{"Done": waits, "Err": polls} {
			t.Run(fmt.Sprintf("prompt=%v/%s", prompt, name), func(t *testing.T) {
				testClientDisconnect(t, prompt, wait)
			})
		}
	}
}

func testClientDisconnect(t *testing.T, prompt bool, wait func(context.Context) error) {
	started := make(chan struct{})
	cause := make(chan error, 1)
	p := process.ProcessFunc(func(ctx context.Context, in process.Input) (*process.Table, error) {
		close(started)
		err := wait(ctx)
		cause <- err
		return nil, err
	})
	f := newFixture(t, scoring.Config{DefaultTimeout: time.Hour}, process.ProcessInfo{Name: "wait", Process: p, Prompt: prompt})
	srv := httptest.NewServer(f.h)
	defer srv.Close()

	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "POST", srv.URL+"/DEFAULT/api/v1/services/demo/wait", strings.NewReader(`{"data":[{"a":1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	done := make(chan error, 1)
	go func() {
		resp, err := srv.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	<-started
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("client: %v", err)
	}
	if err := <-cause; !errors.Is(err, context.Canceled) {
		t.Errorf("the process's context ended with %v, want context.Canceled", err)
	}
	waitFor(t, "the execution to be counted", func() bool {
		st, _ := f.h.Queues().Stat(registry.DefaultQueue)
		return st.Cancelled == 1 && st.Running == 0
	})
}

// TestHandlerNotFoundSaysNoMore: an address that resolves to nothing is
// answered with a sentence about what the client sent, never with the Go
// error chain behind it, which goes to the log.
func TestHandlerNotFoundSaysNoMore(t *testing.T) {
	f := newFixture(t, scoring.Config{}, process.ProcessInfo{Name: "echo", Process: echo})
	f.putDeployment(t, registry.Deployment{Group: "DEFAULT", Path: "off", Enabled: false,
		Endpoints: []registry.Endpoint{{Alias: "echo", Process: "echo"}}})
	tests := []struct {
		name, target string
		typ          string
	}{
		{"unknown group", "/nope/api/v1/services/demo/echo", "not_found"},
		{"unknown deployment", "/DEFAULT/api/v1/services/nope/echo", "not_found"},
		{"unknown alias", "/DEFAULT/api/v1/services/demo/nope", "not_found"},
		{"disabled deployment", "/DEFAULT/api/v1/services/off/echo", "endpoint_disabled"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := errorOf(t, serve(f.h, "POST", tc.target, "application/json", `{"data":[{"a":1}]}`))
			if got.Status != 404 || got.Type != tc.typ {
				t.Fatalf("answer %+v, want 404 %s", got, tc.typ)
			}
			if got.Message == "" || strings.Contains(got.Message, "registry") || strings.Contains(got.Message, "scoring:") {
				t.Errorf("message %q, want one sentence without the error chain", got.Message)
			}
		})
	}
}

func TestHandlerSeesLiveChanges(t *testing.T) {
	f := newFixture(t, scoring.Config{},
		process.ProcessInfo{Name: "echo", Process: echo}, process.ProcessInfo{Name: "double", Process: double})
	body := `{"data":[{"x":2}]}`
	if got := errorOf(t, serve(f.h, "POST", "/DEFAULT/api/v1/services/v2/d", "application/json", body)); got.Status != 404 {
		t.Fatalf("before the deployment: %+v", got)
	}
	f.putDeployment(t, registry.Deployment{Group: "DEFAULT", Path: "v2", Enabled: true,
		Endpoints: []registry.Endpoint{{Alias: "d", Process: "double"}}})
	w := serve(f.h, "POST", "/DEFAULT/api/v1/services/v2/d", "application/json", body)
	if w.Code != 200 || w.Body.String() != `{"data":[{"x":2,"double":4}]}`+"\n" {
		t.Fatalf("after the deployment: %d %s", w.Code, w.Body)
	}
	f.putDeployment(t, registry.Deployment{Group: "DEFAULT", Path: "v2", Enabled: true,
		Endpoints: []registry.Endpoint{{Alias: "d", Process: "echo"}}})
	if w := serve(f.h, "POST", "/DEFAULT/api/v1/services/v2/d", "application/json", body); w.Body.String() != body+"\n" {
		t.Errorf("after switching the process: %s", w.Body)
	}
	f.putDeployment(t, registry.Deployment{Group: "DEFAULT", Path: "v2", Enabled: false,
		Endpoints: []registry.Endpoint{{Alias: "d", Process: "echo"}}})
	if got := errorOf(t, serve(f.h, "POST", "/DEFAULT/api/v1/services/v2/d", "application/json", body)); got.Status != 404 || got.Type != "endpoint_disabled" {
		t.Errorf("after disabling: %+v", got)
	}
	f.putDeployment(t, registry.Deployment{Group: "DEFAULT", Path: "v2", Enabled: true,
		Endpoints: []registry.Endpoint{{Alias: "d", Process: "not-registered"}}})
	if got := errorOf(t, serve(f.h, "POST", "/DEFAULT/api/v1/services/v2/d", "application/json", body)); got.Status != 503 || got.Type != "process_unavailable" {
		t.Errorf("with a process missing from the catalog: %+v", got)
	}
}

func TestHandlerAuthorize(t *testing.T) {
	tests := []struct {
		name      string
		authorize func(*http.Request, string, registry.AuthPolicy) error
		want      apiError
		challenge string
	}{
		{"no Authorize refuses", nil, apiError{Status: 401, Type: "unauthorized"}, "Bearer"},
		{"allowed", func(*http.Request, string, registry.AuthPolicy) error { return nil }, apiError{}, ""},
		{"unauthorized", func(*http.Request, string, registry.AuthPolicy) error {
			return fmt.Errorf("no token: %w", scoring.ErrUnauthorized)
		},
			apiError{Status: 401, Type: "unauthorized"}, "Bearer"},
		{"unauthorized with a challenge", func(*http.Request, string, registry.AuthPolicy) error {
			return fmt.Errorf("bad token: %w", &problem.Error{Status: 401, Code: "unauthorized",
				Message: "this endpoint needs a valid token", Challenge: `Bearer realm="scorehub", error="invalid_token"`})
		}, apiError{Status: 401, Type: "unauthorized"}, `Bearer realm="scorehub", error="invalid_token"`},
		{"forbidden", func(*http.Request, string, registry.AuthPolicy) error { return scoring.ErrForbidden },
			apiError{Status: 403, Type: "forbidden"}, ""},
		{"an *Error as it is", func(*http.Request, string, registry.AuthPolicy) error {
			return &problem.Error{Status: 429, Code: "rate_limited", Message: "slow down"}
		}, apiError{Status: 429, Type: "rate_limited", Message: "slow down"}, ""},
		{"any other error fails closed", func(*http.Request, string, registry.AuthPolicy) error { return errors.New("key store down") },
			apiError{Status: 500, Type: "internal_error", Message: "internal error"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			var policy atomic.Pointer[registry.AuthPolicy]
			cfg := scoring.Config{}
			if tc.authorize != nil {
				cfg.Authorize = func(r *http.Request, group string, p registry.AuthPolicy) error {
					calls.Add(1)
					policy.Store(&p)
					return tc.authorize(r, group, p)
				}
			}
			f := newFixture(t, cfg, process.ProcessInfo{Name: "echo", Process: echo})
			if _, err := f.reg.PutGroup(context.Background(), registry.Group{Name: "secure",
				Auth: registry.AuthPolicy{Mode: registry.TokenRequired, Groups: []string{"analysts"}}}); err != nil {
				t.Fatal(err)
			}
			f.putDeployment(t, registry.Deployment{Group: "secure", Path: "demo", Enabled: true,
				Endpoints: []registry.Endpoint{{Alias: "echo", Process: "echo"}}})

			// A public group never asks.
			if w := f.post("echo", "", `{"data":[{"a":1}]}`); w.Code != 200 || calls.Load() != 0 {
				t.Fatalf("public group: %d, Authorize called %d times", w.Code, calls.Load())
			}
			// The check comes before the body is looked at.
			w := serve(f.h, "POST", "/secure/api/v1/services/demo/echo", "text/plain", `not json`)
			got := errorOf(t, w)
			if tc.want.Status == 0 {
				tc.want = apiError{Status: 415, Type: "unsupported_media_type"}
			}
			if tc.want.Message == "" {
				got.Message = ""
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			if h := w.Header().Get("WWW-Authenticate"); h != tc.challenge {
				t.Errorf("WWW-Authenticate = %q, want %q", h, tc.challenge)
			}
			if tc.authorize != nil {
				want := registry.AuthPolicy{Mode: registry.TokenRequired, Groups: []string{"analysts"}}
				if p := policy.Load(); p == nil || !cmp.Equal(*p, want) {
					t.Errorf("Authorize got policy %v, want %v", p, want)
				}
			}
		})
	}
}

func TestHandlerResponsesAreJSON(t *testing.T) {
	f := newFixture(t, scoring.Config{}, process.ProcessInfo{Name: "echo", Process: echo})
	for _, w := range []*httptest.ResponseRecorder{
		f.post("echo", "", `{"data":[{"a":1}]}`),
		f.post("echo", "", `{"data":[{"a":1},]}`),
		serve(f.h, "GET", "/x", "", ""),
	} {
		if ct := w.Header().Get("Content-Type"); ct != "application/json" {
			t.Errorf("%d: Content-Type = %q", w.Code, ct)
		}
		if !json.Valid(w.Body.Bytes()) {
			t.Errorf("%d: body %q is not JSON", w.Code, w.Body)
		}
	}
}

func TestNewRefusesIncompleteConfig(t *testing.T) {
	f := newFixture(t, scoring.Config{})
	other := newFixture(t, scoring.Config{})
	tests := map[string]scoring.Config{
		"no registry":                {},
		"negative timeout":           {Registry: f.reg, DefaultTimeout: -time.Second},
		"negative retry":             {Registry: f.reg, RetryAfter: -time.Second},
		"negative limit":             {Registry: f.reg, Limits: scoring.Limits{MaxRows: -1}},
		"body limit over 4 GiB":      {Registry: f.reg, Limits: scoring.Limits{MaxBodyBytes: 1 << 40}},
		"queues of another registry": {Registry: f.reg, Queues: other.h.Queues()},
		"relative prefix":            {Registry: f.reg, Prefix: "webapi"},
		"prefix with a dot segment":  {Registry: f.reg, Prefix: "/webapi/.."},
		"prefix to escape":           {Registry: f.reg, Prefix: "/web api"},
		"decoding budget below body limit": {Registry: f.reg, MaxDecodingBytes: 1 << 20,
			Limits: scoring.Limits{MaxBodyBytes: 2 << 20}},
	}
	for name, cfg := range tests {
		t.Run(name, func(t *testing.T) {
			if h, err := scoring.New(cfg); err == nil || h != nil {
				t.Errorf("New = %v, %v; want an error", h, err)
			}
		})
	}
}

// TestHandlerProtectedGroupHidesEndpoints replays an enumeration of a token
// group's endpoints without a token: a missing deployment, a missing alias,
// a disabled deployment, an endpoint whose process is unavailable and an
// existing endpoint must all get the same 401, so that none can be told
// apart. A public group still says which addresses do not exist.
func TestHandlerProtectedGroupHidesEndpoints(t *testing.T) {
	refuse := func(r *http.Request, _ string, _ registry.AuthPolicy) error {
		if r.Header.Get("Authorization") == "Bearer good" {
			return nil
		}
		return &problem.Error{Status: 401, Code: "unauthorized", Message: "this endpoint needs a valid token",
			Challenge: `Bearer realm="scorehub"`}
	}
	f := newFixture(t, scoring.Config{Authorize: refuse}, process.ProcessInfo{Name: "echo", Process: echo})
	if _, err := f.reg.PutGroup(context.Background(), registry.Group{Name: "secure",
		Auth: registry.AuthPolicy{Mode: registry.TokenRequired}}); err != nil {
		t.Fatal(err)
	}
	f.putDeployment(t, registry.Deployment{Group: "secure", Path: "live", Enabled: true,
		Endpoints: []registry.Endpoint{{Alias: "echo", Process: "echo"}}})
	f.putDeployment(t, registry.Deployment{Group: "secure", Path: "off", Enabled: false,
		Endpoints: []registry.Endpoint{{Alias: "echo", Process: "echo"}}})
	f.putDeployment(t, registry.Deployment{Group: "secure", Path: "gone", Enabled: true,
		Endpoints: []registry.Endpoint{{Alias: "echo", Process: "not-registered"}}})

	type answer struct {
		Status    int
		Body      string
		Challenge string
	}
	send := func(target, token string) answer {
		r := httptest.NewRequest("POST", target, strings.NewReader(`{"data":[{"a":1}]}`))
		r.Header.Set("Content-Type", "application/json")
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		w := httptest.NewRecorder()
		f.h.ServeHTTP(w, r)
		return answer{w.Code, w.Body.String(), w.Header().Get("WWW-Authenticate")}
	}
	addresses := []string{
		"/secure/api/v1/services/live/echo", // exists
		"/secure/api/v1/services/live/nope", // unknown alias
		"/secure/api/v1/services/nope/echo", // unknown deployment
		"/secure/api/v1/services/off/echo",  // disabled
		"/secure/api/v1/services/gone/echo", // process unavailable
	}
	for _, token := range []string{"", "bad"} {
		want := send(addresses[0], token)
		if want.Status != 401 || want.Challenge == "" {
			t.Fatalf("token %q at an existing endpoint: %+v, want a 401 with a challenge", token, want)
		}
		for _, a := range addresses[1:] {
			t.Run(a+" token "+token, func(t *testing.T) {
				if diff := cmp.Diff(want, send(a, token)); diff != "" {
					t.Errorf("answer differs from the existing endpoint's (-existing +this):\n%s", diff)
				}
			})
		}
	}
	// With an accepted token the addresses answer as they always did.
	for target, status := range map[string]int{
		addresses[0]: 200, addresses[1]: 404, addresses[2]: 404, addresses[3]: 404, addresses[4]: 503,
	} {
		if got := send(target, "good"); got.Status != status {
			t.Errorf("%s with a good token: %d, want %d", target, got.Status, status)
		}
	}
	// A public group and a group that does not exist say what is missing.
	for _, target := range []string{"/DEFAULT/api/v1/services/nope/echo", "/nosuch/api/v1/services/live/echo"} {
		if got := send(target, ""); got.Status != 404 {
			t.Errorf("%s without a token: %d, want 404", target, got.Status)
		}
	}
}
