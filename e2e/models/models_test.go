package models

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/e2e/internal/harness"
)

// deployModel uploads artifact as a new version of model name, points its
// alias production at it and deploys it at DEFAULT/<name>/score, the
// endpoint naming "<name>@production". It returns the version's view.
func deployModel(t testing.TB, c *client, name string, artifact []byte, metadata any) map[string]any {
	t.Helper()
	up := c.upload(t, name, artifact, metadata)
	if up.status != http.StatusCreated {
		t.Fatalf("upload of %s: %d %s", name, up.status, up.raw)
	}
	v, _ := up.body["version"].(float64)
	// Relative to the upload's URL, as the other routes' Locations are.
	loc, err := url.Parse("/api/v1/models/" + name + "/versions")
	if err != nil {
		t.Fatal(err)
	}
	if rel, err := url.Parse(up.header.Get("Location")); err != nil || loc.ResolveReference(rel).Path != fmt.Sprintf("/api/v1/models/%s/versions/%d", name, int(v)) {
		t.Errorf("upload of %s: Location %q, want version %d's URL", name, up.header.Get("Location"), int(v))
	}
	if a := c.doJSON(t, http.MethodPut, "/api/v1/models/"+name+"/aliases/production", map[string]any{"version": v}); a.status != http.StatusCreated {
		t.Fatalf("alias production of %s: %d %s", name, a.status, a.raw)
	}
	dep := map[string]any{"group": "DEFAULT", "path": name, "description": "model " + name,
		"endpoints": []map[string]any{{"alias": "score", "model": name + "@production"}}}
	if a := c.doJSON(t, http.MethodPost, "/api/v1/deployments", dep); a.status != http.StatusCreated {
		t.Fatalf("deployment of %s: %d %s", name, a.status, a.raw)
	}
	return up.body
}

// TestFixturesScoreAsProduced deploys every fixture, each XGBoost model in
// both of its save formats, each PMML document and ONNX graph
// scikit-learn's models were written as and each LightGBM text model,
// through the management API and scores its rows over HTTP with the body
// pandas writes: every prediction is XGBoost's, scikit-learn's, (for ONNX)
// ONNX Runtime's or LightGBM's own, within 1e-6. A restart on the same data serves every model, alias and
// deployment again with the same answers.
func TestFixturesScoreAsProduced(t *testing.T) {
	t.Parallel()
	fixtures := loadFixtures(t)
	dir := t.TempDir()
	// What is tested here is the answers and the files, not the memory
	// model (TestPromoteUnderLoad runs under the race detector): a server
	// without it scores the fixtures' thousands of rows in a fraction of
	// the time.
	opts := harness.Options{Dir: dir, WithoutRace: true}
	s := harness.Start(t, opts)
	c := newClient(t, s)
	frames := make([]frame, len(fixtures))
	for i, fx := range fixtures {
		frames[i] = frame{fx.rows, fx.features}
	}
	bodies := pandasBodies(t, frames)
	answers := map[string][]map[string]any{} // by model name, before the restart
	for i, fx := range fixtures {
		for _, file := range fx.files {
			name := fx.modelName(file)
			artifact := fx.artifact(t, file)
			v := deployModel(t, c, name, artifact, fx.metadata)
			if v["format"] != fx.format || v["sha256"] != sha256Hex(artifact) || v["size"] != float64(len(artifact)) {
				t.Errorf("%s: version %v, want format %s, the artifact's sha256 and size", name, v, fx.format)
			}
			again := c.upload(t, name, artifact, fx.metadata)
			if again.status != http.StatusOK || again.body["version"] != v["version"] {
				t.Errorf("%s: the same upload again answered %d %s, want 200 and the same version", name, again.status, again.raw)
			}
			got := c.score(t, scoreURL(name, "score"), bodies[i])
			fx.check(t, name, got)
			answers[name] = got
		}
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}

	s = harness.Start(t, opts)
	c = newClient(t, s)
	list := c.do(t, http.MethodGet, "/api/v1/models?size=1000", "", nil)
	if n, _ := list.body["totalElements"].(float64); list.status != http.StatusOK || int(n) != len(answers) {
		t.Fatalf("the models after the restart: %d %s, want %d", list.status, list.raw, len(answers))
	}
	for i, fx := range fixtures {
		for _, file := range fx.files {
			name := fx.modelName(file)
			a := c.do(t, http.MethodGet, "/api/v1/models/"+name+"/aliases/production", "", nil)
			if a.status != http.StatusOK || a.body["version"] != 1.0 {
				t.Errorf("%s: alias production after the restart: %d %s", name, a.status, a.raw)
			}
			art := c.do(t, http.MethodGet, "/api/v1/models/"+name+"/versions/1/artifact", "", nil)
			if want := fx.artifact(t, file); art.status != http.StatusOK || string(art.raw) != string(want) {
				t.Errorf("%s: artifact after the restart: %d, %d bytes, want 200 and the %d bytes uploaded", name, art.status, len(art.raw), len(want))
			}
			got := c.score(t, scoreURL(name, "score"), bodies[i])
			if d := cmp.Diff(answers[name], got); d != "" {
				t.Errorf("%s: answers changed across the restart (-before +after):\n%s", name, d)
			}
		}
	}
}

