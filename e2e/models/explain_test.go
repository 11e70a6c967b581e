package models

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/e2e/internal/harness"
	"github.com/scorehub/scorehub/internal/testenv"
)

// pythonClientScript does, for each call it reads (a URL, an Authorization
// header, rows and columns), what the AI Hub Python client's
// WebApi.predict does with a DataFrame of those rows: it posts
// to_json(orient="table") with the client's two headers through requests,
// and reads the answer's "data" back with pandas.read_json. It writes, per
// call, the body it posted and either the status and text of an answer
// other than 200, on which the client raises, or the DataFrame it got: its
// columns in order, their dtypes, and each column's values, NaN as null.
const pythonClientScript = `
import json, sys
from io import StringIO
import pandas as pd
import requests

out = []
for call in json.load(sys.stdin):
    df = pd.DataFrame.from_records(call["rows"], columns=call["columns"])
    body = df.to_json(orient="table")
    headers = {"Content-type": "application/json", "Authorization": call["auth"]}
    r = requests.post(call["url"], data=body, headers=headers)
    if r.status_code != 200:
        out.append({"body": body, "status": r.status_code, "message": r.text})
        continue
    result = pd.read_json(StringIO(json.dumps(r.json()["data"])))
    values = []
    for i in range(result.shape[1]):
        values.append([None if isinstance(v, float) and v != v else v for v in result.iloc[:, i].tolist()])
    out.append({"body": body, "status": 200, "columns": [str(c) for c in result.columns],
                "dtypes": [str(d) for d in result.dtypes], "values": values})
json.dump(out, sys.stdout, allow_nan=False)
`

// clientCall is one WebApi.predict call of pythonClientScript.
type clientCall struct {
	URL     string           `json:"url"`
	Auth    string           `json:"auth"`
	Rows    []map[string]any `json:"rows"`
	Columns []string         `json:"columns"`
}

// clientFrame is what the Python client got from one call.
type clientFrame struct {
	Body    string   `json:"body"`
	Status  int      `json:"status"`
	Message string   `json:"message"`
	Columns []string `json:"columns"`
	Dtypes  []string `json:"dtypes"`
	Values  [][]any  `json:"values"` // one slice a column
}

// column returns the values of the column name, nil when the frame has
// none.
func (f *clientFrame) column(name string) []any {
	if i := slices.Index(f.Columns, name); i >= 0 {
		return f.Values[i]
	}
	return nil
}

// rows returns the frame's rows as maps, as fixture.check reads answers.
func (f *clientFrame) rows() []map[string]any {
	if len(f.Values) == 0 {
		return nil
	}
	out := make([]map[string]any, len(f.Values[0]))
	for r := range out {
		out[r] = map[string]any{}
		for i, c := range f.Columns {
			out[r][c] = f.Values[i][r]
		}
	}
	return out
}

// runPythonClient makes calls with pythonClientScript, all in one run of
// python (starting pandas takes a second).
func runPythonClient(t testing.TB, calls []clientCall) []*clientFrame {
	t.Helper()
	cmd := exec.Command(python, "-c", pythonClientScript)
	cmd.Stdin = bytes.NewReader(jsonBody(t, calls))
	// requests honours a proxy set in the environment; the server is local.
	cmd.Env = append(os.Environ(), "NO_PROXY=127.0.0.1", "no_proxy=127.0.0.1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the Python client: %v\n%s", err, stderr.String())
	}
	var frames []*clientFrame
	if err := json.Unmarshal(out, &frames); err != nil || len(frames) != len(calls) {
		t.Fatalf("the Python client wrote %d frames for %d calls (%v):\n%s", len(frames), len(calls), err, out)
	}
	for i, f := range frames {
		if f.Status != http.StatusOK {
			t.Fatalf("POST %s: %d %s (the client raises on this)", calls[i].URL, f.Status, f.Message)
		}
	}
	return frames
}

// xgboostFixture reads the XGBoost fixture stem with its JSON save only.
func xgboostFixture(t testing.TB, stem string) *fixture {
	t.Helper()
	for _, d := range fixtureDirs {
		if d.format == "xgboost" {
			return readFixture(t, filepath.Join(d.dir, stem+".rows.json"), d.format, []string{".json"})
		}
	}
	t.Fatalf("no XGBoost fixtures in %v", fixtureDirs)
	return nil
}

