package onnx

import (
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/scorehub/scorehub/registry/process"
)

// Format reads ONNX model files. Its zero value is ready to use with the
// default limits. A Format is safe for concurrent use, and so is every
// model it loads.
type Format struct {
	Limits Limits
}

var _ process.ModelFormat = Format{}

// Name returns "onnx".
func (Format) Name() string { return "onnx" }

// The IR versions and operator set versions this package reads.
const (
	minIR, maxIR           = 3, 11
	minOpset, maxOpset     = 1, 23
	minMLOpset, maxMLOpset = 1, 5
)

// Detect reports whether artifact looks like an ONNX ModelProto: it starts
// with ir_version (field 1, a small varint) and its top-level fields are
// well formed up to a graph (field 7).
func (Format) Detect(artifact []byte) bool {
	b := artifact
	first := true
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || num > 32 {
			return false
		}
		b = b[n:]
		if first {
			v, m := protowire.ConsumeVarint(b)
			if num != 1 || typ != protowire.VarintType || m < 0 || v < 1 || v > 100 {
				return false
			}
			b, first = b[m:], false
			continue
		}
		if num == 7 {
			_, m := protowire.ConsumeBytes(b)
			return typ == protowire.BytesType && m >= 0
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return false
		}
		b = b[m:]
	}
	return false
}

// Load reads an ONNX model and compiles its graph. meta names the label
// and, for a graph with one [N,F] input, its features; anything the
// evaluator does not support is refused with an error naming it.
func (f Format) Load(artifact []byte, meta process.ModelMetadata) (*process.LoadedModel, error) {
	lim := f.Limits.withDefaults()
	if int64(len(artifact)) > lim.MaxBytes {
		return nil, errLimit("the file has %d bytes, more than the limit of %d", len(artifact), lim.MaxBytes)
	}
	d := &decoder{lim: lim}
	m, err := d.model(artifact)
	if err != nil {
		if pe, ok := err.(*protoError); ok {
			return nil, errInvalid("the file is not a valid ONNX model: malformed protobuf at %s", pe.Error())
		}
		return nil, err
	}
	p, err := compileModel(m, meta, lim)
	if err != nil {
		return nil, err
	}
	return p.loaded(m, meta)
}

// compileModel checks the model's versions and compiles its graph.
func compileModel(m *modelProto, meta process.ModelMetadata, lim Limits) (*plan, error) {
	if m.irVersion < minIR || m.irVersion > maxIR {
		return nil, errInvalid("IR version %d is not supported (versions %d to %d are)", m.irVersion, minIR, maxIR)
	}
	if m.graph == nil {
		return nil, errInvalid("the model has no graph")
	}
	if m.graph.sparse {
		return nil, errInvalid("sparse initializers are not supported")
	}
	if m.hasFunctions {
		// A model-local function may carry the name of an operator its
		// nodes call, and so change what a node computes unseen.
		return nil, errInvalid("model-local functions are refused; the model defines %s", strings.Join(m.functions, ", "))
	}
	c := &compiler{lim: lim, opsets: make(map[string]int64), values: make(map[string]*value)}
	for _, o := range m.opsets {
		dom := o.domain
		if dom == "ai.onnx" {
			dom = domainDefault
		}
		switch dom {
		case domainDefault:
			if o.version < minOpset || o.version > maxOpset {
				return nil, errInvalid("opset %d of domain %q is not supported (versions %d to %d are)", o.version, o.domain, minOpset, maxOpset)
			}
		case domainML:
			if o.version < minMLOpset || o.version > maxMLOpset {
				return nil, errInvalid("opset %d of domain %q is not supported (versions %d to %d are)", o.version, o.domain, minMLOpset, maxMLOpset)
			}
		default:
			// Checked where a node uses it: an import nobody uses is harmless.
			c.opsets[dom] = o.version
			continue
		}
		c.opsets[dom] = o.version
	}
	g := m.graph
	known := make(map[string]bool)
	for i := range g.initializers {
		t := &g.initializers[i]
		k, err := decodeTensor(fmt.Sprintf("initializer %q", t.name), t, lim)
		if err != nil {
			return nil, err
		}
		if t.name == "" || known[t.name] {
			return nil, errInvalid("initializer %q has an empty or repeated name", t.name)
		}
		known[t.name] = true
		c.values[t.name] = &value{name: t.name, dt: k.dt, dims: k.dims, width: k.size(), konst: k, node: -1, slot: -1}
	}
	p := &plan{}
	for _, in := range g.inputs {
		if known[in.name] {
			continue // an initializer listed as an input, as IR 3 requires
		}
		v, err := c.graphInput(in)
		if err != nil {
			return nil, err
		}
		known[in.name] = true
		p.inputs = append(p.inputs, v)
	}
	if len(p.inputs) == 0 {
		return nil, errInvalid("the graph has no inputs")
	}
	ord, err := order(g, known)
	if err != nil {
		return nil, err
	}
	for _, i := range ord {
		if err := c.compileNode(g, i); err != nil {
			return nil, err
		}
	}
	if err := p.chooseOutput(c, g); err != nil {
		return nil, err
	}
	p.steps = needed(c.steps, g, c.values, p.output)
	p.slots = c.slots
	p.trees = c.trees
	p.explainable(c, g)
	return p, nil
}