// TestModelInputs: a feature sent as text is a 400 naming the column; a
// feature left out of a row is a missing value, which takes each tree's
// default branch as XGBoost does with NaN, while one left out of every row
// of a request is a 400 naming it.
func TestModelInputs(t *testing.T) {
	t.Parallel()
	fx := fixtureWithMissing(t)
	file := fx.files[0]
	name := fx.modelName(file)
	s := harness.Start(t, harness.Options{})
	c := newClient(t, s)
	deployModel(t, c, name, fx.artifact(t, file), fx.metadata)
	url := scoreURL(name, "score")

	col := fx.features[len(fx.features)/2]
	row := map[string]any{}
	for _, f := range fx.features {
		row[f] = nil // null: a missing value, the key present
	}
	for k, v := range fx.rows[0] {
		row[k] = v
	}
	row[col] = "high"
	a := c.doJSON(t, http.MethodPost, url, map[string]any{"data": []any{row}})
	e, _ := a.body["error"].(map[string]any)
	msg, _ := e["message"].(string)
	if a.status != http.StatusBadRequest || !strings.Contains(msg, col) {
		t.Errorf("text for the number feature %q answered %d %s, want a 400 naming it", col, a.status, a.raw)
	}

	// The rows with missing values, with those features left out instead
	// of null: the answers are XGBoost's for NaN. A row with every feature
	// goes first, so that no feature is missing from every row.
	var rows []map[string]any
	var idx []int
	complete := -1
	for i, r := range fx.rows {
		out := map[string]any{}
		missing := false
		for k, v := range r {
			if v == nil {
				missing = true
				continue
			}
			out[k] = v
		}
		if missing {
			rows, idx = append(rows, out), append(idx, i)
		} else if complete < 0 && len(out) == len(fx.features) {
			complete = i
		}
	}
	if len(rows) == 0 || complete < 0 {
		t.Fatalf("fixture %s has no row with a missing value, or none without", fx.stem)
	}
	got := c.score(t, url, jsonBody(t, map[string]any{"data": append([]map[string]any{fx.rows[complete]}, rows...)}))
	fx.subset(idx).check(t, name+" (features left out)", got[1:])

	// A feature left out of every row is refused, naming it.
	alone := map[string]any{}
	for k, v := range fx.rows[complete] {
		alone[k] = v
	}
	delete(alone, col)
	a = c.doJSON(t, http.MethodPost, url, map[string]any{"data": []any{alone}})
	e, _ = a.body["error"].(map[string]any)
	msg, _ = e["message"].(string)
	if a.status != http.StatusBadRequest || e["type"] != "schema_mismatch" || !strings.Contains(msg, col) {
		t.Errorf("the feature %q left out of every row answered %d %s, want a 400 schema_mismatch naming it", col, a.status, a.raw)
	}
}

