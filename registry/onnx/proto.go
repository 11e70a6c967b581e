package onnx

import (
	"encoding/binary"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// The few messages of the ONNX schema this package reads, with the field
// numbers the public onnx.proto gives them. Fields not listed are skipped.

// modelProto is an ONNX ModelProto.
type modelProto struct {
	irVersion       int64
	producerName    string
	producerVersion string
	opsets          []opsetID
	graph           *graphProto
	hasFunctions    bool
	// functions names the model-local functions (domain and name), the
	// first maxFunctionNames of them, for the refusal's message.
	functions []string
}

// maxFunctionNames bounds how many model-local functions a refusal names.
const maxFunctionNames = 5

type opsetID struct {
	domain  string
	version int64
}

type graphProto struct {
	nodes        []nodeProto
	initializers []tensorProto
	inputs       []valueInfo
	outputs      []valueInfo
	sparse       bool // the graph holds sparse initializers
}

type nodeProto struct {
	inputs, outputs      []string
	name, opType, domain string
	attrs                []attrProto
}

// Attribute types of AttributeProto.type.
const (
	attrFloat   = 1
	attrInt     = 2
	attrString  = 3
	attrTensor  = 4
	attrGraph   = 5
	attrFloats  = 6
	attrInts    = 7
	attrStrings = 8
)

type attrProto struct {
	name    string
	typ     int64
	f       float32
	i       int64
	s       []byte
	t       *tensorProto
	floats  []float32
	ints    []int64
	strings [][]byte
	ref     string // ref_attr_name: only valid inside functions
	other   bool   // holds a graph, sparse tensor or type: never supported
}

// ONNX tensor element types (TensorProto.DataType).
const (
	onnxFloat  = 1
	onnxUint8  = 2
	onnxInt32  = 6
	onnxInt64  = 7
	onnxString = 8
	onnxBool   = 9
	onnxDouble = 11
)

type tensorProto struct {
	dims       []int64
	dataType   int64
	floatData  []float32
	int32Data  []int64 // int32_data holds int32, bool (and smaller) values as varints
	stringData [][]byte
	int64Data  []int64
	doubleData []float64
	rawData    []byte
	hasRaw     bool
	name       string
	external   bool // data_location EXTERNAL or external_data set
	segment    bool
}

type valueInfo struct {
	name string
	typ  *typeProto
}

// typeKind is the kind of value a TypeProto describes.
type typeKind uint8

const (
	typeUnknown typeKind = iota
	typeTensor
	typeSequence
	typeMap
	typeOther
)

type typeProto struct {
	kind     typeKind
	elem     int64      // tensor element type, map key type
	shape    []dimProto // tensor shape; nil with hasShape false: unknown rank
	hasShape bool
	inner    *typeProto // sequence element, map value
}

type dimProto struct {
	value    int64
	hasValue bool
	param    string
}

// decoder reads protobuf messages, counting what they hold against the
// limits. path names the message being read, for errors.
type decoder struct {
	lim      Limits
	elements int64 // values read into attributes and tensors so far
}

// protoError is a malformed message, with where it is.
type protoError struct {
	path string
	msg  string
}

func (e *protoError) Error() string { return e.path + ": " + e.msg }

func malformed(path, format string, args ...any) error {
	return &protoError{path: path, msg: fmt.Sprintf(format, args...)}
}

// fieldFunc handles one field of a message: b starts at its value. It
// returns how many bytes it consumed, or -1 for "not mine, skip it".
type fieldFunc func(num protowire.Number, typ protowire.Type, b []byte) (int, error)

// walk calls f for every field of the message b.
func walk(path string, b []byte, f fieldFunc) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return malformed(path, "bad field tag: %v", protowire.ParseError(n))
		}
		b = b[n:]
		m, err := f(num, typ, b)
		if err != nil {
			return err
		}
		if m < 0 {
			m = protowire.ConsumeFieldValue(num, typ, b)
			if m < 0 {
				return malformed(path, "bad value of field %d: %v", num, protowire.ParseError(m))
			}
		}
		b = b[m:]
	}
	return nil
}

// bytesField reads a length-delimited value.
func bytesField(path string, typ protowire.Type, b []byte) ([]byte, int, error) {
	if typ != protowire.BytesType {
		return nil, 0, malformed(path, "wrong wire type %d", typ)
	}
	v, n := protowire.ConsumeBytes(b)
	if n < 0 {
		return nil, 0, malformed(path, "%v", protowire.ParseError(n))
	}
	return v, n, nil
}

