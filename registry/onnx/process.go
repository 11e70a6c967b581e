package onnx

import (
	"context"
	"fmt"
	"math"

	"github.com/scorehub/scorehub/registry/process"
)

// chunkRows is how many rows one evaluation of the graph scores: it
// bounds the memory of a large request and how long Score runs before it
// checks its context.
const chunkRows = 2048

// run evaluates the plan for the rows of t, chunk by chunk, and calls emit
// with the first row of each chunk, its rows, the output tensor and which
// rows cannot be scored (nil: all can).
func (p *plan) run(ctx context.Context, t *process.Table, emit func(first, n int, out *tensor, bad []bool)) error {
	err := p.evaluate(ctx, t, p.steps, nil, func(first int, s *state) error {
		out := s.vals[p.output.slot]
		emit(first, s.rows, &out, s.bad)
		return nil
	})
	if err != nil {
		return fmt.Errorf("onnx: scoring stopped: %w", err)
	}
	return nil
}

// evaluate binds the rows of t to the graph's inputs chunk by chunk, runs
// steps on each chunk and hands its state, whose first row is row first
// of t, to emit. raw, when not nil, names the tree ensemble whose raw
// scores each chunk keeps. It stops with ctx's error when ctx is done,
// or with emit's.
func (p *plan) evaluate(ctx context.Context, t *process.Table, steps []step, raw *treeNode, emit func(first int, s *state) error) error {
	cols := make([]int, len(p.columns))
	for i, c := range p.columns {
		cols[i] = t.Index(c.Name)
	}
	rows := t.Rows()
	for first := 0; first < rows; first += chunkRows {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(chunkRows, rows-first)
		s := &state{rows: n, vals: make([]tensor, p.slots)}
		if raw != nil {
			s.raw = &rawScores{node: raw.node}
		}
		if p.wide {
			in := p.inputs[0]
			s.vals[in.slot] = p.bind(s, in, t, cols, first, n)
		} else {
			for i, in := range p.inputs {
				s.vals[in.slot] = p.bind(s, in, t, cols[i:i+1], first, n)
			}
		}
		for _, st := range steps {
			st.run(s)
		}
		if err := emit(first, s); err != nil {
			return err
		}
	}
	return nil
}

// bind builds the tensor of input in from the table's columns (positions
// in cols, -1 for a column the table lacks), one column per value of a
// row. A missing number is NaN for a float or double input; a value the
// input cannot hold (a missing value of an integer, bool or string input,
// a fraction for an integer one) makes its row unscorable.
func (p *plan) bind(s *state, in *value, t *process.Table, cols []int, first, n int) tensor {
	w := len(cols)
	var dst tensor
	switch {
	case in.dt == dtFloat:
		dst.f32 = make([]float32, n*w)
	case in.dt == dtDouble:
		dst.f64 = make([]float64, n*w)
	case in.dt == dtString:
		dst.str = make([]string, n*w)
	default:
		dst.i64 = make([]int64, n*w)
	}
	for j, ci := range cols {
		var c *process.Column
		if ci >= 0 {
			c = t.Column(ci)
		}
		if c != nil && c.Kind == process.Number && (in.dt == dtFloat || in.dt == dtDouble) {
			// The common case, read straight from the column: a missing
			// mark or a NaN is NaN either way.
			nums := c.Numbers[first : first+n]
			for r, v := range nums {
				if c.Missing != nil && c.Missing[first+r] {
					v = math.NaN()
				}
				if in.dt == dtFloat {
					dst.f32[r*w+j] = float32(v)
				} else {
					dst.f64[r*w+j] = v
				}
			}
			continue
		}
		for r := range n {
			i := r*w + j
			if in.dt == dtString {
				v, ok := "", false
				if c != nil {
					v, ok = c.Text(first + r)
				}
				if !ok {
					s.markBad(r)
				}
				dst.str[i] = v
				continue
			}
			v, ok := math.NaN(), false
			if c != nil {
				v, ok = c.Number(first + r)
			}
			if !ok {
				v = math.NaN()
			}
			switch in.dt {
			case dtFloat:
				dst.f32[i] = float32(v)
			case dtDouble:
				dst.f64[i] = v
			default:
				if !ok || v != math.Trunc(v) || math.Abs(v) > 1<<53 || (in.dt == dtBool && v != 0 && v != 1) ||
					(in.dt == dtInt32 && (v > math.MaxInt32 || v < math.MinInt32)) {
					s.markBad(r)
					continue
				}
				dst.i64[i] = int64(v)
			}
		}
	}
	return dst
}

// predictProbs is the classifier's [process.PredictFunc].
func (p *plan) predictProbs(ctx context.Context, in process.Input, probs []float64) error {
	k := len(p.classes)
	return p.run(ctx, in.Table, func(first, n int, out *tensor, bad []bool) {
		dst := probs[first*k : (first+n)*k]
		for i := range dst {
			dst[i] = readFloat(p.output.dt, out, i)
		}
		for r, b := range bad {
			if b {
				for j := range k {
					dst[r*k+j] = math.NaN()
				}
			}
		}
	})
}

// regressor is the Process of a model answering one number per row.
type regressor struct {
	p    *plan
	name string
}

func (g *regressor) Score(ctx context.Context, in process.Input) (*process.Table, error) {
	vals := make([]float64, in.Table.Rows())
	dt := g.p.output.dt
	err := g.p.run(ctx, in.Table, func(first, n int, out *tensor, bad []bool) {
		for r := range n {
			var v float64
			if dt.integer() {
				v = float64(out.i64[r])
			} else {
				v = readFloat(dt, out, r)
			}
			if bad != nil && bad[r] {
				v = math.NaN()
			}
			vals[first+r] = v
		}
	})
	if err != nil {
		return nil, err
	}
	return process.NewTable(len(vals), process.NumberColumn(g.name, vals, nil))
}
