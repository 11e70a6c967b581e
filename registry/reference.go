package registry

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry/drift"
	"github.com/scorehub/scorehub/registry/process"
)

// Upload is what may come with a model file when a version is added
// ([Registry.AddModelVersion]).
type Upload struct {
	// Verification, when set, holds rows the model must score as the
	// upload expects before the version is kept.
	Verification *Verification
	// Reference, when set, holds rows like those the model is meant to
	// score: the version's drift is measured against their profile, in
	// preference to the verification rows'. They need no expected
	// predictions; the model scores them, so that the profile holds the
	// distribution of its predictions too. At most MaxReferenceRows. A
	// Text column of an input the model reads as Number has its values
	// read as numbers, as the cells of a CSV file, which are all text,
	// need to be.
	Reference *process.Table
}

// The bounds of a version's reference.
const (
	// MaxReferenceRows bounds the rows a reference is profiled from.
	MaxReferenceRows = 100_000
	// MaxProfileFeatures bounds the features a reference profiles: a
	// model with more keeps the most important (when it explains its
	// predictions) or the first.
	MaxProfileFeatures = 1000
	// importanceRows is how many of the reference rows the importance of
	// the features is measured on: contributions cost far more than
	// scores.
	importanceRows = 1000
)

// ErrReference reports reference rows a profile cannot be built from:
// none of the model's inputs among them, a column of another kind than
// the model reads, more rows than MaxReferenceRows.
var ErrReference = &problem.Error{Code: problem.SchemaMismatch, Text: "registry: reference rows unusable",
	Message: "the reference rows cannot be profiled"}

// referenceOf returns the profile drift is measured against of rows, and
// of out, m's answers to them: the inputs rows hold (at most
// MaxProfileFeatures), their importance when m explains its predictions,
// and the predicted class or the prediction. It fails with ErrReference
// when rows hold none of m's inputs, or one of another kind.
func referenceOf(ctx context.Context, m *process.LoadedModel, rows, out *process.Table) (*drift.Profile, error) {
	cols := make([]process.Column, 0, rows.NumColumns()+1)
	var features []process.ColumnSpec
	for _, in := range m.Schema.Inputs {
		c, ok := rows.Lookup(in.Name)
		switch {
		case !ok:
			continue
		case c.Kind != in.Kind:
			return nil, process.ModelErrorf(ErrReference, "reference column %q holds %s values; the model reads %s", in.Name, c.Kind, in.Kind)
		}
		if !hasValue(c) {
			continue // a column of missing values has no distribution to compare with
		}
		cols = append(cols, *c)
		features = append(features, in)
	}
	if len(features) == 0 {
		return nil, process.ModelErrorf(ErrReference, "the reference rows hold a value of none of the model's inputs")
	}
	var prediction process.ColumnSpec
	if len(m.Schema.Outputs) > 0 {
		if c, ok := out.Lookup(m.Schema.Outputs[0].Name); ok && hasValue(c) && !slices.ContainsFunc(features, func(f process.ColumnSpec) bool { return f.Name == c.Name }) {
			cols = append(cols, *c)
			prediction = process.ColumnSpec{Name: c.Name, Kind: c.Kind}
		}
	}
	t, err := process.NewTable(rows.Rows(), cols...)
	if err != nil {
		return nil, process.ModelErrorf(ErrReference, "%v", err)
	}
	p, err := drift.BuildProfile(t, features, drift.Options{Prediction: prediction})
	if err != nil {
		return nil, process.ModelErrorf(ErrReference, "%v", err)
	}
	if err := weigh(ctx, m, rows, p); err != nil {
		return nil, err
	}
	p, _ = p.Most(MaxProfileFeatures)
	return p, nil
}

// hasValue reports whether c holds a value in some row.
func hasValue(c *process.Column) bool {
	for i := range c.Len() {
		if c.Kind == process.Number {
			if v, ok := c.Number(i); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
				return true
			}
		} else if _, ok := c.Text(i); ok {
			return true
		}
	}
	return false
}

// weigh sets the importance of p's features, when m explains its
// predictions: the mean absolute contribution of each to the margins of
// the first importanceRows of rows (over the margins of every class, for
// a model of a margin per class). A model that cannot explain these rows
// leaves p without importance.
func weigh(ctx context.Context, m *process.LoadedModel, rows *process.Table, p *drift.Profile) error {
	ex, ok := m.Process.(process.Explainer)
	if !ok {
		return nil
	}
	n := min(rows.Rows(), importanceRows)
	x, err := ex.Explain(ctx, process.Input{Table: rows.Slice(0, n)})
	if err != nil || len(x.Values) == 0 {
		return ctx.Err() // a model's failure to explain costs the profile its importance, not the upload
	}
	width := len(x.Features) + 1
	sums := make([]float64, len(x.Features))
	for _, g := range x.Values {
		for r := range n {
			for j := range sums {
				sums[j] += math.Abs(g[r*width+j])
			}
		}
	}
	terms := float64(n * len(x.Values))
	for i := range p.Features {
		f := &p.Features[i]
		if j := slices.Index(x.Features, f.Name); j >= 0 && terms > 0 {
			if v := sums[j] / terms; !math.IsNaN(v) && !math.IsInf(v, 0) {
				f.Importance = &v
			}
		}
	}
	return nil
}