func varintField(path string, typ protowire.Type, b []byte) (int64, int, error) {
	if typ != protowire.VarintType {
		return 0, 0, malformed(path, "wrong wire type %d", typ)
	}
	v, n := protowire.ConsumeVarint(b)
	if n < 0 {
		return 0, 0, malformed(path, "%v", protowire.ParseError(n))
	}
	return int64(v), n, nil
}

// count adds n values to what the file holds, failing past the limit.
func (d *decoder) count(path string, n int64) error {
	d.elements += n
	if d.elements > int64(d.lim.MaxElements) {
		return errLimit("the model holds more than %d values in its tensors and attributes (at %s)", d.lim.MaxElements, path)
	}
	return nil
}

// repeatedVarints appends one element or a packed run of a repeated
// integer field.
func (d *decoder) repeatedVarints(path string, dst []int64, typ protowire.Type, b []byte) ([]int64, int, error) {
	switch typ {
	case protowire.VarintType:
		v, n, err := varintField(path, typ, b)
		if err != nil {
			return nil, 0, err
		}
		if err := d.count(path, 1); err != nil {
			return nil, 0, err
		}
		return append(dst, v), n, nil
	case protowire.BytesType:
		p, n, err := bytesField(path, typ, b)
		if err != nil {
			return nil, 0, err
		}
		k := 0
		for _, c := range p {
			if c < 0x80 {
				k++
			}
		}
		if err := d.count(path, int64(k)); err != nil {
			return nil, 0, err
		}
		dst = growInts(dst, k)
		for len(p) > 0 {
			v, m := protowire.ConsumeVarint(p)
			if m < 0 {
				return nil, 0, malformed(path, "packed integers: %v", protowire.ParseError(m))
			}
			dst = append(dst, int64(v))
			p = p[m:]
		}
		return dst, n, nil
	}
	return nil, 0, malformed(path, "wrong wire type %d for integers", typ)
}

func growInts(s []int64, n int) []int64 {
	if cap(s)-len(s) < n {
		t := make([]int64, len(s), len(s)+n)
		copy(t, s)
		return t
	}
	return s
}

// repeatedFloats appends one element or a packed run of a repeated float
// field.
func (d *decoder) repeatedFloats(path string, dst []float32, typ protowire.Type, b []byte) ([]float32, int, error) {
	switch typ {
	case protowire.Fixed32Type:
		v, n := protowire.ConsumeFixed32(b)
		if n < 0 {
			return nil, 0, malformed(path, "%v", protowire.ParseError(n))
		}
		if err := d.count(path, 1); err != nil {
			return nil, 0, err
		}
		return append(dst, math.Float32frombits(v)), n, nil
	case protowire.BytesType:
		p, n, err := bytesField(path, typ, b)
		if err != nil {
			return nil, 0, err
		}
		if len(p)%4 != 0 {
			return nil, 0, malformed(path, "packed floats of %d bytes", len(p))
		}
		if err := d.count(path, int64(len(p)/4)); err != nil {
			return nil, 0, err
		}
		if dst == nil {
			dst = make([]float32, 0, len(p)/4)
		}
		for i := 0; i < len(p); i += 4 {
			dst = append(dst, math.Float32frombits(binary.LittleEndian.Uint32(p[i:])))
		}
		return dst, n, nil
	}
	return nil, 0, malformed(path, "wrong wire type %d for floats", typ)
}

func (d *decoder) repeatedDoubles(path string, dst []float64, typ protowire.Type, b []byte) ([]float64, int, error) {
	switch typ {
	case protowire.Fixed64Type:
		v, n := protowire.ConsumeFixed64(b)
		if n < 0 {
			return nil, 0, malformed(path, "%v", protowire.ParseError(n))
		}
		if err := d.count(path, 1); err != nil {
			return nil, 0, err
		}
		return append(dst, math.Float64frombits(v)), n, nil
	case protowire.BytesType:
		p, n, err := bytesField(path, typ, b)
		if err != nil {
			return nil, 0, err
		}
		if len(p)%8 != 0 {
			return nil, 0, malformed(path, "packed doubles of %d bytes", len(p))
		}
		if err := d.count(path, int64(len(p)/8)); err != nil {
			return nil, 0, err
		}
		if dst == nil {
			dst = make([]float64, 0, len(p)/8)
		}
		for i := 0; i < len(p); i += 8 {
			dst = append(dst, math.Float64frombits(binary.LittleEndian.Uint64(p[i:])))
		}
		return dst, n, nil
	}
	return nil, 0, malformed(path, "wrong wire type %d for doubles", typ)
}

