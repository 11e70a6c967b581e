package onnx

import (
	"math"
	"slices"
)

// rowInput returns input 0 of an ai.onnx.ml operator, of one of the
// types, and the width of its rows: these operators take [N,F] tensors
// (ONNX Runtime reads the second dimension of a 2-D input, and the only
// one of a 1-D input as a single row, which would mix the rows of a
// batch).
func rowInput(x *nodeCtx, types ...dtype) (*value, int, error) {
	in, err := x.in(0, types...)
	if err != nil {
		return nil, 0, err
	}
	if len(in.dims) != 1 {
		return nil, 0, x.errorf("its input is %s; only [N,F] inputs are supported", in.describe())
	}
	return in, in.dims[0], nil
}

func compileScaler(x *nodeCtx) (kernel, error) {
	in, w, err := rowInput(x, dtFloat, dtDouble, dtInt64, dtInt32)
	if err != nil {
		return nil, err
	}
	offset, err := x.floatsAttr("offset")
	if err != nil {
		return nil, err
	}
	scale, err := x.floatsAttr("scale")
	if err != nil {
		return nil, err
	}
	if len(offset) != len(scale) || (len(offset) != 1 && len(offset) != w) {
		return nil, x.errorf("it has %d offsets and %d scales for %d features", len(offset), len(scale), w)
	}
	out, err := x.out(0, dtFloat, in.dims)
	if err != nil || out == nil {
		return func(*state) {}, err
	}
	k := len(offset)
	return func(s *state) {
		n := s.rows * w
		src := s.vals[in.slot]
		dst := make([]float32, n)
		for i := range n {
			j := i % k
			switch in.dt {
			case dtFloat:
				dst[i] = (src.f32[i] - offset[j]) * scale[j]
			case dtDouble:
				dst[i] = float32((src.f64[i] - float64(offset[j])) * float64(scale[j]))
			default:
				dst[i] = (float32(src.i64[i]) - offset[j]) * scale[j]
			}
		}
		s.vals[out.slot] = tensor{f32: dst}
	}, nil
}

func compileNormalizer(x *nodeCtx) (kernel, error) {
	in, w, err := rowInput(x, dtFloat, dtDouble, dtInt64, dtInt32)
	if err != nil {
		return nil, err
	}
	norm, err := x.stringAttr("norm", "MAX")
	if err != nil {
		return nil, err
	}
	if norm != "MAX" && norm != "L1" && norm != "L2" {
		return nil, x.errorf("norm %q is not supported", norm)
	}
	out, err := x.out(0, dtFloat, in.dims)
	if err != nil || out == nil {
		return func(*state) {}, err
	}
	out.cls, out.clsInts = in.cls, in.clsInts
	return func(s *state) {
		src := s.vals[in.slot]
		dst := make([]float32, s.rows*w)
		for r := range s.rows {
			row := dst[r*w : (r+1)*w]
			for j := range row {
				row[j] = asFloat32(in.dt, &src, r*w+j)
			}
			var d float32
			switch norm {
			case "MAX":
				d = -math.MaxFloat32
				for _, v := range row {
					d = max(d, v)
				}
			case "L1":
				for j := range row {
					i := r*w + j
					switch in.dt {
					case dtDouble:
						d += float32(math.Abs(src.f64[i]))
					case dtFloat:
						d += float32(math.Abs(float64(src.f32[i])))
					default:
						v := src.i64[i]
						if v < 0 {
							v = -v
						}
						d += float32(v)
					}
				}
			case "L2":
				sq := make([]float32, w)
				for j := range row {
					i := r*w + j
					switch in.dt {
					case dtDouble:
						sq[j] = float32(src.f64[i] * src.f64[i])
					case dtFloat:
						sq[j] = src.f32[i] * src.f32[i]
					default:
						sq[j] = float32(src.i64[i] * src.i64[i])
					}
					d += sq[j]
				}
				if d != 0 {
					for j, v := range row {
						q := float32(math.Sqrt(float64(sq[j] / d)))
						if v < 0 {
							q = -q
						}
						row[j] = q
					}
				}
				continue
			}
			if d != 0 {
				for j := range row {
					row[j] /= d
				}
			}
		}
		s.vals[out.slot] = tensor{f32: dst}
	}, nil
}