// TestPythonClientReadsExplanations deploys an XGBoost binary classifier
// and a three-class one behind a group that takes API tokens, each model
// version behind a plain alias and explained ones, and calls them as the
// AI Hub Python client's WebApi.predict does, with pandas and requests.
// The client reads the contributions as ordinary numeric columns: after
// the plain endpoint's columns, unchanged, one contribution(<feature>) a
// feature and contribution(bias), which for each row add up to the log-odds
// of the positive class's confidence; with top, each row's three largest
// and the bias only; for every class of the three-class model, margins
// whose softmax is its confidences. What pandas reads is the server's raw
// answer, key for key.
func TestPythonClientReadsExplanations(t *testing.T) {
	t.Parallel()
	if err := exec.Command(python, "-c", "import pandas, requests").Run(); err != nil {
		testenv.SkipOrFail(t, "%s cannot import pandas and requests, which the Python-client test of explained endpoints needs (Debian: apt-get install python3-pandas python3-requests)", python)
	}
	cancer := xgboostFixture(t, "breast_cancer_logistic").subset([]int{0, 1, 2, 3, 4, 5})
	iris := xgboostFixture(t, "iris_softprob").subset([]int{0, 1, 2, 3, 4, 5})
	s := harness.Start(t, harness.Options{})
	c := newClient(t, s)

	// A notebook calls a protected group with an API token of its user.
	for _, w := range []struct {
		path string
		body any
	}{
		{"/api/v1/users", map[string]any{"name": "ann", "password": "ann-password-1", "groups": []string{"analysts"}}},
		{"/api/v1/webapigroups", map[string]any{"name": "notebooks", "auth": map[string]any{"mode": "token", "groups": []string{"analysts"}, "schemes": []string{"apitoken"}}}},
	} {
		if a := c.doJSON(t, http.MethodPost, w.path, w.body); a.status != http.StatusCreated {
			t.Fatalf("POST %s: %d %s", w.path, a.status, a.raw)
		}
	}
	tok := c.doJSON(t, http.MethodPost, "/api/v1/apitokens", map[string]any{"name": "notebook", "owner": "ann"})
	secret, _ := tok.body["token"].(string)
	if tok.status != http.StatusCreated || secret == "" {
		t.Fatalf("POST /api/v1/apitokens: %d %s", tok.status, tok.raw)
	}
	auth := "apitoken " + secret

	treeshap := func(top int, class string) map[string]any {
		x := map[string]any{"method": "treeshap"}
		if top > 0 {
			x["top"] = top
		}
		if class != "" {
			x["class"] = class
		}
		return x
	}
	const top = 3
	for _, m := range []struct {
		name      string
		fx        *fixture
		endpoints []map[string]any
	}{
		{"cancer", cancer, []map[string]any{
			{"alias": "diagnosis", "model": "cancer@1"},
			{"alias": "why", "model": "cancer@1", "explain": treeshap(0, "")},
			{"alias": "why-top", "model": "cancer@1", "explain": treeshap(top, "predicted")},
		}},
		{"iris", iris, []map[string]any{
			{"alias": "species", "model": "iris@1"},
			{"alias": "why", "model": "iris@1", "explain": treeshap(0, "all")},
		}},
	} {
		if up := c.upload(t, m.name, m.fx.artifact(t, m.fx.files[0]), m.fx.metadata); up.status != http.StatusCreated || up.body["version"] != 1.0 {
			t.Fatalf("upload of %s: %d %s", m.name, up.status, up.raw)
		}
		dep := map[string]any{"group": "notebooks", "path": m.name, "enabled": true, "endpoints": m.endpoints}
		if a := c.doJSON(t, http.MethodPost, "/api/v1/deployments", dep); a.status != http.StatusCreated {
			t.Fatalf("deployment of %s: %d %s", m.name, a.status, a.raw)
		}
	}

	url := func(path, alias string) string {
		return s.Base + "/webapi/notebooks/api/v1/services/" + path + "/" + alias
	}
	calls := []clientCall{
		{url("cancer", "diagnosis"), auth, cancer.rows, cancer.features},
		{url("cancer", "why"), auth, cancer.rows, cancer.features},
		{url("cancer", "why-top"), auth, cancer.rows, cancer.features},
		{url("iris", "species"), auth, iris.rows, iris.features},
		{url("iris", "why"), auth, iris.rows, iris.features},
	}
	frames := runPythonClient(t, calls)
	plain, why, whyTop, irisPlain, irisWhy := frames[0], frames[1], frames[2], frames[3], frames[4]

	t.Run("the plain endpoint answers no contribution", func(t *testing.T) {
		want := append(append([]string{"index"}, cancer.features...), predictionColumns(cancer)...)
		if !slices.Equal(plain.Columns, want) {
			t.Errorf("columns %q, want the index, the inputs and the classifier's %q", plain.Columns, want)
		}
		cancer.check(t, "cancer/diagnosis", plain.rows())
		iris.check(t, "iris/species", irisPlain.rows())
	})

	t.Run("the explained endpoint adds numeric contributions that add up to the log-odds", func(t *testing.T) {
		want := append(slices.Clone(plain.Columns), contributionColumns("", cancer.features)...)
		if !slices.Equal(why.Columns, want) {
			t.Fatalf("columns %q, want the plain endpoint's and then %q", why.Columns, want[len(plain.Columns):])
		}
		samePrefix(t, plain, why)
		numericContributions(t, why)
		positive := cancer.classes[1]
		for r := range cancer.rows {
			p := why.column("confidence(" + positive + ")")[r].(float64)
			logit := math.Log(p / (1 - p))
			margin, n := rowMargin(why, "", cancer.features, r)
			if n != len(cancer.features) {
				t.Errorf("row %d: %d of %d features have a contribution", r, n, len(cancer.features))
			}
			if math.Abs(margin-logit) > 1e-4 {
				t.Errorf("row %d: bias + Σ contributions = %.7f, the log-odds of confidence(%s) = %.6f is %.7f", r, margin, positive, p, logit)
			}
		}
	})

	t.Run("top keeps each row's largest contributions and the bias", func(t *testing.T) {
		if !slices.Equal(whyTop.Columns, why.Columns) {
			t.Fatalf("columns %q, want the explained endpoint's %q", whyTop.Columns, why.Columns)
		}
		samePrefix(t, plain, whyTop)
		numericContributions(t, whyTop)
		for r := range cancer.rows {
			var kept, dropped []float64 // the full explanation's magnitudes
			for _, f := range cancer.features {
				name := "contribution(" + f + ")"
				full := why.column(name)[r].(float64)
				switch v := whyTop.column(name)[r]; v {
				case nil:
					dropped = append(dropped, math.Abs(full))
				case full:
					kept = append(kept, math.Abs(full))
				default:
					t.Errorf("row %d: %s = %v, the explained endpoint's %v", r, name, v, full)
				}
			}
			if len(kept) != top {
				t.Errorf("row %d: %d feature contributions, want %d", r, len(kept), top)
			}
			if len(kept) > 0 && len(dropped) > 0 && slices.Min(kept) < slices.Max(dropped) {
				t.Errorf("row %d: kept contributions of magnitude down to %g, but dropped one of %g", r, slices.Min(kept), slices.Max(dropped))
			}
			if b := whyTop.column("contribution(bias)")[r]; b != why.column("contribution(bias)")[r] {
				t.Errorf("row %d: contribution(bias) = %v, the explained endpoint's %v", r, b, why.column("contribution(bias)")[r])
			}
		}
	})

	t.Run("class all explains every class's margin", func(t *testing.T) {
		want := slices.Clone(irisPlain.Columns)
		for _, class := range iris.classes {
			want = append(want, contributionColumns(class+",", iris.features)...)
		}
		if !slices.Equal(irisWhy.Columns, want) {
			t.Fatalf("columns %q, want the plain endpoint's and then %q", irisWhy.Columns, want[len(irisPlain.Columns):])
		}
		samePrefix(t, irisPlain, irisWhy)
		numericContributions(t, irisWhy)
		for r := range iris.rows {
			margins := make([]float64, len(iris.classes))
			for k, class := range iris.classes {
				margins[k], _ = rowMargin(irisWhy, class+",", iris.features, r)
			}
			for k, p := range softmax(margins) {
				conf := irisWhy.column("confidence(" + iris.classes[k] + ")")[r].(float64)
				if math.Abs(p-conf) > 1e-5 {
					t.Errorf("row %d: the softmax of the classes' margins %v gives %s %.7f, its confidence is %.7f", r, margins, iris.classes[k], p, conf)
				}
			}
		}
	})

	t.Run("pandas reads the raw answer", func(t *testing.T) {
		for i, call := range calls {
			keys, rows := rawAnswer(t, c, call.URL, auth, frames[i].Body)
			f := frames[i]
			for r := range rows {
				if !slices.Equal(keys[r], f.Columns) {
					t.Errorf("%s row %d: the answer's keys %q, pandas' columns %q", call.URL, r, keys[r], f.Columns)
					continue
				}
				for j, col := range f.Columns {
					if !sameValue(rows[r][col], f.Values[j][r]) {
						t.Errorf("%s row %d: %s is %v in the answer, %v in pandas", call.URL, r, col, rows[r][col], f.Values[j][r])
					}
				}
			}
			if read := len(f.rows()); len(rows) != len(call.Rows) || read != len(rows) {
				t.Errorf("%s: %d rows answered for %d sent; pandas read %d", call.URL, len(rows), len(call.Rows), read)
			}
		}
	})
}