func (d *decoder) model(b []byte) (*modelProto, error) {
	m := &modelProto{}
	path := "model"
	err := walk(path, b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			v, n, err := varintField(path+".ir_version", typ, b)
			m.irVersion = v
			return n, err
		case 2, 3:
			v, n, err := bytesField(path+".producer", typ, b)
			if num == 2 {
				m.producerName = string(v)
			} else {
				m.producerVersion = string(v)
			}
			return n, err
		case 7:
			v, n, err := bytesField(path+".graph", typ, b)
			if err != nil {
				return 0, err
			}
			if m.graph != nil {
				return 0, malformed(path, "two graphs")
			}
			m.graph, err = d.graph("graph", v)
			return n, err
		case 8:
			p := fmt.Sprintf("%s.opset_import[%d]", path, len(m.opsets))
			v, n, err := bytesField(p, typ, b)
			if err != nil {
				return 0, err
			}
			if len(m.opsets) >= 64 {
				return 0, errInvalid("the model imports more than 64 operator sets")
			}
			var o opsetID
			err = walk(p, v, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
				switch num {
				case 1:
					s, n, err := bytesField(p+".domain", typ, b)
					o.domain = string(s)
					return n, err
				case 2:
					x, n, err := varintField(p+".version", typ, b)
					o.version = x
					return n, err
				}
				return -1, nil
			})
			m.opsets = append(m.opsets, o)
			return n, err
		case 25:
			m.hasFunctions = true
			p := fmt.Sprintf("%s.functions[%d]", path, len(m.functions))
			v, n, err := bytesField(p, typ, b)
			if err != nil || len(m.functions) >= maxFunctionNames {
				return n, err
			}
			var name, domain string
			err = walk(p, v, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
				switch num {
				case 1, 10:
					s, n, err := bytesField(p+".name", typ, b)
					if num == 1 {
						name = string(s)
					} else {
						domain = string(s)
					}
					return n, err
				}
				return -1, nil
			})
			m.functions = append(m.functions, fmt.Sprintf("%q of domain %q", name, domain))
			return n, err
		}
		return -1, nil
	})
	return m, err
}

func (d *decoder) graph(path string, b []byte) (*graphProto, error) {
	g := &graphProto{}
	err := walk(path, b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			p := fmt.Sprintf("%s.node[%d]", path, len(g.nodes))
			v, n, err := bytesField(p, typ, b)
			if err != nil {
				return 0, err
			}
			if len(g.nodes) >= d.lim.MaxNodes {
				return 0, errLimit("the graph has more than %d nodes", d.lim.MaxNodes)
			}
			node, err := d.node(p, v)
			g.nodes = append(g.nodes, node)
			return n, err
		case 5:
			p := fmt.Sprintf("%s.initializer[%d]", path, len(g.initializers))
			v, n, err := bytesField(p, typ, b)
			if err != nil {
				return 0, err
			}
			if len(g.initializers) >= d.lim.MaxNodes {
				return 0, errLimit("the graph has more than %d initializers", d.lim.MaxNodes)
			}
			t, err := d.tensor(p, v)
			if err != nil {
				return 0, err
			}
			g.initializers = append(g.initializers, *t)
			return n, nil
		case 11, 12:
			list := &g.inputs
			what := "input"
			if num == 12 {
				list, what = &g.outputs, "output"
			}
			p := fmt.Sprintf("%s.%s[%d]", path, what, len(*list))
			v, n, err := bytesField(p, typ, b)
			if err != nil {
				return 0, err
			}
			if len(*list) >= d.lim.MaxFeatures {
				return 0, errLimit("the graph has more than %d %ss", d.lim.MaxFeatures, what)
			}
			vi, err := d.valueInfo(p, v)
			*list = append(*list, vi)
			return n, err
		case 15:
			g.sparse = true
		}
		return -1, nil
	})
	return g, err
}

