package pmml

import (
	"context"
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/scorehub/scorehub/registry/process"
)

// input is a request column the model reads, and the slot it fills.
type input struct {
	name string
	slot int
}

// scorer runs a compiled model over request tables.
type scorer struct {
	m      model
	slots  int
	inputs []input
	k      int // classes; 0 for a regression or clustering model
	pool   sync.Pool
	name   string // the result column of a regression or clustering model
}

// state is one goroutine's memory for scoring rows.
type state struct {
	in   []value
	pred prediction
	cols []*process.Column
}

// ctxEvery is how many rows are scored between checks of the context.
const ctxEvery = 1024

// newScorer builds the LoadedModel of a compiled top-level model: its
// inputs are the active fields of h's MiningSchema, its outputs follow
// its function.
func newScorer(doc *document, h *modelHeader, name string, m model, fs *fieldSet, meta process.ModelMetadata, lim Limits) (*process.LoadedModel, error) {
	schema := process.ModelSchema{Format: "pmml", Producer: producer(doc.Header), Objective: name, Warnings: slices.Clone(*fs.warnings)}
	var target *field
	var inputs []input
	for _, mf := range h.MiningSchema.MiningFields {
		slot, f, _ := fs.lookup(mf.Name)
		switch mf.UsageType {
		case "", "active":
			inputs = append(inputs, input{name: f.name, slot: slot})
			schema.Inputs = append(schema.Inputs, process.ColumnSpec{Name: f.name, Kind: inputKind(f)})
			if d, ok := f.domain(); ok {
				schema.Domains = append(schema.Domains, d)
			}
		case "target", "predicted":
			target = f
		}
	}
	if err := checkTopOutput(h.Output, target); err != nil {
		return nil, err
	}
	sc := &scorer{m: m, slots: fs.slots(), inputs: inputs}
	if len(meta.Features) > 0 {
		names := make([]string, len(inputs))
		for i, in := range sc.inputs {
			names[i] = in.name
		}
		if !slices.Equal(names, meta.Features) {
			return nil, invalidf("the metadata's features %q are not the model's active fields %q; a PMML file names its own", meta.Features, names)
		}
	}
	label := meta.Label
	if label == "" && target != nil {
		label = target.name
	}
	if label == "" {
		label = meta.LabelOrDefault()
	}
	schema.Label = label
	predName := "prediction(" + label + ")"
	var proc process.Process
	switch h.FunctionName {
	case "classification":
		if target == nil || len(target.valid) == 0 {
			return nil, invalidf("the classification %s names no classes", name)
		}
		classes := slices.Clone(target.valid)
		if len(classes) > lim.MaxClasses {
			return nil, limitf("the model has %d classes, more than the limit of %d", len(classes), lim.MaxClasses)
		}
		// The target's values name the classes; metadata renames them
		// where they are the integers 0..k-1.
		classes, err := process.ClassNames(meta.Classes, classes, target.dataType == "integer", "a PMML file")
		if err != nil {
			return nil, err
		}
		sc.k = len(classes)
		p, err := process.Classifier(label, classes, sc.predictProbs)
		if err != nil {
			return nil, invalidf("%s", err.Error())
		}
		proc = p
		schema.Task = process.Classification
		schema.Classes = classes
		schema.Outputs = process.ClassifierOutputs(label, classes)
	case "regression":
		if len(meta.Classes) > 0 {
			return nil, invalidf("the metadata names classes, but the %s is a regression", name)
		}
		sc.name = predName
		proc = process.ProcessFunc(sc.scoreNumbers)
		schema.Task = process.Regression
		schema.Outputs = []process.ColumnSpec{{Name: predName, Kind: process.Number}}
	case "clustering":
		if len(meta.Classes) > 0 {
			return nil, invalidf("the metadata names classes, but the %s is a clustering", name)
		}
		sc.name = "cluster"
		proc = process.ProcessFunc(sc.scoreClusters)
		schema.Task = process.Clustering
		schema.Outputs = []process.ColumnSpec{{Name: sc.name, Kind: process.Text}}
	default:
		return nil, unsupported("a top-level " + name + " with functionName " + h.FunctionName + " is not supported")
	}
	if x := explainable(sc, m, schema.Classes); x != nil {
		proc = &explained{Process: proc, sc: sc, x: x}
	} else if hasTree(m) {
		schema.Unexplained = "only a regression TreeModel, or a sum of regression trees (a MiningModel of sum or weightedSum, " +
			"or a modelChain ending in a RegressionModel), explains its predictions, and only when every node of its trees " +
			"carries a recordCount, which TreeSHAP weighs by"
	}
	sc.pool.New = func() any {
		return &state{in: make([]value, sc.slots), pred: prediction{probs: make([]float64, sc.k)}}
	}
	return &process.LoadedModel{Schema: schema, Process: proc, RowWise: true}, nil
}