// predictionColumns are the columns a classifier answers.
func predictionColumns(fx *fixture) []string {
	out := []string{"prediction(" + fx.label + ")"}
	for _, c := range fx.classes {
		out = append(out, "confidence("+c+")")
	}
	return out
}

// contributionColumns are the columns of one margin's explanation, their
// names after prefix ("" or "<class>,").
func contributionColumns(prefix string, features []string) []string {
	var out []string
	for _, f := range append(slices.Clone(features), "bias") {
		out = append(out, "contribution("+prefix+f+")")
	}
	return out
}

// samePrefix checks that the explained frame starts with the plain frame's
// columns, with the same values: explanations change no answer.
func samePrefix(t *testing.T, plain, explained *clientFrame) {
	t.Helper()
	for i, col := range plain.Columns {
		if explained.Dtypes[i] != plain.Dtypes[i] || !slices.Equal(explained.Values[i], plain.Values[i]) {
			t.Errorf("%s: %s %v explained, %s %v plain", col, explained.Dtypes[i], explained.Values[i], plain.Dtypes[i], plain.Values[i])
		}
	}
}

// numericContributions checks that pandas reads every contribution column
// as numbers: float64, or int64 where read_json turns a column whose
// every value is whole (a feature the trees never split on contributes 0
// to every row) into integers, as it does any such column. Never object.
func numericContributions(t *testing.T, f *clientFrame) {
	t.Helper()
	for i, col := range f.Columns {
		if !strings.HasPrefix(col, "contribution(") {
			continue
		}
		switch f.Dtypes[i] {
		case "float64":
		case "int64":
			for _, v := range f.Values[i] {
				if x, ok := v.(float64); !ok || x != math.Trunc(x) {
					t.Errorf("%s: dtype int64 with the value %v", col, v)
				}
			}
		default:
			t.Errorf("%s: dtype %s, want float64", col, f.Dtypes[i])
		}
	}
}

