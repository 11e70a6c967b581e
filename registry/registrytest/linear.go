package registrytest

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/scorehub/scorehub/registry/process"
)

// linearMagic starts every file of [LinearFormat].
const linearMagic = "scorehub-test-linear v1\n"

// LinearFormat is a model format for tests: a text file that holds a linear
// model, so that tests of the model registry and of what is built on it
// need no real model file. A file reads
//
//	scorehub-test-linear v1
//	bias 0.5
//	weight age 0.25
//	weight income -1
//
// (make one with [LinearArtifact]). The score of a row is the bias plus the
// weighted sum of its inputs, a missing input counting as 0. Without
// classes in the metadata the model is a regressor answering the score as
// "prediction(<label>)"; with exactly two it is a classifier whose second
// class has the confidence 1/(1+e^-score). Metadata features, when given,
// rename the weights in order.
//
// A file that starts like one but breaks these rules, or weighs a feature
// twice, fails with
// [process.ErrModelInvalid]; one with more than MaxWeights weights with
// [process.ErrModelLimit].
//
// Its zero value is ready to use. A LinearFormat counts the files it loads,
// so that tests can tell a cached model from a parsed one; it is safe for
// concurrent use.
type LinearFormat struct {
	// MaxWeights bounds the weights of a file; 0 means 100.
	MaxWeights int

	loads atomic.Int64
}

var _ process.ModelFormat = (*LinearFormat)(nil)

// LinearArtifact returns the file of [LinearFormat] with bias and one
// weight per feature: weights[i] is features[i]'s.
func LinearArtifact(bias float64, features []string, weights []float64) []byte {
	var b strings.Builder
	b.WriteString(linearMagic)
	fmt.Fprintf(&b, "bias %v\n", bias)
	for i, f := range features {
		fmt.Fprintf(&b, "weight %s %v\n", f, weights[i])
	}
	return []byte(b.String())
}

// Name is "linear".
func (*LinearFormat) Name() string { return "linear" }

// Detect reports whether artifact starts as a file of the format does.
func (*LinearFormat) Detect(artifact []byte) bool {
	return bytes.HasPrefix(artifact, []byte(linearMagic))
}

// Loads returns how many times Load has been called.
func (f *LinearFormat) Loads() int64 { return f.loads.Load() }

// Load parses artifact.
func (f *LinearFormat) Load(artifact []byte, meta process.ModelMetadata) (*process.LoadedModel, error) {
	f.loads.Add(1)
	limit := f.MaxWeights
	if limit == 0 {
		limit = 100
	}
	m := &linearModel{}
	var names []string
	lines := strings.Split(strings.TrimSuffix(string(artifact[len(linearMagic):]), "\n"), "\n")
	for i, line := range lines {
		fields := strings.Fields(line)
		bad := func() error {
			return process.ModelErrorf(process.ErrModelInvalid, "line %d of the linear model is not \"bias <number>\" or \"weight <name> <number>\": %q", i+2, line)
		}
		switch {
		case len(fields) == 2 && fields[0] == "bias":
			v, err := strconv.ParseFloat(fields[1], 64)
			if err != nil {
				return nil, bad()
			}
			m.bias = v
		case len(fields) == 3 && fields[0] == "weight":
			v, err := strconv.ParseFloat(fields[2], 64)
			if err != nil {
				return nil, bad()
			}
			if slices.Contains(names, fields[1]) {
				return nil, process.ModelErrorf(process.ErrModelInvalid, "line %d of the linear model weighs %q again; a feature has one weight", i+2, fields[1])
			}
			names = append(names, fields[1])
			m.weights = append(m.weights, v)
		default:
			return nil, bad()
		}
	}
	if len(m.weights) > limit {
		return nil, process.ModelErrorf(process.ErrModelLimit, "the linear model has %d weights, more than the %d allowed", len(m.weights), limit)
	}
	if len(meta.Features) > 0 {
		if len(meta.Features) != len(names) {
			return nil, process.ModelErrorf(process.ErrModelInvalid, "the metadata names %d features; the model has %d", len(meta.Features), len(names))
		}
		names = meta.Features
	}
	m.features = names
	label := meta.LabelOrDefault()
	schema := process.ModelSchema{Producer: "registrytest", Objective: "linear", Label: label}
	for _, n := range names {
		schema.Inputs = append(schema.Inputs, process.ColumnSpec{Name: n, Kind: process.Number})
	}
	lm := &process.LoadedModel{}
	switch len(meta.Classes) {
	case 0:
		schema.Task = process.Regression
		m.out = "prediction(" + label + ")"
		schema.Outputs = []process.ColumnSpec{{Name: m.out, Kind: process.Number}}
		lm.Process = m
	case 2:
		schema.Task = process.Classification
		schema.Classes = append([]string(nil), meta.Classes...)
		p, err := process.Classifier(label, meta.Classes, m.predict)
		if err != nil {
			return nil, process.ModelErrorf(process.ErrModelInvalid, "%v", err)
		}
		schema.Outputs = process.ClassifierOutputs(label, meta.Classes)
		lm.Process = explainedClassifier{p, m}
	default:
		return nil, process.ModelErrorf(process.ErrModelInvalid, "a linear classifier has two classes, not %d", len(meta.Classes))
	}
	lm.Schema = schema
	return lm, nil
}