// asFloat32 reads element i of a numeric tensor as float32.
func asFloat32(dt dtype, t *tensor, i int) float32 {
	switch dt {
	case dtFloat:
		return t.f32[i]
	case dtDouble:
		return float32(t.f64[i])
	}
	return float32(t.i64[i])
}

func compileImputer(x *nodeCtx) (kernel, error) {
	in, w, err := rowInput(x, dtFloat, dtInt64)
	if err != nil {
		return nil, err
	}
	fv, err := x.floatsAttr("imputed_value_floats")
	if err != nil {
		return nil, err
	}
	iv, err := x.intsAttr("imputed_value_int64s")
	if err != nil {
		return nil, err
	}
	rf, err := x.floatAttr("replaced_value_float", 0)
	if err != nil {
		return nil, err
	}
	ri, err := x.intAttr("replaced_value_int64", 0)
	if err != nil {
		return nil, err
	}
	k := len(fv)
	if in.dt == dtInt64 {
		k = len(iv)
		if len(fv) > 0 {
			return nil, x.errorf("its input is int64 but its imputed values are floats")
		}
	} else if len(iv) > 0 {
		return nil, x.errorf("its input is float but its imputed values are int64")
	}
	if k != 1 && k != w {
		return nil, x.errorf("it has %d imputed values for %d features", k, w)
	}
	out, err := x.out(0, in.dt, in.dims)
	if err != nil || out == nil {
		return func(*state) {}, err
	}
	nanRepl := math.IsNaN(float64(rf))
	return func(s *state) {
		src := s.vals[in.slot]
		n := s.rows * w
		if in.dt == dtFloat {
			dst := make([]float32, n)
			for i, v := range src.f32[:n] {
				if (nanRepl && v != v) || v == rf {
					v = fv[i%k]
				}
				dst[i] = v
			}
			s.vals[out.slot] = tensor{f32: dst}
			return
		}
		dst := make([]int64, n)
		for i, v := range src.i64[:n] {
			if v == ri {
				v = iv[i%k]
			}
			dst[i] = v
		}
		s.vals[out.slot] = tensor{i64: dst}
	}, nil
}

func compileOneHotEncoder(x *nodeCtx) (kernel, error) {
	in, err := x.in(0, dtString, dtInt64, dtInt32, dtFloat, dtDouble)
	if err != nil {
		return nil, err
	}
	cs, err := x.stringsAttr("cats_strings")
	if err != nil {
		return nil, err
	}
	ci, err := x.intsAttr("cats_int64s")
	if err != nil {
		return nil, err
	}
	zeros, err := x.intAttr("zeros", 1)
	if err != nil {
		return nil, err
	}
	if (len(cs) > 0) == (len(ci) > 0) {
		return nil, x.errorf("it needs exactly one of \"cats_strings\" and \"cats_int64s\"")
	}
	if (in.dt == dtString) != (len(cs) > 0) {
		return nil, x.errorf("its input is %s, which its categories do not match", in.dt)
	}
	byString := make(map[string]int, len(cs))
	for i, c := range cs {
		if _, dup := byString[c]; !dup {
			byString[c] = i
		}
	}
	byInt := make(map[int64]int, len(ci))
	for i, c := range ci {
		if _, dup := byInt[c]; !dup {
			byInt[c] = i
		}
	}
	c := len(cs) + len(ci)
	out, err := x.out(0, dtFloat, append(slices.Clone(in.dims), c))
	if err != nil || out == nil {
		return func(*state) {}, err
	}
	return func(s *state) {
		src := s.vals[in.slot]
		n := s.rows * in.width
		dst := make([]float32, n*c)
		for i := range n {
			k, ok := -1, false
			switch in.dt {
			case dtString:
				k, ok = byString[src.str[i]]
			case dtFloat, dtDouble:
				f := readFloat(in.dt, &src, i)
				if !math.IsNaN(f) {
					k, ok = byInt[truncInt(f)]
				}
			default:
				k, ok = byInt[src.i64[i]]
			}
			if ok {
				dst[i*c+k] = 1
			} else if zeros == 0 {
				s.markBad(i / in.width)
			}
		}
		s.vals[out.slot] = tensor{f32: dst}
	}, nil
}

