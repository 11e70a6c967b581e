package onnx

import (
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/scorehub/scorehub/internal/modeltest"
)

// modelTree decodes an ONNX file, as Load does, into the document
// modeltest.Compare reads: every field the reader reads (see proto.go),
// named as in onnx.proto, the attributes of a node by name, a tensor's
// values as the numbers or strings they are, whether the file keeps them
// raw or typed. Floats stay float32 and float64, held to the tolerance;
// integers and text are exact.
func modelTree(b []byte) (any, error) {
	lim := Limits{}.withDefaults()
	m, err := (&decoder{lim: lim}).model(b)
	if err != nil {
		return nil, err
	}
	t := treeMaker{lim: lim}
	var opsets []any
	for _, o := range m.opsets {
		opsets = append(opsets, map[string]any{"domain": o.domain, "version": o.version})
	}
	doc := map[string]any{
		"ir_version":       m.irVersion,
		"producer_name":    m.producerName,
		"producer_version": m.producerVersion,
		"opset_import":     opsets,
		"functions":        m.hasFunctions,
		"graph":            nil,
	}
	if g := m.graph; g != nil {
		var nodes, inits, inputs, outputs []any
		for i, n := range g.nodes {
			nodes = append(nodes, t.node(fmt.Sprintf("node %d", i), n))
		}
		for i := range g.initializers {
			inits = append(inits, t.tensor(fmt.Sprintf("initializer %d", i), &g.initializers[i]))
		}
		for _, v := range g.inputs {
			inputs = append(inputs, valueInfoTree(v))
		}
		for _, v := range g.outputs {
			outputs = append(outputs, valueInfoTree(v))
		}
		doc["graph"] = map[string]any{
			"node":               nodes,
			"initializer":        inits,
			"input":              inputs,
			"output":             outputs,
			"sparse_initializer": g.sparse,
		}
	}
	return doc, t.err
}

// treeMaker builds the parts of a model's tree, keeping the first error.
type treeMaker struct {
	lim Limits
	err error
}

func (t *treeMaker) node(what string, n nodeProto) any {
	attrs := map[string]any{}
	for _, a := range n.attrs {
		var tensor any
		if a.t != nil {
			tensor = t.tensor(what+" attribute "+a.name, a.t)
		}
		attrs[a.name] = map[string]any{
			"type":          a.typ,
			"f":             a.f,
			"i":             a.i,
			"s":             string(a.s),
			"t":             tensor,
			"floats":        list(a.floats),
			"ints":          list(a.ints),
			"strings":       stringList(a.strings),
			"ref_attr_name": a.ref,
			"other":         a.other,
		}
	}
	return map[string]any{
		"name":      n.name,
		"op_type":   n.opType,
		"domain":    n.domain,
		"input":     list(n.inputs),
		"output":    list(n.outputs),
		"attribute": attrs,
	}
}

func (t *treeMaker) tensor(what string, p *tensorProto) any {
	c, err := decodeTensor(what, p, t.lim)
	if err != nil {
		if t.err == nil {
			t.err = err
		}
		return nil
	}
	var values []any
	switch {
	case c.f32 != nil:
		values = list(c.f32)
	case c.f64 != nil:
		values = list(c.f64)
	case c.i64 != nil:
		values = list(c.i64)
	case c.str != nil:
		values = list(c.str)
	}
	return map[string]any{
		"name":      p.name,
		"data_type": p.dataType,
		"dims":      list(p.dims),
		"values":    values,
	}
}

func valueInfoTree(v valueInfo) any {
	return map[string]any{"name": v.name, "type": typeTree(v.typ)}
}

func typeTree(p *typeProto) any {
	if p == nil {
		return nil
	}
	var shape any // nil: the rank is unknown
	if p.hasShape {
		dims := []any{}
		for _, d := range p.shape {
			if d.hasValue {
				dims = append(dims, d.value)
			} else {
				dims = append(dims, d.param)
			}
		}
		shape = dims
	}
	return map[string]any{"kind": int64(p.kind), "elem_type": p.elem, "shape": shape, "inner": typeTree(p.inner)}
}

func list[T any](s []T) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func stringList(s [][]byte) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = string(v)
	}
	return out
}