// linearModel scores a loaded file of LinearFormat.
type linearModel struct {
	bias     float64
	features []string
	weights  []float64
	out      string // the regressor's result column
}

// scores returns the score of every row of t.
func (m *linearModel) scores(t *process.Table) []float64 {
	s := make([]float64, t.Rows())
	for i := range s {
		s[i] = m.bias
	}
	for k, name := range m.features {
		c, ok := t.Lookup(name)
		if !ok {
			continue
		}
		for i := range s {
			if v, ok := c.Number(i); ok {
				s[i] += m.weights[k] * v
			}
		}
	}
	return s
}

// Score answers the regressor's prediction.
func (m *linearModel) Score(ctx context.Context, in process.Input) (*process.Table, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return process.NewTable(in.Table.Rows(), process.NumberColumn(m.out, m.scores(in.Table), nil))
}

// Explain attributes each row's score exactly: a weight times its input
// (0 for a missing one), and the bias; the score is the margin, the
// classifier's log-odds. A LinearFormat model's process is a
// process.Explainer.
func (m *linearModel) Explain(ctx context.Context, in process.Input) (*process.Explanation, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n, rows := len(m.features), in.Table.Rows()
	values := make([]float64, rows*(n+1))
	for r := range rows {
		values[r*(n+1)+n] = m.bias
	}
	for k, name := range m.features {
		c, ok := in.Table.Lookup(name)
		if !ok {
			continue
		}
		for r := range rows {
			if v, ok := c.Number(r); ok {
				values[r*(n+1)+k] = m.weights[k] * v
			}
		}
	}
	return &process.Explanation{Features: append([]string(nil), m.features...), Groups: []string{""}, Values: [][]float64{values}, Margins: [][]float64{m.scores(in.Table)}}, nil
}

// explainedClassifier is the classifier's process, which explains its
// log-odds as the model does.
type explainedClassifier struct {
	process.Process
	m *linearModel
}

func (c explainedClassifier) Explain(ctx context.Context, in process.Input) (*process.Explanation, error) {
	return c.m.Explain(ctx, in)
}

var _ process.Explainer = (*linearModel)(nil)

// predict is the classifier's: the second class's confidence is the
// logistic of the score.
func (m *linearModel) predict(ctx context.Context, in process.Input, probs []float64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for i, s := range m.scores(in.Table) {
		p := 1 / (1 + math.Exp(-s))
		probs[2*i], probs[2*i+1] = 1-p, p
	}
	return nil
}
