package wire_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/internal/tabletest"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring/internal/wire"
)

// FuzzDecode checks that Decode never panics, refuses only with a request
// fault, and that what it accepts is a consistent table whose echo decodes
// back to the same table and the same raw values. The seed corpus is in
// testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	lim := wire.Limits{MaxBodyBytes: 1 << 16, MaxRows: 64, MaxColumns: 16, MaxCells: 256}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := decode(bytes.NewReader(body), lim)
		if err != nil {
			var e *problem.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not a *problem.Error", err)
			}
			if e.Status != 400 && e.Status != 413 {
				t.Fatalf("status %d for a request fault: %v", e.Status, e)
			}
			if e.Pointer != "" && !strings.HasPrefix(e.Pointer, "/") {
				t.Fatalf("pointer %q", e.Pointer)
			}
			return
		}
		if !json.Valid(body) {
			t.Fatalf("accepted invalid JSON %q", body)
		}
		tbl := req.Table
		if tbl.NumColumns() > lim.MaxColumns || tbl.Rows() > lim.MaxRows || tbl.Rows()*tbl.NumColumns() > lim.MaxCells {
			t.Fatalf("table of %d×%d exceeds the limits", tbl.Rows(), tbl.NumColumns())
		}
		for i := range tbl.NumColumns() {
			c := tbl.Column(i)
			if c.Len() != tbl.Rows() || (c.Missing != nil && len(c.Missing) != tbl.Rows()) {
				t.Fatalf("column %q has %d values for %d rows", c.Name, c.Len(), tbl.Rows())
			}
			if c.Kind != process.Number && c.Kind != process.Text {
				t.Fatalf("column %q has kind %v", c.Name, c.Kind)
			}
			for r := range tbl.Rows() {
				raw, present := req.Raw(r, i)
				if present != (len(raw) > 0) {
					t.Fatalf("row %d column %q: raw %q, present %v", r, c.Name, raw, present)
				}
				if c.IsMissing(r) {
					if present && string(raw) != "null" {
						t.Fatalf("row %d column %q sent %q but is missing", r, c.Name, raw)
					}
					continue
				}
				if !present || string(raw) == "null" {
					t.Fatalf("row %d column %q has a value but sent %q", r, c.Name, raw)
				}
				if c.Kind == process.Number {
					want, err := strconv.ParseFloat(string(raw), 64)
					if err != nil || math.Float64bits(want) != math.Float64bits(c.Numbers[r]) {
						t.Fatalf("row %d column %q: %q decoded as %v, strconv says %v (%v)", r, c.Name, raw, c.Numbers[r], want, err)
					}
					continue
				}
				want := string(raw)
				if raw[0] == '"' {
					if err := json.Unmarshal(raw, &want); err != nil {
						t.Fatal(err)
					}
				}
				if c.Texts[r] != want {
					t.Fatalf("row %d column %q: %q decoded as %q, want %q", r, c.Name, raw, c.Texts[r], want)
				}
			}
		}

		out, err := wire.AppendResponse(nil, req, tabletest.Must(tbl.Rows()))
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(out) {
			t.Fatalf("echo %q is not valid JSON", out)
		}
		again, err := decode(bytes.NewReader(out), wire.Limits{MaxRows: lim.MaxRows, MaxColumns: lim.MaxColumns, MaxCells: lim.MaxCells})
		if err != nil {
			t.Fatalf("the echo %q does not decode: %v", out, err)
		}
		if diff := cmp.Diff(viewTable(tbl), viewTable(again.Table)); diff != "" {
			t.Fatalf("the echo decodes to another table (-first +echo):\n%s", diff)
		}
		for r := range tbl.Rows() {
			for i := range tbl.NumColumns() {
				a, _ := req.Raw(r, i)
				b, _ := again.Raw(r, i)
				if !bytes.Equal(a, b) {
					t.Fatalf("row %d column %d: sent %q, echoed %q", r, i, a, b)
				}
			}
		}
		out2, err := wire.AppendResponse(nil, again, tabletest.Must(tbl.Rows()))
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("echoing the echo changed it:\n%q\n%q", out, out2)
		}
	})
}