func compileLabelEncoder(x *nodeCtx) (kernel, error) {
	in, err := x.in(0, dtString, dtInt64, dtFloat)
	if err != nil {
		return nil, err
	}
	if x.version < 2 {
		return labelEncoderV1(x, in)
	}
	strs := func(name string) []string {
		var v []string
		if err == nil {
			v, err = x.stringsAttr(name)
		}
		return v
	}
	ints := func(name string) []int64 {
		var v []int64
		if err == nil {
			v, err = x.intsAttr(name)
		}
		return v
	}
	floats := func(name string) []float32 {
		var v []float32
		if err == nil {
			v, err = x.floatsAttr(name)
		}
		return v
	}
	ks, ki, kf := strs("keys_strings"), ints("keys_int64s"), floats("keys_floats")
	vs, vi, vf := strs("values_strings"), ints("values_int64s"), floats("values_floats")
	if err != nil {
		return nil, err
	}
	ds, err := x.stringAttr("default_string", "_Unused")
	if err != nil {
		return nil, err
	}
	di, err := x.intAttr("default_int64", -1)
	if err != nil {
		return nil, err
	}
	df, err := x.floatAttr("default_float", float32(math.Copysign(0, -1)))
	if err != nil {
		return nil, err
	}
	keys := 0
	var kdt, vdt dtype
	for _, k := range []struct {
		n  int
		dt dtype
	}{{len(ks), dtString}, {len(ki), dtInt64}, {len(kf), dtFloat}} {
		if k.n > 0 {
			keys++
			kdt = k.dt
		}
	}
	vals := 0
	for _, v := range []struct {
		n  int
		dt dtype
	}{{len(vs), dtString}, {len(vi), dtInt64}, {len(vf), dtFloat}} {
		if v.n > 0 {
			vals++
			vdt = v.dt
		}
	}
	if keys != 1 || vals != 1 {
		return nil, x.errorf("it needs exactly one list of keys and one of values")
	}
	n := len(ks) + len(ki) + len(kf)
	if len(vs)+len(vi)+len(vf) != n {
		return nil, x.errorf("it has %d keys but %d values", n, len(vs)+len(vi)+len(vf))
	}
	if kdt != in.dt {
		return nil, x.errorf("its input is %s but its keys are %s", in.dt, kdt)
	}
	index := func(key any) int { return -1 }
	switch kdt {
	case dtString:
		m := make(map[string]int, n)
		for i, k := range ks {
			m[k] = i
		}
		index = func(key any) int {
			if i, ok := m[key.(string)]; ok {
				return i
			}
			return -1
		}
	case dtInt64:
		m := make(map[int64]int, n)
		for i, k := range ki {
			m[k] = i
		}
		index = func(key any) int {
			if i, ok := m[key.(int64)]; ok {
				return i
			}
			return -1
		}
	case dtFloat:
		m := make(map[float32]int, n)
		nan := -1
		for i, k := range kf {
			if k != k {
				nan = i
			}
			m[k] = i
		}
		index = func(key any) int {
			f := key.(float32)
			if f != f {
				return nan
			}
			if i, ok := m[f]; ok {
				return i
			}
			return -1
		}
	}
	out, err := x.out(0, vdt, in.dims)
	if err != nil || out == nil {
		return func(*state) {}, err
	}
	return func(s *state) {
		src := s.vals[in.slot]
		cnt := s.rows * in.width
		var dst tensor
		switch vdt {
		case dtString:
			dst.str = make([]string, cnt)
		case dtInt64:
			dst.i64 = make([]int64, cnt)
		default:
			dst.f32 = make([]float32, cnt)
		}
		for i := range cnt {
			var key any
			switch kdt {
			case dtString:
				key = src.str[i]
			case dtInt64:
				key = src.i64[i]
			default:
				key = src.f32[i]
			}
			j := index(key)
			switch vdt {
			case dtString:
				dst.str[i] = ds
				if j >= 0 {
					dst.str[i] = vs[j]
				}
			case dtInt64:
				dst.i64[i] = di
				if j >= 0 {
					dst.i64[i] = vi[j]
				}
			default:
				dst.f32[i] = df
				if j >= 0 {
					dst.f32[i] = vf[j]
				}
			}
		}
		s.vals[out.slot] = dst
	}, nil
}