func (d *decoder) node(path string, b []byte) (nodeProto, error) {
	var nd nodeProto
	err := walk(path, b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case 1, 2:
			v, n, err := bytesField(path+".input/output", typ, b)
			if err != nil {
				return 0, err
			}
			if len(nd.inputs)+len(nd.outputs) >= d.lim.MaxFeatures {
				return 0, errLimit("node %s has more than %d inputs and outputs", path, d.lim.MaxFeatures)
			}
			if num == 1 {
				nd.inputs = append(nd.inputs, string(v))
			} else {
				nd.outputs = append(nd.outputs, string(v))
			}
			return n, nil
		case 3, 4, 7:
			v, n, err := bytesField(path, typ, b)
			switch num {
			case 3:
				nd.name = string(v)
			case 4:
				nd.opType = string(v)
			default:
				nd.domain = string(v)
			}
			return n, err
		case 5:
			p := fmt.Sprintf("%s.attribute[%d]", path, len(nd.attrs))
			v, n, err := bytesField(p, typ, b)
			if err != nil {
				return 0, err
			}
			if len(nd.attrs) >= 256 {
				return 0, errInvalid("node %s has more than 256 attributes", path)
			}
			a, err := d.attr(p, v)
			nd.attrs = append(nd.attrs, a)
			return n, err
		}
		return -1, nil
	})
	return nd, err
}

func (d *decoder) attr(path string, b []byte) (attrProto, error) {
	var a attrProto
	err := walk(path, b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case 1, 21:
			v, n, err := bytesField(path+".name", typ, b)
			if num == 1 {
				a.name = string(v)
			} else {
				a.ref = string(v)
			}
			return n, err
		case 20:
			v, n, err := varintField(path+".type", typ, b)
			a.typ = v
			return n, err
		case 2:
			if typ != protowire.Fixed32Type {
				return 0, malformed(path+".f", "wrong wire type %d", typ)
			}
			v, n := protowire.ConsumeFixed32(b)
			if n < 0 {
				return 0, malformed(path+".f", "%v", protowire.ParseError(n))
			}
			a.f = math.Float32frombits(v)
			return n, nil
		case 3:
			v, n, err := varintField(path+".i", typ, b)
			a.i = v
			return n, err
		case 4:
			v, n, err := bytesField(path+".s", typ, b)
			a.s = v
			return n, err
		case 5:
			v, n, err := bytesField(path+".t", typ, b)
			if err != nil {
				return 0, err
			}
			a.t, err = d.tensor(path+".t", v)
			return n, err
		case 7:
			var err error
			var n int
			a.floats, n, err = d.repeatedFloats(path+".floats", a.floats, typ, b)
			return n, err
		case 8:
			var err error
			var n int
			a.ints, n, err = d.repeatedVarints(path+".ints", a.ints, typ, b)
			return n, err
		case 9:
			v, n, err := bytesField(path+".strings", typ, b)
			if err != nil {
				return 0, err
			}
			if err := d.count(path, 1); err != nil {
				return 0, err
			}
			a.strings = append(a.strings, v)
			return n, nil
		case 6, 10, 11, 14, 15, 22, 23:
			a.other = true
		}
		return -1, nil
	})
	return a, err
}

func (d *decoder) tensor(path string, b []byte) (*tensorProto, error) {
	t := &tensorProto{}
	err := walk(path, b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		var err error
		var n int
		switch num {
		case 1:
			if len(t.dims) >= 8 {
				return 0, errInvalid("tensor %s has more than 8 dimensions", path)
			}
			t.dims, n, err = d.repeatedVarints(path+".dims", t.dims, typ, b)
			return n, err
		case 2:
			t.dataType, n, err = varintField(path+".data_type", typ, b)
			return n, err
		case 3:
			t.segment = true
		case 4:
			t.floatData, n, err = d.repeatedFloats(path+".float_data", t.floatData, typ, b)
			return n, err
		case 5:
			t.int32Data, n, err = d.repeatedVarints(path+".int32_data", t.int32Data, typ, b)
			return n, err
		case 6:
			v, n, err := bytesField(path+".string_data", typ, b)
			if err != nil {
				return 0, err
			}
			if err := d.count(path, 1); err != nil {
				return 0, err
			}
			t.stringData = append(t.stringData, v)
			return n, nil
		case 7:
			t.int64Data, n, err = d.repeatedVarints(path+".int64_data", t.int64Data, typ, b)
			return n, err
		case 8:
			v, n, err := bytesField(path+".name", typ, b)
			t.name = string(v)
			return n, err
		case 9:
			v, n, err := bytesField(path+".raw_data", typ, b)
			if err != nil {
				return 0, err
			}
			t.rawData, t.hasRaw = v, true
			return n, nil
		case 10:
			t.doubleData, n, err = d.repeatedDoubles(path+".double_data", t.doubleData, typ, b)
			return n, err
		case 13:
			t.external = true
		case 14:
			v, n, err := varintField(path+".data_location", typ, b)
			if v != 0 {
				t.external = true
			}
			return n, err
		}
		return -1, nil
	})
	return t, err
}