// producer names the program that wrote the file, from its Header.
func producer(h header) string {
	p := h.Application.Name
	if h.Application.Version != "" {
		if p != "" {
			p += " "
		}
		p += h.Application.Version
	}
	return p
}

// row scores row i of t, leaving the answer in st.pred. ok is false when
// the model has no prediction for the row.
func (sc *scorer) row(st *state, i int) (bool, error) {
	clear(st.in)
	for j, in := range sc.inputs {
		st.in[in.slot] = readColumn(st.cols[j], i)
	}
	st.pred.reset()
	err := sc.m.predict(st.in, &st.pred)
	if err == errInvalidRow {
		return false, nil
	}
	return err == nil && st.pred.value.kind != missing, err
}

// begin readies a state for scoring t.
func (sc *scorer) begin(t *process.Table) *state {
	st := sc.pool.Get().(*state)
	st.cols = st.cols[:0]
	for _, in := range sc.inputs {
		c, _ := t.Lookup(in.name)
		st.cols = append(st.cols, c)
	}
	return st
}

// predictProbs is the classifier's process.PredictFunc.
func (sc *scorer) predictProbs(ctx context.Context, in process.Input, probs []float64) error {
	st := sc.begin(in.Table)
	defer sc.pool.Put(st)
	for i := range in.Table.Rows() {
		if i%ctxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		ok, err := sc.row(st, i)
		if err != nil {
			return err
		}
		p := probs[i*sc.k : (i+1)*sc.k]
		if !ok {
			for j := range p {
				p[j] = math.NaN()
			}
			continue
		}
		copy(p, st.pred.probs)
	}
	return nil
}

// scoreNumbers scores a regression model.
func (sc *scorer) scoreNumbers(ctx context.Context, in process.Input) (*process.Table, error) {
	st := sc.begin(in.Table)
	defer sc.pool.Put(st)
	rows := in.Table.Rows()
	vals := make([]float64, rows)
	var miss []bool
	for i := range rows {
		if i%ctxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		ok, err := sc.row(st, i)
		if err != nil {
			return nil, err
		}
		x, isNum := st.pred.value.asNumber()
		if !ok || !isNum {
			if miss == nil {
				miss = make([]bool, rows)
			}
			miss[i] = true
			continue
		}
		vals[i] = x
	}
	return process.NewTable(rows, process.NumberColumn(sc.name, vals, miss))
}

// checkTopOutput checks the top-level model's Output: its predicted value
// and probabilities are what the AI Hub columns answer (prediction(<label>)
// and confidence(<class>)), so a probability must name one of the model's
// classes. Other output fields are not answered.
func checkTopOutput(o *output, target *field) error {
	if o == nil {
		return nil
	}
	for _, of := range o.OutputFields {
		if of.Feature == "probability" && of.Value != "" {
			if _, err := classOf(target, of.Value, "the OutputField "+strconv.Quote(of.Name)); err != nil {
				return err
			}
		}
	}
	return nil
}

// scoreClusters scores a clustering model: the cluster each row falls in.
func (sc *scorer) scoreClusters(ctx context.Context, in process.Input) (*process.Table, error) {
	st := sc.begin(in.Table)
	defer sc.pool.Put(st)
	rows := in.Table.Rows()
	ids := make([]string, rows)
	var miss []bool
	for i := range rows {
		if i%ctxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		_, err := sc.row(st, i)
		if err != nil {
			return nil, err
		}
		if st.pred.entity == "" {
			if miss == nil {
				miss = make([]bool, rows)
			}
			miss[i] = true
			continue
		}
		ids[i] = st.pred.entity
	}
	return process.NewTable(rows, process.TextColumn(sc.name, ids, miss))
}

// hasTree reports whether m is a TreeModel or a MiningModel that holds
// one: a model whose kind may explain its predictions.
func hasTree(m model) bool {
	switch m := m.(type) {
	case *tree:
		return true
	case *mining:
		for _, s := range m.segs {
			if hasTree(s.m) {
				return true
			}
		}
	}
	return false
}