// rowMargin returns the bias plus the contributions to row r of the margin
// whose columns are named after prefix, and how many features have one.
func rowMargin(f *clientFrame, prefix string, features []string, r int) (float64, int) {
	margin, _ := f.column("contribution(" + prefix + "bias)")[r].(float64)
	n := 0
	for _, feat := range features {
		if v, ok := f.column("contribution(" + prefix + feat + ")")[r].(float64); ok {
			margin += v
			n++
		}
	}
	return margin, n
}

func softmax(m []float64) []float64 {
	top := slices.Max(m)
	out := make([]float64, len(m))
	sum := 0.0
	for i, v := range m {
		out[i] = math.Exp(v - top)
		sum += out[i]
	}
	for i := range out {
		out[i] /= sum
	}
	return out
}

// rawAnswer posts body to url with auth, as the client did, and returns
// each answered row's keys in the order the server wrote them, and its
// values.
func rawAnswer(t *testing.T, c *client, url, auth, body string) ([][]string, []map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", auth)
	res, err := c.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %d %s", url, res.StatusCode, raw)
	}
	var answer struct{ Data []json.RawMessage }
	if err := json.Unmarshal(raw, &answer); err != nil {
		t.Fatalf("POST %s: %v in %s", url, err, raw)
	}
	keys := make([][]string, len(answer.Data))
	rows := make([]map[string]any, len(answer.Data))
	for i, row := range answer.Data {
		var err error
		if keys[i], rows[i], err = orderedObject(row); err != nil {
			t.Fatalf("POST %s: row %d: %v", url, i, err)
		}
	}
	return keys, rows
}

// orderedObject decodes a JSON object into its keys, in order, and values.
func orderedObject(b []byte) ([]string, map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, fmt.Errorf("not an object: %s", b)
	}
	var keys []string
	values := map[string]any{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		key := tok.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		keys = append(keys, key)
		values[key] = v
	}
	return keys, values, nil
}

// sameValue reports whether a value of the server's answer is the one
// pandas read: the same text, both missing, or numbers within the rounding
// of read_json's fast float parser.
func sameValue(answer, pandas any) bool {
	a, aok := answer.(float64)
	p, pok := pandas.(float64)
	if aok && pok {
		return math.Abs(a-p) <= 1e-12*max(1, math.Abs(a))
	}
	return answer == pandas
}