// labelEncoderV1 is LabelEncoder as ai.onnx.ml opset 1 defines it: one
// list of strings, mapping strings to their index or indexes to strings.
func labelEncoderV1(x *nodeCtx, in *value) (kernel, error) {
	classes, err := x.stringsAttr("classes_strings")
	if err != nil {
		return nil, err
	}
	ds, err := x.stringAttr("default_string", "_Unused")
	if err != nil {
		return nil, err
	}
	di, err := x.intAttr("default_int64", -1)
	if err != nil {
		return nil, err
	}
	switch in.dt {
	case dtString:
		m := make(map[string]int64, len(classes))
		for i, c := range classes {
			m[c] = int64(i)
		}
		out, err := x.out(0, dtInt64, in.dims)
		if err != nil || out == nil {
			return func(*state) {}, err
		}
		return func(s *state) {
			src := s.vals[in.slot]
			dst := make([]int64, s.rows*in.width)
			for i := range dst {
				v, ok := m[src.str[i]]
				if !ok {
					v = di
				}
				dst[i] = v
			}
			s.vals[out.slot] = tensor{i64: dst}
		}, nil
	case dtInt64:
		out, err := x.out(0, dtString, in.dims)
		if err != nil || out == nil {
			return func(*state) {}, err
		}
		return func(s *state) {
			src := s.vals[in.slot]
			dst := make([]string, s.rows*in.width)
			for i := range dst {
				v := src.i64[i]
				if v >= 0 && v < int64(len(classes)) {
					dst[i] = classes[v]
				} else {
					dst[i] = ds
				}
			}
			s.vals[out.slot] = tensor{str: dst}
		}, nil
	}
	return nil, x.errorf("its input is %s; opset 1 maps strings or int64", in.dt)
}

// linearScores computes x·coefᵀ + intercepts for every row as ONNX
// Runtime's float GEMM does: products accumulated in float32, each by a
// fused multiply-add, in feature order, and the intercept added last.
func linearScores(dt dtype, src *tensor, rows, f, k int, coef, intercepts []float32) []float32 {
	out := make([]float32, rows*k)
	x := make([]float32, f)
	for r := range rows {
		for j := range f {
			x[j] = asFloat32(dt, src, r*f+j)
		}
		for c := range k {
			out[r*k+c] = dot32(x, coef[c*f:(c+1)*f])
			if len(intercepts) == k {
				out[r*k+c] += intercepts[c]
			}
		}
	}
	return out
}

// dot32 sums x[i]*w[i] in float32 with fused multiply-adds.
func dot32(x, w []float32) float32 {
	var acc float32
	for i, v := range x {
		acc = float32(math.FMA(float64(v), float64(w[i]), float64(acc)))
	}
	return acc
}