func (d *decoder) valueInfo(path string, b []byte) (valueInfo, error) {
	var vi valueInfo
	err := walk(path, b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			v, n, err := bytesField(path+".name", typ, b)
			vi.name = string(v)
			return n, err
		case 2:
			v, n, err := bytesField(path+".type", typ, b)
			if err != nil {
				return 0, err
			}
			vi.typ, err = d.typeProto(path+".type", v, 0)
			return n, err
		}
		return -1, nil
	})
	return vi, err
}

// maxTypeNesting bounds how deep sequence and map types nest.
const maxTypeNesting = 4

func (d *decoder) typeProto(path string, b []byte, depth int) (*typeProto, error) {
	if depth > maxTypeNesting {
		return nil, errInvalid("the type of %s nests more than %d deep", path, maxTypeNesting)
	}
	tp := &typeProto{}
	err := walk(path, b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case 1: // tensor_type
			v, n, err := bytesField(path+".tensor_type", typ, b)
			if err != nil {
				return 0, err
			}
			tp.kind = typeTensor
			return n, d.tensorType(path+".tensor_type", v, tp)
		case 4: // sequence_type
			v, n, err := bytesField(path+".sequence_type", typ, b)
			if err != nil {
				return 0, err
			}
			tp.kind = typeSequence
			err = walk(path, v, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
				if num != 1 {
					return -1, nil
				}
				e, n, err := bytesField(path+".elem_type", typ, b)
				if err != nil {
					return 0, err
				}
				tp.inner, err = d.typeProto(path+".elem_type", e, depth+1)
				return n, err
			})
			return n, err
		case 5: // map_type
			v, n, err := bytesField(path+".map_type", typ, b)
			if err != nil {
				return 0, err
			}
			tp.kind = typeMap
			err = walk(path, v, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
				switch num {
				case 1:
					k, n, err := varintField(path+".key_type", typ, b)
					tp.elem = k
					return n, err
				case 2:
					e, n, err := bytesField(path+".value_type", typ, b)
					if err != nil {
						return 0, err
					}
					tp.inner, err = d.typeProto(path+".value_type", e, depth+1)
					return n, err
				}
				return -1, nil
			})
			return n, err
		case 8, 9:
			tp.kind = typeOther
		}
		return -1, nil
	})
	return tp, err
}

func (d *decoder) tensorType(path string, b []byte, tp *typeProto) error {
	return walk(path, b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			v, n, err := varintField(path+".elem_type", typ, b)
			tp.elem = v
			return n, err
		case 2:
			v, n, err := bytesField(path+".shape", typ, b)
			if err != nil {
				return 0, err
			}
			tp.hasShape = true
			tp.shape = tp.shape[:0]
			err = walk(path+".shape", v, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
				if num != 1 {
					return -1, nil
				}
				dv, n, err := bytesField(path+".shape.dim", typ, b)
				if err != nil {
					return 0, err
				}
				if len(tp.shape) >= 8 {
					return 0, errInvalid("%s has more than 8 dimensions", path)
				}
				var dm dimProto
				err = walk(path+".shape.dim", dv, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
					switch num {
					case 1:
						x, n, err := varintField(path+".dim_value", typ, b)
						dm.value, dm.hasValue = x, true
						return n, err
					case 2:
						s, n, err := bytesField(path+".dim_param", typ, b)
						dm.param = string(s)
						return n, err
					}
					return -1, nil
				})
				tp.shape = append(tp.shape, dm)
				return n, err
			})
			return n, err
		}
		return -1, nil
	})
}