// graphInput adds a graph input as a batch value: a tensor whose first
// dimension is the batch.
func (c *compiler) graphInput(in valueInfo) (*value, error) {
	t := in.typ
	if t == nil || t.kind != typeTensor {
		return nil, errInvalid("graph input %q is not a tensor", in.name)
	}
	dt, ok := dtypeOf(t.elem)
	if !ok {
		return nil, errInvalid("graph input %q has element type %s, which is not supported", in.name, onnxTypeName(t.elem))
	}
	if !t.hasShape || len(t.shape) < 1 || len(t.shape) > 2 {
		return nil, errInvalid("graph input %q must have shape [N] or [N,F]", in.name)
	}
	var dims []int
	if len(t.shape) == 2 {
		d := t.shape[1]
		if !d.hasValue || d.value < 1 {
			return nil, errInvalid("graph input %q must have a known number of features (its second dimension)", in.name)
		}
		if d.value > int64(c.lim.MaxFeatures) {
			return nil, errLimit("graph input %q has %d features, more than the limit of %d", in.name, d.value, c.lim.MaxFeatures)
		}
		dims = []int{int(d.value)}
	}
	v, err := c.batch(in.name, dt, dims, -1)
	if err != nil {
		return nil, err
	}
	if dt != dtString {
		v.origin = make([]int32, v.width)
		for j := range v.origin {
			v.origin[j] = int32(c.columns + j)
		}
	}
	c.columns += v.width
	return v, nil
}

// chooseOutput picks what the model answers: the scores of a classifier
// (the first graph output that carries them), else the first graph output
// holding one number per row.
func (p *plan) chooseOutput(c *compiler, g *graphProto) error {
	var names []string
	for _, o := range g.outputs {
		v := c.values[o.name]
		if v == nil {
			return errInvalid("graph output %q is not computed by the graph", o.name)
		}
		names = append(names, fmt.Sprintf("%q (%s)", o.name, v.describe()))
		if v.cls != nil && v.konst == nil && p.output == nil {
			p.output, p.classes, p.classInts = v, v.cls, v.clsInts
		}
	}
	if p.output != nil {
		if p.output.width != len(p.classes) {
			return errInvalid("graph output %q has %d scores for %d classes", p.output.name, p.output.width, len(p.classes))
		}
		return nil
	}
	for _, o := range g.outputs {
		v := c.values[o.name]
		if v.konst == nil && !v.zip && v.width == 1 && (v.dt == dtFloat || v.dt == dtDouble || v.dt == dtInt64 || v.dt == dtInt32) {
			p.output = v
			return nil
		}
	}
	return errInvalid("the graph answers neither a classifier's probabilities nor one number per row; its outputs are %s", strings.Join(names, ", "))
}

