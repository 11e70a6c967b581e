package onnx

import (
	"encoding/binary"
	"math"
	"strconv"
)

// dtype is the element type of a tensor the evaluator handles.
type dtype uint8

const (
	dtFloat dtype = iota + 1
	dtDouble
	dtInt64
	dtInt32
	dtBool
	dtString
)

func (d dtype) String() string {
	switch d {
	case dtFloat:
		return "float"
	case dtDouble:
		return "double"
	case dtInt64:
		return "int64"
	case dtInt32:
		return "int32"
	case dtBool:
		return "bool"
	case dtString:
		return "string"
	}
	return "dtype(" + strconv.Itoa(int(d)) + ")"
}

// integer reports whether d is held in a tensor's i64 values.
func (d dtype) integer() bool { return d == dtInt64 || d == dtInt32 || d == dtBool }

// onnxTypeName names an ONNX element type for messages.
func onnxTypeName(t int64) string {
	names := map[int64]string{0: "undefined", 1: "float", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16",
		6: "int32", 7: "int64", 8: "string", 9: "bool", 10: "float16", 11: "double", 12: "uint32",
		13: "uint64", 14: "complex64", 15: "complex128", 16: "bfloat16"}
	if n, ok := names[t]; ok {
		return n
	}
	return "type " + strconv.FormatInt(t, 10)
}

// dtypeOf maps an ONNX element type to the evaluator's.
func dtypeOf(t int64) (dtype, bool) {
	switch t {
	case onnxFloat:
		return dtFloat, true
	case onnxDouble:
		return dtDouble, true
	case onnxInt64:
		return dtInt64, true
	case onnxInt32:
		return dtInt32, true
	case onnxBool:
		return dtBool, true
	case onnxString:
		return dtString, true
	}
	return 0, false
}

// tensor holds the values of one graph value for a batch of rows (or of
// a constant), row-major. Which slice is used depends on its dtype:
// float f32, double f64, integers and bools i64, strings str. A tensor a
// kernel wrote is never written again: later kernels may share it.
type tensor struct {
	f32 []float32
	f64 []float64
	i64 []int64
	str []string
}

// constant is an initializer or a tensor attribute: a value known at load.
type constant struct {
	name string
	dt   dtype
	dims []int
	tensor
}

func (c *constant) size() int { return product(c.dims) }

func product(dims []int) int {
	n := 1
	for _, d := range dims {
		n *= d
	}
	return n
}

// decodeTensor turns a TensorProto into a constant, checking its data
// against its dims.
func decodeTensor(what string, t *tensorProto, lim Limits) (*constant, error) {
	if t.external {
		return nil, errInvalid("%s keeps its data in an external file, which is not supported: save the model with its data inside", what)
	}
	if t.segment {
		return nil, errInvalid("%s is a segment of a tensor, which is not supported", what)
	}
	dt, ok := dtypeOf(t.dataType)
	if t.dataType == onnxUint8 {
		// Only attributes hold uint8 (TreeEnsemble's nodes_modes): read as
		// integers.
		dt, ok = dtInt32, true
	}
	if !ok {
		return nil, errInvalid("%s has element type %s, which is not supported", what, onnxTypeName(t.dataType))
	}
	c := &constant{name: t.name, dt: dt, dims: make([]int, len(t.dims))}
	n := int64(1)
	for i, d := range t.dims {
		if d < 0 {
			return nil, errInvalid("%s has a negative dimension %d", what, d)
		}
		n *= d
		if n > int64(lim.MaxElements) {
			return nil, errLimit("%s has more than %d values", what, lim.MaxElements)
		}
		c.dims[i] = int(d)
	}
	size := int(n)
	bad := func(have int) error {
		return errInvalid("%s has %d values, but its dimensions %v hold %d", what, have, t.dims, size)
	}
	if t.hasRaw {
		raw := t.rawData
		width := map[dtype]int{dtFloat: 4, dtDouble: 8, dtInt64: 8, dtInt32: 4, dtBool: 1}[dt]
		if t.dataType == onnxUint8 {
			width = 1
		}
		if dt == dtString {
			return nil, errInvalid("%s holds strings as raw data, which ONNX does not allow", what)
		}
		if len(raw) != size*width {
			return nil, errInvalid("%s has %d bytes of raw data, but its dimensions %v and type %s need %d", what, len(raw), t.dims, dt, size*width)
		}
		switch dt {
		case dtFloat:
			c.f32 = make([]float32, size)
			for i := range c.f32 {
				c.f32[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
			}
		case dtDouble:
			c.f64 = make([]float64, size)
			for i := range c.f64 {
				c.f64[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
			}
		case dtInt64:
			c.i64 = make([]int64, size)
			for i := range c.i64 {
				c.i64[i] = int64(binary.LittleEndian.Uint64(raw[8*i:]))
			}
		case dtInt32:
			c.i64 = make([]int64, size)
			for i := range c.i64 {
				if width == 1 {
					c.i64[i] = int64(raw[i])
				} else {
					c.i64[i] = int64(int32(binary.LittleEndian.Uint32(raw[4*i:])))
				}
			}
		case dtBool:
			c.i64 = make([]int64, size)
			for i := range c.i64 {
				if raw[i] != 0 {
					c.i64[i] = 1
				}
			}
		}
		return c, nil
	}
	switch dt {
	case dtFloat:
		if len(t.floatData) != size {
			return nil, bad(len(t.floatData))
		}
		c.f32 = t.floatData
	case dtDouble:
		if len(t.doubleData) != size {
			return nil, bad(len(t.doubleData))
		}
		c.f64 = t.doubleData
	case dtInt64:
		if len(t.int64Data) != size {
			return nil, bad(len(t.int64Data))
		}
		c.i64 = t.int64Data
	case dtInt32, dtBool:
		if len(t.int32Data) != size {
			return nil, bad(len(t.int32Data))
		}
		c.i64 = make([]int64, size)
		for i, v := range t.int32Data {
			if dt == dtBool {
				if v != 0 {
					c.i64[i] = 1
				}
			} else if t.dataType == onnxUint8 {
				c.i64[i] = int64(uint8(v))
			} else {
				c.i64[i] = int64(int32(v))
			}
		}
	case dtString:
		if len(t.stringData) != size {
			return nil, bad(len(t.stringData))
		}
		c.str = make([]string, size)
		for i, s := range t.stringData {
			c.str[i] = string(s)
		}
	}
	return c, nil
}

// asFloat64s returns a numeric constant's values as float64.
func (c *constant) asFloat64s() []float64 {
	out := make([]float64, c.size())
	switch {
	case c.dt == dtFloat:
		for i, v := range c.f32 {
			out[i] = float64(v)
		}
	case c.dt == dtDouble:
		copy(out, c.f64)
	case c.dt.integer():
		for i, v := range c.i64 {
			out[i] = float64(v)
		}
	}
	return out
}
