package models

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/internal/testenv"
)

// python is the interpreter with pandas (Debian's python3-pandas); the
// python3 first on PATH may be another build without it.
const python = "/usr/bin/python3"

// pandasScript writes, for each request it reads (rows, a JSON array of
// objects, and columns), the body a pandas client posts:
// DataFrame.to_json(orient="table"), with the columns in the order given;
// one body a line. double_precision=15 keeps the inputs as exact as the
// format allows (the default, 10, rounds them).
const pandasScript = `
import json, sys
import pandas as pd
for req in json.load(sys.stdin):
    df = pd.DataFrame.from_records(req["rows"], columns=req["columns"])
    sys.stdout.write(df.to_json(orient="table", double_precision=15) + "\n")
`

// hasPandas reports whether python can import pandas.
func hasPandas() bool {
	return exec.Command(python, "-c", "import pandas").Run() == nil
}

// frame is the rows of a pandas DataFrame with numeric columns, nil a
// missing value.
type frame struct {
	Rows    []map[string]any `json:"rows"`
	Columns []string         `json:"columns"`
}

// pandasBodies returns, for each frame, the body pandas writes for it: by
// pandas itself when python has it (one run for all, as starting it takes
// a second), else by goPandasBody.
func pandasBodies(t testing.TB, frames []frame) [][]byte {
	t.Helper()
	if !hasPandas() {
		out := make([][]byte, len(frames))
		for i, f := range frames {
			out[i] = goPandasBody(f.Rows, f.Columns)
		}
		return out
	}
	return runPandas(t, frames)
}

// runPandas has pandas write the bodies of frames.
func runPandas(t testing.TB, frames []frame) [][]byte {
	t.Helper()
	in, err := json.Marshal(frames)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, "-c", pandasScript)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pandas: %v\n%s", err, stderr.String())
	}
	lines := bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n"))
	if len(lines) != len(frames) {
		t.Fatalf("pandas wrote %d bodies for %d frames", len(lines), len(frames))
	}
	return lines
}

// goPandasBody builds what DataFrame.to_json(orient="table") writes for
// numeric and text columns: a Table Schema with the index as the primary
// key, and one object per row with its index, NaN as null. A column is
// text when a row holds a string in it.
func goPandasBody(rows []map[string]any, columns []string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"schema":{"fields":[{"name":"index","type":"integer"}`)
	for _, c := range columns {
		name, _ := json.Marshal(c)
		kind := "number"
		for _, r := range rows {
			if _, ok := r[c].(string); ok {
				kind = "string"
				break
			}
		}
		fmt.Fprintf(&b, `,{"name":%s,"type":%q}`, name, kind)
	}
	b.WriteString(`],"primaryKey":["index"],"pandas_version":"1.4.0"},"data":[`)
	for i, r := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"index":%d`, i)
		for _, c := range columns {
			name, _ := json.Marshal(c)
			b.WriteByte(',')
			b.Write(name)
			b.WriteByte(':')
			if s, ok := r[c].(string); ok {
				text, _ := json.Marshal(s)
				b.Write(text)
				continue
			}
			v, ok := r[c].(float64)
			if !ok || math.IsNaN(v) {
				b.WriteString("null")
				continue
			}
			b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		}
		b.WriteByte('}')
	}
	b.WriteString("]}")
	return b.Bytes()
}

// TestGoPandasBody: the body built in Go, used where pandas is missing, is
// the one pandas writes: the same schema, rows, indexes and values (within
// the 15 decimals pandas writes, text as it is), missing values as null.
func TestGoPandasBody(t *testing.T) {
	t.Parallel()
	if !hasPandas() {
		testenv.SkipOrFail(t, "%s cannot import pandas (Debian: apt-get install python3-pandas)", python)
	}
	rows := []map[string]any{
		{"sepal length (cm)": 5.1, "width": 0.0380759064334241, "n": 3.0, "sex": "male"},
		{"sepal length (cm)": nil, "width": -1e-7, "n": 12345.5, "sex": "fe\"male"},
		{"width": 2.0, "sex": "é"},
	}
	columns := []string{"sepal length (cm)", "width", "n", "sex"}
	var fromPandas, fromGo any
	if err := json.Unmarshal(runPandas(t, []frame{{rows, columns}})[0], &fromPandas); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(goPandasBody(rows, columns), &fromGo); err != nil {
		t.Fatal(err)
	}
	close := cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) <= 1e-15 })
	if d := cmp.Diff(fromPandas, fromGo, close, cmp.FilterPath(func(p cmp.Path) bool {
		return p.Last().String() == `["pandas_version"]`
	}, cmp.Ignore())); d != "" {
		t.Errorf("the Go-built body differs from pandas' (-pandas +Go):\n%s", d)
	}
}