// plan is a compiled graph.
type plan struct {
	inputs  []*value
	steps   []step
	slots   int
	output  *value
	classes []string // set for classifiers
	// classInts says that classes are integer labels, in decimal.
	classInts bool
	trees     int
	// columns are the request columns feeding the inputs: with one [N,F]
	// input, one per feature; else one per input.
	columns []process.ColumnSpec
	wide    bool // one input read from its F columns
	// shap explains the answer; nil when the plan cannot, unexplained
	// then saying why for a graph of tree ensembles.
	shap        *planShap
	unexplained string
}

// loaded names the model's columns and builds its process.
func (p *plan) loaded(m *modelProto, meta process.ModelMetadata) (*process.LoadedModel, error) {
	if len(p.inputs) == 1 && len(p.inputs[0].dims) <= 1 {
		in := p.inputs[0]
		p.wide = true
		kind := process.Number
		if in.dt == dtString {
			kind = process.Text
		}
		names := meta.Features
		if len(names) == 0 {
			for i := range in.width {
				names = append(names, fmt.Sprintf("f%d", i))
			}
		}
		if len(names) != in.width {
			return nil, errInvalid("the metadata names %d features; the model's input %q has %d", len(names), in.name, in.width)
		}
		for _, n := range names {
			p.columns = append(p.columns, process.ColumnSpec{Name: n, Kind: kind})
		}
	} else {
		for _, in := range p.inputs {
			if in.width != 1 {
				return nil, errInvalid("graph input %q is %s; a graph with several inputs must take one value per row in each", in.name, in.describe())
			}
			kind := process.Number
			if in.dt == dtString {
				kind = process.Text
			}
			p.columns = append(p.columns, process.ColumnSpec{Name: in.name, Kind: kind})
		}
		if len(meta.Features) > 0 {
			var have []string
			for _, c := range p.columns {
				have = append(have, c.Name)
			}
			if !slices.Equal(meta.Features, have) {
				return nil, errInvalid("the metadata names the features %q, but the model's inputs are %q", meta.Features, have)
			}
		}
	}
	seen := make(map[string]bool)
	for _, c := range p.columns {
		if c.Name == "" || seen[c.Name] {
			return nil, errInvalid("input column %q is empty or repeated", c.Name)
		}
		seen[c.Name] = true
	}
	label := meta.LabelOrDefault()
	schema := process.ModelSchema{
		Format:   "onnx",
		Producer: strings.TrimSpace(m.producerName + " " + m.producerVersion),
		Label:    label,
		Inputs:   slices.Clone(p.columns),
		Trees:    p.trees,
	}
	if p.classes != nil {
		classes, err := process.ClassNames(meta.Classes, p.classes, p.classInts, "an ONNX file")
		if err != nil {
			return nil, err
		}
		proc, err := process.Classifier(label, classes, p.predictProbs)
		if err != nil {
			return nil, errInvalid("%s", err.Error())
		}
		schema.Task = process.Classification
		schema.Classes = classes
		schema.Outputs = process.ClassifierOutputs(label, classes)
		explaining, why := p.withExplanations(proc, classes)
		schema.Unexplained = why
		return &process.LoadedModel{Schema: schema, Process: explaining, RowWise: true}, nil
	}
	if len(meta.Classes) > 0 {
		return nil, errInvalid("the metadata names classes, but the model is a regressor")
	}
	name := "prediction(" + label + ")"
	schema.Task = process.Regression
	schema.Outputs = []process.ColumnSpec{{Name: name, Kind: process.Number}}
	explaining, why := p.withExplanations(&regressor{p: p, name: name}, nil)
	schema.Unexplained = why
	return &process.LoadedModel{Schema: schema, Process: explaining, RowWise: true}, nil
}
