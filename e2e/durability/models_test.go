package durability

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
)

// The model the crash test's model writer uploads versions of, and the
// deployment whose endpoint names its alias.
const (
	crashModel      = "crash-m"
	crashModelAlias = "prod"
	crashModelPath  = "crash-model"
)

// crashModelFile is the example model of docs/models.md, an XGBoost iris
// classifier as JSON, which the model writer uploads with whitespace
// appended, so that versions differ in content too.
const crashModelFile = "../../examples/models/iris.json"

// crashModelMeta is the upload's metadata, but for its description.
const crashModelMeta = `"label":"species","classes":["setosa","versicolor","virginica"],"features":["sepal_length","sepal_width","petal_length","petal_width"]`

// modelWrite is one write of the model writer and what it leaves when it
// takes effect.
type modelWrite struct {
	method, path, contentType, ifMatch, body string
	upload                                   bool
	sum                                      string // an upload's artifact's sha256
	alias                                    modelAlias
	deploy                                   bool
}

// modelAlias is the alias as the test tells its states apart.
type modelAlias struct {
	Exists   bool
	Version  int
	Revision uint64
}

// modelWriter uploads versions of crashModel, one write at a time, and
// moves its alias among them, so that it knows what the server must
// hold: every acknowledged version with its artifact's sha256, the alias
// as last acknowledged, and once the alias exists a deployment naming it.
type modelWriter struct {
	rng      *rand.Rand
	base     []byte
	versions map[int]string // acknowledged versions: their artifacts' sha256
	last     int            // the highest version the server has
	alias    modelAlias
	deployed bool
	pending  *modelWrite // the write no complete answer came for
	seq      int
}

func newModelWriter(t *testing.T, rng *rand.Rand) *modelWriter {
	t.Helper()
	b, err := os.ReadFile(crashModelFile)
	if err != nil {
		t.Fatal(err)
	}
	return &modelWriter{rng: rng, base: b, versions: map[int]string{}}
}

// next chooses the next write from what was acknowledged.
func (w *modelWriter) next() modelWrite {
	w.seq++
	if len(w.versions) > 0 && w.alias.Exists && !w.deployed {
		return modelWrite{method: http.MethodPost, path: "/api/v1/deployments", contentType: "application/json", deploy: true,
			body: crashJSON(map[string]any{"group": "DEFAULT", "path": crashModelPath,
				"endpoints": []map[string]any{{"alias": "score", "model": crashModel + "@" + crashModelAlias}}})}
	}
	if len(w.versions) == 0 || w.rng.IntN(10) < 6 {
		// Half the uploads share their content with an earlier one, under
		// other metadata: a new version of an artifact the store has.
		artifact := append(append([]byte(nil), w.base...), bytes.Repeat([]byte("\n"), w.rng.IntN(4)*w.seq%64)...)
		meta := `{` + crashModelMeta + `,"description":"upload ` + strconv.Itoa(w.seq) + `"}`
		ct, body := crashMultipart(artifact, meta)
		return modelWrite{method: http.MethodPost, path: "/api/v1/models/" + crashModel + "/versions", contentType: ct,
			body: body, upload: true, sum: crashSHA256(artifact)}
	}
	var acked []int
	for v := range w.versions {
		acked = append(acked, v)
	}
	v := acked[w.rng.IntN(len(acked))]
	wr := modelWrite{method: http.MethodPut, path: "/api/v1/models/" + crashModel + "/aliases/" + crashModelAlias,
		contentType: "application/json", body: crashJSON(map[string]any{"version": v}),
		alias: modelAlias{Exists: true, Version: v, Revision: w.alias.Revision + 1}}
	if w.alias.Exists {
		wr.ifMatch = crashETag(w.alias.Revision)
	}
	return wr
}

// run writes until the server stops answering.
func (w *modelWriter) run(t *testing.T, c *crashClient, acked *atomic.Int64) {
	for {
		wr := w.next()
		status, got, err := c.do(wr.method, wr.path, wr.contentType, wr.ifMatch, wr.body)
		if err != nil {
			w.pending = &wr
			return
		}
		if status/100 != 2 {
			t.Errorf("model writer: %s %s answered %d %v, want 2xx", wr.method, wr.path, status, got)
			return
		}
		acked.Add(1)
		switch {
		case wr.deploy:
			w.deployed = true
		case wr.upload:
			v, _ := got["version"].(float64)
			if status != http.StatusCreated || int(v) != w.last+1 || got["sha256"] != wr.sum {
				t.Errorf("model writer: upload answered %d version %v sha256 %v, want 201 version %d sha256 %s", status, got["version"], got["sha256"], w.last+1, wr.sum)
			}
			w.last = int(v)
			w.versions[w.last] = wr.sum
		default:
			have := aliasOf(got)
			if have != wr.alias {
				t.Errorf("model writer: alias move answered %+v, want %+v", have, wr.alias)
			}
			w.alias = have
		}
	}
}

func aliasOf(got map[string]any) modelAlias {
	v, _ := got["version"].(float64)
	rev, _ := got["revision"].(float64)
	return modelAlias{Exists: true, Version: int(v), Revision: uint64(rev)}
}

