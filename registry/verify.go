package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry/process"
)

// Verification is what an upload asks a model to reproduce before it is
// accepted: rows and the predictions its producer made for them.
type Verification struct {
	// Rows are scored by the loaded model.
	Rows *process.Table
	// Expected holds one value per row: a float64 (a regressor's
	// prediction), a string (a classifier's predicted class), a []float64
	// (a classifier's confidences, in class order) or a map[string]any
	// (result column → float64 or string; only the named columns are
	// compared). Numbers may also be given as []any of numbers, as JSON
	// decodes them.
	Expected []any
	// Tolerance bounds the difference of numbers: got and want agree when
	// |got-want| <= Tolerance*max(1, |want|). 0 means 1e-6.
	Tolerance float64
}

// maxListed is how many differing values a failed verification lists.
const maxListed = 5

// verify scores v's rows with m and compares the result with v.Expected,
// and returns the result. Any difference fails with [ErrVerification],
// listing the first few.
func verify(ctx context.Context, m *process.LoadedModel, v *Verification) (*process.Table, error) {
	if v.Rows == nil {
		return nil, process.ModelErrorf(ErrVerification, "the verification has no rows")
	}
	if len(v.Expected) != v.Rows.Rows() {
		return nil, process.ModelErrorf(ErrVerification, "the verification has %d expected predictions for %d rows", len(v.Expected), v.Rows.Rows())
	}
	tol := v.Tolerance
	switch {
	case tol < 0 || math.IsNaN(tol) || math.IsInf(tol, 0):
		return nil, process.ModelErrorf(ErrVerification, "the verification's tolerance %v is not a non-negative number", tol)
	case tol == 0:
		tol = 1e-6
	}
	for _, in := range m.Schema.Inputs {
		if c, ok := v.Rows.Lookup(in.Name); ok && c.Kind != in.Kind {
			return nil, process.ModelErrorf(ErrVerification, "verification column %q holds %s values; the model reads %s", in.Name, c.Kind, in.Kind)
		}
	}
	out, err := scoreRows(ctx, m, v.Rows, ErrVerification, "verification")
	if err != nil {
		return nil, err
	}
	c := comparer{out: out, schema: m.Schema, tol: tol}
	for i, want := range v.Expected {
		if err := c.row(i, want); err != nil {
			return nil, err
		}
	}
	if c.rows == 0 {
		return out, nil
	}
	more := ""
	if n := c.diffs - len(c.listed); n > 0 {
		more = fmt.Sprintf("; and %d more values", n)
	}
	return nil, process.ModelErrorf(ErrVerification, "the model's predictions differ from the expected ones in %d of %d rows: %s%s",
		c.rows, len(v.Expected), strings.Join(c.listed, "; "), more)
}

// comparer compares a model's answers with expected values, row by row.
type comparer struct {
	out    *process.Table
	schema process.ModelSchema
	tol    float64

	rows   int      // rows with a difference
	diffs  int      // differing values
	listed []string // the first maxListed differences
}

func (c *comparer) prediction() string { return "prediction(" + c.schema.Label + ")" }

// row compares row i with want; it fails only for an expectation it
// cannot read.
func (c *comparer) row(i int, want any) error {
	before := c.diffs
	switch w := want.(type) {
	case string:
		c.text(i, c.prediction(), w)
	case map[string]any:
		for _, name := range slices.Sorted(maps.Keys(w)) {
			x := w[name]
			if s, ok := x.(string); ok {
				c.text(i, name, s)
				continue
			}
			f, ok := number(x)
			if !ok {
				return process.ModelErrorf(ErrVerification, "the expected value of row %d, column %q, is neither a number nor text", i, name)
			}
			c.number(i, name, f)
		}
	default:
		if f, ok := number(w); ok {
			c.number(i, c.prediction(), f)
			break
		}
		list, ok := numbers(w)
		if !ok {
			return process.ModelErrorf(ErrVerification, "the expected value of row %d is %s; want a number, a class, a list of confidences or an object of result columns", i, describe(w))
		}
		if len(list) != len(c.schema.Classes) {
			return process.ModelErrorf(ErrVerification, "row %d expects %d confidences; the model has %d classes", i, len(list), len(c.schema.Classes))
		}
		for k, f := range list {
			c.number(i, "confidence("+c.schema.Classes[k]+")", f)
		}
	}
	if c.diffs > before {
		c.rows++
	}
	return nil
}

func (c *comparer) differ(i int, col string, got, want string) {
	c.diffs++
	if len(c.listed) < maxListed {
		c.listed = append(c.listed, fmt.Sprintf("row %d, %s: got %s, want %s", i, col, got, want))
	}
}

func (c *comparer) number(i int, col string, want float64) {
	w := fmt.Sprint(want)
	col0, ok := c.out.Lookup(col)
	switch {
	case !ok:
		c.differ(i, col, "no such column", w)
	case col0.Kind != process.Number:
		got, _ := col0.Text(i)
		c.differ(i, col, fmt.Sprintf("%q", got), w)
	default:
		got, ok := col0.Number(i)
		if !ok {
			c.differ(i, col, "a missing value", w)
		} else if math.Abs(got-want) > c.tol*math.Max(1, math.Abs(want)) || math.IsNaN(want) {
			c.differ(i, col, fmt.Sprint(got), w)
		}
	}
}

func (c *comparer) text(i int, col, want string) {
	w := fmt.Sprintf("%q", want)
	col0, ok := c.out.Lookup(col)
	switch {
	case !ok:
		c.differ(i, col, "no such column", w)
	case col0.Kind != process.Text:
		got, _ := col0.Number(i)
		c.differ(i, col, fmt.Sprint(got), w)
	default:
		got, ok := col0.Text(i)
		if !ok {
			c.differ(i, col, "a missing value", w)
		} else if got != want {
			c.differ(i, col, fmt.Sprintf("%q", got), w)
		}
	}
}

// number reads x as a number of any of the kinds a caller or a JSON
// decoder gives.
func number(x any) (float64, bool) {
	switch n := x.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// numbers reads x as a list of numbers.
func numbers(x any) ([]float64, bool) {
	switch l := x.(type) {
	case []float64:
		return l, true
	case []any:
		out := make([]float64, len(l))
		for i, e := range l {
			f, ok := number(e)
			if !ok {
				return nil, false
			}
			out[i] = f
		}
		return out, true
	}
	return nil, false
}

func describe(x any) string {
	if x == nil {
		return "null"
	}
	return fmt.Sprintf("a %T", x)
}

// scoreRows scores rows with m and checks that it answered one row each;
// a failure is an error of kind, saying which rows (what: "verification",
// "reference") the model could not score.
func scoreRows(ctx context.Context, m *process.LoadedModel, rows *process.Table, kind *problem.Error, what string) (*process.Table, error) {
	out, err := m.Process.Score(ctx, process.Input{Table: rows})
	if err != nil {
		return nil, process.ModelErrorf(kind, "the model could not score the %s rows: %v", what, err)
	}
	if out.Rows() != rows.Rows() {
		return nil, process.ModelErrorf(kind, "the model answered %d rows for %d", out.Rows(), rows.Rows())
	}
	return out, nil
}