// TestModelTree: two ONNX files whose floats differ in their last digits
// are the same model to modeltest.Compare; any other change to the graph,
// or a float beyond the tolerance, is a difference that names the value.
func TestModelTree(t *testing.T) {
	model := func(change func(*tModel)) []byte {
		m := tModel{
			inputs:  []tValue{floatIn("input", 2)},
			outputs: []tValue{{name: "label", elem: onnxInt64, dims: []int64{-1}}, {name: "probabilities", elem: onnxFloat, dims: []int64{-1, 2}}},
			nodes: []tNode{ml("TreeEnsembleClassifier", []string{"input"}, []string{"label", "probabilities"},
				aInts("nodes_treeids", 0, 0, 0), aInts("nodes_nodeids", 0, 1, 2), aInts("nodes_featureids", 1, 0, 0),
				aStrings("nodes_modes", "BRANCH_LEQ", "LEAF", "LEAF"), aFloats("nodes_values", 0.3, 0, 0),
				aInts("nodes_truenodeids", 1, 0, 0), aInts("nodes_falsenodeids", 2, 0, 0),
				aInts("class_treeids", 0, 0), aInts("class_nodeids", 1, 2), aInts("class_ids", 0, 0),
				aTensor("class_weights_as_tensor", tTensor{dt: onnxDouble, dims: []int64{2}, doubles: []float64{0.1, 0.9}}),
				aInts("classlabels_int64s", 0, 1), aString("post_transform", "NONE"))},
		}
		if change != nil {
			change(&m)
		}
		return m.encode()
	}
	attr := func(m *tModel, name string) *tAttr {
		for i, a := range m.nodes[0].attrs {
			if a.name == name {
				return &m.nodes[0].attrs[i]
			}
		}
		t.Fatalf("no attribute %s", name)
		return nil
	}
	weights := "/graph/node[0]/attribute/class_weights_as_tensor/t/values"
	tests := []struct {
		name   string
		change func(*tModel)
		says   []string
	}{
		{"last digits", func(m *tModel) {
			attr(m, "nodes_values").floats[0] = math.Nextafter32(0.3, 1)
			attr(m, "class_weights_as_tensor").t.doubles[1] = math.Nextafter(0.9, 0)
		}, nil},
		{"raw data", func(m *tModel) {
			a := attr(m, "class_weights_as_tensor")
			a.t.raw = []byte{0x9a, 0x99, 0x99, 0x99, 0x99, 0x99, 0xb9, 0x3f, 0xcd, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xec, 0x3f}
		}, nil},
		{"weight off", func(m *tModel) { attr(m, "class_weights_as_tensor").t.doubles[1] = 0.9001 },
			[]string{weights + "[1]: want 0.9, got 0.9001"}},
		{"threshold off", func(m *tModel) { attr(m, "nodes_values").floats[0] = 0.3001 },
			[]string{"/graph/node[0]/attribute/nodes_values/floats[0]: want 0.3, got 0.3001"}},
		{"feature changed", func(m *tModel) { attr(m, "nodes_featureids").ints[0] = 0 },
			[]string{"/graph/node[0]/attribute/nodes_featureids/ints[0]: want 1, got 0"}},
		{"class label changed", func(m *tModel) { attr(m, "classlabels_int64s").ints[1] = 2 },
			[]string{"/graph/node[0]/attribute/classlabels_int64s/ints[1]: want 1, got 2"}},
		{"tree grew", func(m *tModel) {
			a := attr(m, "class_weights_as_tensor")
			a.t.dims, a.t.doubles = []int64{3}, []float64{0.1, 0.9, 0.5}
		}, []string{"/graph/node[0]/attribute/class_weights_as_tensor/t/dims[0]: want 2, got 3", weights + ": want a list of 2, got a list of 3"}},
		{"operator changed", func(m *tModel) { m.nodes[0].op = "TreeEnsembleRegressor" },
			[]string{`/graph/node[0]/op_type: want "TreeEnsembleClassifier", got "TreeEnsembleRegressor"`}},
		{"attribute gone", func(m *tModel) { m.nodes[0].attrs = m.nodes[0].attrs[:len(m.nodes[0].attrs)-1] },
			[]string{"/graph/node[0]/attribute/post_transform: want an object of 10 keys, got nothing"}},
		{"opset changed", func(m *tModel) { m.opsets = map[string]int64{"": 15, domainML: 1} },
			[]string{"/opset_import[1]/version: want 3, got 1"}},
	}
	want, err := modelTree(model(nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := modelTree(model(tt.change))
			if err != nil {
				t.Fatal(err)
			}
			var says []string
			for _, d := range modeltest.Compare(want, got) {
				says = append(says, d.String())
			}
			if diff := cmp.Diff(tt.says, says); diff != "" {
				t.Errorf("differences (-want +got):\n%s", diff)
			}
		})
	}
}
