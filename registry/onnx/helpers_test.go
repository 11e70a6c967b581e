package onnx

import (
	"encoding/binary"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// A tiny encoder of ONNX ModelProtos, for building test graphs in Go.

type tNode struct {
	op, domain string
	in, out    []string
	attrs      []tAttr
}

type tAttr struct {
	name    string
	typ     int64
	f       float32
	i       int64
	s       string
	floats  []float32
	ints    []int64
	strings []string
	t       *tTensor
}

type tTensor struct {
	name     string
	dt       int64
	dims     []int64
	floats   []float32
	doubles  []float64
	ints     []int64
	raw      []byte
	external bool
}

type tValue struct {
	name string
	elem int64
	dims []int64 // -1: a symbolic dimension
}

type tModel struct {
	ir       int64
	opsets   map[string]int64
	producer string
	nodes    []tNode
	inputs   []tValue
	outputs  []tValue
	inits    []tTensor
}

func aInts(name string, v ...int64) tAttr     { return tAttr{name: name, typ: attrInts, ints: v} }
func aFloats(name string, v ...float32) tAttr { return tAttr{name: name, typ: attrFloats, floats: v} }
func aStrings(name string, v ...string) tAttr { return tAttr{name: name, typ: attrStrings, strings: v} }
func aInt(name string, v int64) tAttr         { return tAttr{name: name, typ: attrInt, i: v} }
func aString(name, v string) tAttr            { return tAttr{name: name, typ: attrString, s: v} }
func aTensor(name string, t tTensor) tAttr    { return tAttr{name: name, typ: attrTensor, t: &t} }
func ml(op string, in, out []string, a ...tAttr) tNode {
	return tNode{op: op, domain: domainML, in: in, out: out, attrs: a}
}
func std(op string, in, out []string, a ...tAttr) tNode {
	return tNode{op: op, in: in, out: out, attrs: a}
}

func msg(fields ...[]byte) []byte {
	var b []byte
	for _, f := range fields {
		b = append(b, f...)
	}
	return b
}

func fBytes(num protowire.Number, v []byte) []byte {
	b := protowire.AppendTag(nil, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func fVarint(num protowire.Number, v int64) []byte {
	b := protowire.AppendTag(nil, num, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(v))
}

func packedInts(v []int64) []byte {
	var p []byte
	for _, x := range v {
		p = protowire.AppendVarint(p, uint64(x))
	}
	return p
}

func packedFloats(v []float32) []byte {
	p := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(p[4*i:], math.Float32bits(x))
	}
	return p
}

func (t tTensor) encode() []byte {
	b := fVarint(2, t.dt)
	if len(t.dims) > 0 {
		b = append(b, fBytes(1, packedInts(t.dims))...)
	}
	b = append(b, fBytes(8, []byte(t.name))...)
	switch {
	case t.raw != nil:
		b = append(b, fBytes(9, t.raw)...)
	case t.floats != nil:
		b = append(b, fBytes(4, packedFloats(t.floats))...)
	case t.doubles != nil:
		p := make([]byte, 8*len(t.doubles))
		for i, x := range t.doubles {
			binary.LittleEndian.PutUint64(p[8*i:], math.Float64bits(x))
		}
		b = append(b, fBytes(10, p)...)
	case t.ints != nil:
		b = append(b, fBytes(7, packedInts(t.ints))...)
	}
	if t.external {
		b = append(b, fVarint(14, 1)...)
	}
	return b
}

func (a tAttr) encode() []byte {
	b := msg(fBytes(1, []byte(a.name)), fVarint(20, a.typ))
	switch a.typ {
	case attrFloat:
		b = protowire.AppendTag(b, 2, protowire.Fixed32Type)
		b = protowire.AppendFixed32(b, math.Float32bits(a.f))
	case attrInt:
		b = append(b, fVarint(3, a.i)...)
	case attrString:
		b = append(b, fBytes(4, []byte(a.s))...)
	case attrTensor:
		b = append(b, fBytes(5, a.t.encode())...)
	case attrFloats:
		b = append(b, fBytes(7, packedFloats(a.floats))...)
	case attrInts:
		b = append(b, fBytes(8, packedInts(a.ints))...)
	case attrStrings:
		for _, s := range a.strings {
			b = append(b, fBytes(9, []byte(s))...)
		}
	}
	return b
}

func (n tNode) encode() []byte {
	var b []byte
	for _, s := range n.in {
		b = append(b, fBytes(1, []byte(s))...)
	}
	for _, s := range n.out {
		b = append(b, fBytes(2, []byte(s))...)
	}
	b = append(b, fBytes(4, []byte(n.op))...)
	for _, a := range n.attrs {
		b = append(b, fBytes(5, a.encode())...)
	}
	if n.domain != "" {
		b = append(b, fBytes(7, []byte(n.domain))...)
	}
	return b
}

func (v tValue) encode() []byte {
	var shape []byte
	for _, d := range v.dims {
		if d < 0 {
			shape = append(shape, fBytes(1, fBytes(2, []byte("N")))...)
		} else {
			shape = append(shape, fBytes(1, fVarint(1, d))...)
		}
	}
	tt := msg(fVarint(1, v.elem), fBytes(2, shape))
	return msg(fBytes(1, []byte(v.name)), fBytes(2, fBytes(1, tt)))
}

func (m tModel) encode() []byte {
	var g []byte
	for _, n := range m.nodes {
		g = append(g, fBytes(1, n.encode())...)
	}
	g = append(g, fBytes(2, []byte("test"))...)
	for _, t := range m.inits {
		g = append(g, fBytes(5, t.encode())...)
	}
	for _, v := range m.inputs {
		g = append(g, fBytes(11, v.encode())...)
	}
	for _, v := range m.outputs {
		g = append(g, fBytes(12, v.encode())...)
	}
	ir := m.ir
	if ir == 0 {
		ir = 8
	}
	b := fVarint(1, ir)
	b = append(b, fBytes(2, []byte(m.producer))...)
	b = append(b, fBytes(7, g)...)
	opsets := m.opsets
	if opsets == nil {
		opsets = map[string]int64{"": 15, domainML: 3}
	}
	for _, d := range []string{"", domainML} {
		if v, ok := opsets[d]; ok {
			b = append(b, fBytes(8, msg(fBytes(1, []byte(d)), fVarint(2, v)))...)
		}
	}
	for d, v := range opsets {
		if d != "" && d != domainML {
			b = append(b, fBytes(8, msg(fBytes(1, []byte(d)), fVarint(2, v)))...)
		}
	}
	return b
}

func floatIn(name string, f int64) tValue {
	return tValue{name: name, elem: onnxFloat, dims: []int64{-1, f}}
}