// TestPromoteUnderLoad moves the alias an endpoint names from version 1
// to version 2 with If-Match while clients score through it: no request
// fails, every answer is one version's or the other's, and every request
// sent after the move was acknowledged gets version 2's.
func TestPromoteUnderLoad(t *testing.T) {
	t.Parallel()
	v1, v2, row := promotionPair(t)
	s := harness.Start(t, harness.Options{})
	c := newClient(t, s)
	const name = "churn"
	deployModel(t, c, name, v1.artifact(t, v1.files[0]), v1.metadata)
	if up := c.upload(t, name, v2.artifact(t, v2.files[0]), v2.metadata); up.status != http.StatusCreated || up.body["version"] != 2.0 {
		t.Fatalf("upload of version 2: %d %s", up.status, up.raw)
	}
	// Each version's own answer to the row, through endpoints pinned to it.
	pinned := map[string]any{"group": "DEFAULT", "path": "pinned", "endpoints": []map[string]any{
		{"alias": "v1", "model": name + "@1"}, {"alias": "v2", "model": name + "@2"}}}
	if a := c.doJSON(t, http.MethodPost, "/api/v1/deployments", pinned); a.status != http.StatusCreated {
		t.Fatalf("pinned deployment: %d %s", a.status, a.raw)
	}
	body := jsonBody(t, map[string]any{"data": []any{row}})
	want1 := c.score(t, scoreURL("pinned", "v1"), body)[0]
	want2 := c.score(t, scoreURL("pinned", "v2"), body)[0]
	if cmp.Equal(want1, want2) {
		t.Fatalf("versions 1 and 2 answer the row alike (%v): the test could not tell them apart", want1)
	}

	alias := c.do(t, http.MethodGet, "/api/v1/models/"+name+"/aliases/production", "", nil)
	etag := alias.header.Get("ETag")
	if alias.status != http.StatusOK || etag == "" {
		t.Fatalf("alias production: %d %s, ETag %q", alias.status, alias.raw, etag)
	}
	stale := `"` + strconv.Itoa(int(alias.body["revision"].(float64))+7) + `"`
	if a := c.doJSON(t, http.MethodPut, "/api/v1/models/"+name+"/aliases/production", map[string]any{"version": 2}, "If-Match", stale); a.status != http.StatusPreconditionFailed {
		t.Fatalf("a move with a stale If-Match answered %d %s, want 412", a.status, a.raw)
	}

	type result struct {
		start, end time.Time
		version    int // 1 or 2; 0 for neither
		err        string
	}
	var (
		mu      sync.Mutex
		results []result
		stop    atomic.Bool
		wg      sync.WaitGroup
	)
	url := s.Base + scoreURL(name, "score")
	load := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}, Timeout: time.Minute}
	defer load.CloseIdleConnections()
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				r := result{start: time.Now()}
				got, err := post(load, url, body)
				r.end = time.Now()
				switch {
				case err != nil:
					r.err = err.Error()
				case cmp.Equal(got, want1):
					r.version = 1
				case cmp.Equal(got, want2):
					r.version = 2
				default:
					r.err = fmt.Sprintf("answered %v, neither version's answer", got)
				}
				mu.Lock()
				results = append(results, r)
				mu.Unlock()
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	a := c.doJSON(t, http.MethodPut, "/api/v1/models/"+name+"/aliases/production", map[string]any{"version": 2}, "If-Match", etag)
	moved := time.Now()
	time.Sleep(300 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	if a.status != http.StatusOK || a.body["version"] != 2.0 {
		t.Fatalf("the move answered %d %s, want 200 and version 2", a.status, a.raw)
	}

	counts := map[int]int{}
	for _, r := range results {
		counts[r.version]++
		switch {
		case r.err != "":
			t.Errorf("a request failed: %s", r.err)
		case r.start.After(moved) && r.version != 2:
			t.Errorf("a request sent %v after the move was acknowledged answered version %d's", r.start.Sub(moved), r.version)
		}
	}
	t.Logf("%d requests: %d answered by version 1, %d by version 2", len(results), counts[1], counts[2])
	if counts[1] == 0 || counts[2] == 0 {
		t.Errorf("answers by version: %v, want both versions to have answered", counts)
	}
	if got := c.score(t, scoreURL(name, "score"), body)[0]; !cmp.Equal(got, want2) {
		t.Errorf("after the move the endpoint answers %v, want version 2's %v", got, want2)
	}

	// Rolling back is the same move the other way.
	if a := c.doJSON(t, http.MethodPut, "/api/v1/models/"+name+"/aliases/production", map[string]any{"version": 1}, "If-Match", a.header.Get("ETag")); a.status != http.StatusOK {
		t.Fatalf("the rollback answered %d %s", a.status, a.raw)
	}
	if got := c.score(t, scoreURL(name, "score"), body)[0]; !cmp.Equal(got, want1) {
		t.Errorf("after the rollback the endpoint answers %v, want version 1's %v", got, want1)
	}
	if a := c.do(t, http.MethodDelete, "/api/v1/models/"+name+"/versions/1", "", nil); a.status != http.StatusConflict {
		t.Errorf("deleting the version the alias names answered %d %s, want 409", a.status, a.raw)
	}
}

// post scores body at url and returns the one row answered.
func post(c *http.Client, url string, body []byte) (map[string]any, error) {
	res, err := c.Post(url, "application/json", strings.NewReader(string(body)))
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var got struct{ Data []map[string]any }
	if err := jsonDecode(res.Body, &got); err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK || len(got.Data) != 1 {
		return nil, fmt.Errorf("status %d, %d rows", res.StatusCode, len(got.Data))
	}
	return got.Data[0], nil
}