// reconcile reads the model from the restarted server: every acknowledged
// version is listed with its sha256 and its artifact downloads
// byte-identical; a version nobody was told of is the upload in flight
// at the kill, whole; the data directory keeps no artifact no version
// lists; the alias is as acknowledged or as the move in flight left it;
// the endpoint naming the alias scores.
func (w *modelWriter) reconcile(t *testing.T, round int, dir string, c *crashClient) {
	t.Helper()
	defer func() { w.pending = nil }()
	status, got, err := c.do(http.MethodGet, "/api/v1/models/"+crashModel, "", "", "")
	if err != nil || (status != http.StatusOK && status != http.StatusNotFound) {
		t.Fatalf("round %d: GET the model: %d %v %v", round, status, got, err)
	}
	listed := map[int]string{}
	if status == http.StatusOK {
		vs, _ := got["versions"].([]any)
		for _, v := range vs {
			v, _ := v.(map[string]any)
			n, _ := v["version"].(float64)
			sum, _ := v["sha256"].(string)
			listed[int(n)] = sum
		}
	}
	for v, sum := range w.versions {
		if listed[v] != sum {
			t.Errorf("round %d: acknowledged version %d (sha256 %s) is listed as %q after the kill", round, v, sum, listed[v])
		}
	}
	for v, sum := range listed {
		if _, ok := w.versions[v]; ok {
			continue
		}
		if p := w.pending; p != nil && p.upload && v == w.last+1 && sum == p.sum {
			w.versions[v], w.last = sum, v // the upload in flight took effect, whole
			continue
		}
		t.Errorf("round %d: version %d (sha256 %s) is listed, but no upload of it was acknowledged or in flight", round, v, sum)
	}
	entries, err := os.ReadDir(filepath.Join(dir, "models"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !slices.Contains(slices.Collect(maps.Values(listed)), e.Name()) {
			t.Errorf("round %d: models/%s is kept, but no version lists it", round, e.Name())
		}
	}
	for v, sum := range listed {
		status, body, err := c.raw(http.MethodGet, fmt.Sprintf("/api/v1/models/%s/versions/%d/artifact", crashModel, v))
		if err != nil || status != http.StatusOK || crashSHA256(body) != sum {
			t.Errorf("round %d: artifact of version %d: %d, %d bytes of sha256 %s, %v; want 200 and sha256 %s", round, v, status, len(body), crashSHA256(body), err, sum)
		}
	}

	status, got, err = c.do(http.MethodGet, "/api/v1/models/"+crashModel+"/aliases/"+crashModelAlias, "", "", "")
	if err != nil || (status != http.StatusOK && status != http.StatusNotFound) {
		t.Fatalf("round %d: GET the alias: %d %v %v", round, status, got, err)
	}
	have := modelAlias{}
	if status == http.StatusOK {
		have = aliasOf(got)
	}
	switch p := w.pending; {
	case have == w.alias:
	case p != nil && p.alias.Exists && have == p.alias:
		w.alias = have
	default:
		t.Errorf("round %d: alias %+v after the kill, acknowledged %+v", round, have, w.alias)
	}

	status, got, err = c.do(http.MethodGet, "/api/v1/deployments/DEFAULT/"+crashModelPath, "", "", "")
	if err != nil || (status != http.StatusOK && status != http.StatusNotFound) {
		t.Fatalf("round %d: GET the model's deployment: %d %v %v", round, status, got, err)
	}
	switch {
	case status == http.StatusOK:
		w.deployed = true
	case w.deployed:
		t.Errorf("round %d: the acknowledged deployment naming the alias is gone", round)
	}
	if w.deployed {
		status, got, err := c.do(http.MethodPost, "/webapi/DEFAULT/api/v1/services/"+crashModelPath+"/score", "application/json", "",
			`{"data":[{"sepal_length":5.1,"sepal_width":3.5,"petal_length":1.4,"petal_width":0.2}]}`)
		rows, _ := got["data"].([]any)
		if err != nil || status != http.StatusOK || len(rows) != 1 || rows[0].(map[string]any)["prediction(species)"] != "setosa" {
			t.Errorf("round %d: scoring through %s@%s: %d %v %v, want its one setosa row", round, crashModel, crashModelAlias, status, got, err)
		}
	}
}

// raw sends a GET with c's token and returns the status and the body as
// it came.
func (c *crashClient) raw(method, path string) (int, []byte, error) {
	req, err := http.NewRequest(method, c.base+path, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	res, err := c.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	var b bytes.Buffer
	_, err = b.ReadFrom(res.Body)
	return res.StatusCode, b.Bytes(), err
}

// crashMultipart is an upload's body with the parts artifact and
// metadata, and its Content-Type.
func crashMultipart(artifact []byte, metadata string) (contentType, body string) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="artifact"; filename="iris.json"`)
	h.Set("Content-Type", "application/octet-stream")
	pw, _ := mw.CreatePart(h)
	pw.Write(artifact)
	h = textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="metadata"`)
	h.Set("Content-Type", "application/json")
	pw, _ = mw.CreatePart(h)
	pw.Write([]byte(metadata))
	mw.Close()
	return mw.FormDataContentType(), b.String()
}

func crashSHA256(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