// reference returns the reference of a version of m uploaded with u, in
// order of preference: the profile of u's reference rows, scored by m;
// of its verification rows, with verified, m's answers verify computed;
// or of what m's file declares of its inputs' values (a declared
// profile, which checks ranges and categories, not shapes). It returns
// nil when there is none of them: verification rows that hold nothing
// to profile, say, as they are checked, not required to describe the
// traffic. u may be nil.
func (u *Upload) reference(ctx context.Context, m *process.LoadedModel, verified *process.Table) (*drift.Profile, error) {
	switch {
	case u != nil && u.Reference != nil:
		return scoredReference(ctx, m, u.Reference)
	case u != nil && u.Verification != nil && verified != nil:
		p, err := referenceOf(ctx, m, u.Verification.Rows, verified)
		if err == nil || ctx.Err() != nil {
			return p, err
		}
	}
	p, err := drift.DeclaredProfile(m.Schema, drift.Options{})
	if err != nil {
		return nil, nil // a model that declares nothing has no reference; one that declares nonsense was refused by its format
	}
	p, _ = p.Most(MaxProfileFeatures)
	return p, nil
}

// scoredReference is the profile of reference rows, which m scores to
// profile its predictions of them.
func scoredReference(ctx context.Context, m *process.LoadedModel, rows *process.Table) (*drift.Profile, error) {
	if rows.Rows() == 0 {
		return nil, process.ModelErrorf(ErrReference, "the reference has no rows")
	}
	if rows.Rows() > MaxReferenceRows {
		return nil, process.ModelErrorf(ErrReference, "the reference has %d rows; at most %d are profiled", rows.Rows(), MaxReferenceRows)
	}
	rows, err := asNumbers(rows, m.Schema.Inputs)
	if err != nil {
		return nil, err
	}
	out, err := scoreRows(ctx, m, rows, ErrReference, "reference")
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return referenceOf(ctx, m, rows, out)
}

// PutModelReference replaces the reference of version of model: the
// profile of rows (as [Upload.Reference]), which drift is then measured
// against by every endpoint on the version, from its next request on. It
// returns the version as stored. The model must exist and have the
// version ([ErrNotFound]); rows that cannot be profiled fail with
// [ErrReference]. The version's model file and metadata do not change.
func (r *Registry) PutModelReference(ctx context.Context, model string, version int, rows *process.Table) (ModelVersion, error) {
	v, ok := r.Snapshot().state.modelVersion(model, version)
	if !ok {
		return ModelVersion{}, fmt.Errorf("registry: model %q has no version %d: %w", model, version, ErrNotFound)
	}
	key := cacheKey{sum: v.SHA256, meta: metaDigest(v.Metadata)}
	r.models.pin(key)
	defer r.models.unpin(key, r.w.State)
	e, err := r.models.stored(newVersionInfo(model, v))
	if err != nil {
		return ModelVersion{}, err
	}
	p, err := scoredReference(ctx, e.model, rows)
	if err != nil {
		return ModelVersion{}, err
	}
	return update(ctx, r, func(tx *Tx) (ModelVersion, error) {
		next, c, stored, err := tx.st.withVersionReference(model, version, v.SHA256, p, tx.now)
		return stored, tx.set(next, c, err)
	})
}

// asNumbers returns rows with each Text column of an input that inputs
// say is a Number read as numbers; an empty text is a missing value. A
// text that is not a number fails with ErrReference naming its column
// and row, as does a Number column of a Text input.
func asNumbers(rows *process.Table, inputs []process.ColumnSpec) (*process.Table, error) {
	var cols []process.Column
	for _, in := range inputs {
		c, ok := rows.Lookup(in.Name)
		switch {
		case !ok || c.Kind == in.Kind:
			continue
		case in.Kind == process.Text:
			return nil, process.ModelErrorf(ErrReference, "reference column %q holds number values; the model reads text", in.Name)
		}
		if cols == nil {
			cols = make([]process.Column, rows.NumColumns())
			for i := range cols {
				cols[i] = *rows.Column(i)
			}
		}
		values, missing := make([]float64, c.Len()), make([]bool, c.Len())
		for i := range values {
			t, ok := c.Text(i)
			if t = strings.TrimSpace(t); !ok || t == "" {
				missing[i] = true
				continue
			}
			v, err := strconv.ParseFloat(t, 64)
			if err != nil {
				return nil, process.ModelErrorf(ErrReference, "reference column %q holds %q in row %d; the model reads numbers", in.Name, t, i+1)
			}
			values[i] = v
		}
		cols[rows.Index(in.Name)] = process.NumberColumn(in.Name, values, missing)
	}
	if cols == nil {
		return rows, nil
	}
	t, err := process.NewTable(rows.Rows(), cols...)
	if err != nil {
		return nil, process.ModelErrorf(ErrReference, "%v", err)
	}
	return t, nil
}