func compileLinearClassifier(x *nodeCtx) (kernel, error) {
	x.ignore("multi_class")
	lin, err := readLinear(x)
	if err != nil {
		return nil, err
	}
	cl, err := readClassLabels(x, "classlabels_ints")
	if err != nil {
		return nil, err
	}
	f, coef, intercepts, post := lin.f, lin.coef, lin.intercepts, lin.post
	k := len(intercepts)
	if k == 0 || len(coef) != k*f {
		return nil, x.errorf("it has %d coefficients and %d intercepts for %d features", len(coef), k, f)
	}
	second := k == 1 && len(cl.labels) == 2
	c := k
	if second {
		c = 2
		if post == postProbit {
			return nil, x.errorf("post_transform PROBIT with one score for two classes is not supported")
		}
	}
	if len(cl.labels) != c {
		return nil, x.errorf("it has %d class labels for %d scores", len(cl.labels), c)
	}
	if c < 2 {
		return nil, x.errorf("it has a single class")
	}
	if err := cl.outputs(x); err != nil {
		return nil, err
	}
	return func(s *state) {
		scores := lin.scores(s, k)
		cl.writeLabels(s, func(r int) int {
			if k == 1 {
				if scores[r] > 0 {
					return 1
				}
				return 0
			}
			return argmax(scores[r*k : (r+1)*k])
		})
		if cl.zv == nil {
			return
		}
		if second {
			// ONNX Runtime writes 1-s and s whatever the post_transform.
			z := make([]float32, 2*s.rows)
			for r, v := range scores {
				z[2*r], z[2*r+1] = 1-v, v
			}
			s.vals[cl.zv.slot] = tensor{f32: z}
			return
		}
		for r := range s.rows {
			applyTransform(post, scores[r*k:(r+1)*k])
		}
		s.vals[cl.zv.slot] = tensor{f32: scores}
	}, nil
}

// linear is what LinearClassifier and LinearRegressor share: an [N,F]
// input, coefficients, intercepts and a post-transform.
type linear struct {
	in               *value
	f                int
	coef, intercepts []float32
	post             postTransform
}

func readLinear(x *nodeCtx) (*linear, error) {
	in, f, err := rowInput(x, dtFloat, dtDouble, dtInt64, dtInt32)
	if err != nil {
		return nil, err
	}
	lin := &linear{in: in, f: f}
	if lin.coef, err = x.floatsAttr("coefficients"); err != nil {
		return nil, err
	}
	if lin.intercepts, err = x.floatsAttr("intercepts"); err != nil {
		return nil, err
	}
	if lin.post, err = parsePostTransform(x); err != nil {
		return nil, err
	}
	return lin, nil
}

// scores returns the k raw scores of each row of the batch.
func (lin *linear) scores(s *state, k int) []float32 {
	src := s.vals[lin.in.slot]
	return linearScores(lin.in.dt, &src, s.rows, lin.f, k, lin.coef, lin.intercepts)
}

func compileLinearRegressor(x *nodeCtx) (kernel, error) {
	lin, err := readLinear(x)
	if err != nil {
		return nil, err
	}
	targets, err := x.intAttr("targets", 1)
	if err != nil {
		return nil, err
	}
	if targets < 1 || targets > int64(x.c.lim.MaxFeatures) || len(lin.coef) != int(targets)*lin.f {
		return nil, x.errorf("it has %d coefficients for %d targets and %d features", len(lin.coef), targets, lin.f)
	}
	k := int(targets)
	if len(lin.intercepts) != k {
		// ONNX Runtime ignores intercepts that are not one per target.
		lin.intercepts = nil
	}
	out, err := x.out(0, dtFloat, []int{k})
	if err != nil || out == nil {
		return func(*state) {}, err
	}
	return func(s *state) {
		scores := lin.scores(s, k)
		for r := range s.rows {
			row := scores[r*k : (r+1)*k]
			if k == 1 {
				// With one target ONNX Runtime applies PROBIT only.
				if lin.post == postProbit {
					row[0] = probit32(row[0])
				}
				continue
			}
			applyTransform(lin.post, row)
		}
		s.vals[out.slot] = tensor{f32: scores}
	}, nil
}
