package onnx

import (
	"math"
	"slices"
	"strconv"
)

// operators are the operators this package evaluates, by domain and name.
var operators = map[opKey]operator{
	{domainDefault, "Identity"}: {1, 1, compileIdentity},
	{domainDefault, "Cast"}:     {1, 1, compileCast},
	{domainDefault, "Concat"}:   {1, 1 << 16, compileConcat},
	{domainDefault, "Add"}:      {2, 2, compileArith},
	{domainDefault, "Sub"}:      {2, 2, compileArith},
	{domainDefault, "Mul"}:      {2, 2, compileArith},
	{domainDefault, "Div"}:      {2, 2, compileArith},
	{domainDefault, "MatMul"}:   {2, 2, compileMatMul},
	{domainDefault, "Reshape"}:  {2, 2, compileReshape},
	{domainDefault, "Flatten"}:  {1, 1, compileFlatten},
	{domainDefault, "Softmax"}:  {1, 1, compileSoftmax},
	{domainDefault, "Sigmoid"}:  {1, 1, compileSigmoid},

	{domainML, "ArrayFeatureExtractor"}:  {2, 2, compileArrayFeatureExtractor},
	{domainML, "ZipMap"}:                 {1, 1, compileZipMap},
	{domainML, "Scaler"}:                 {1, 1, compileScaler},
	{domainML, "Normalizer"}:             {1, 1, compileNormalizer},
	{domainML, "Imputer"}:                {1, 1, compileImputer},
	{domainML, "OneHotEncoder"}:          {1, 1, compileOneHotEncoder},
	{domainML, "LabelEncoder"}:           {1, 1, compileLabelEncoder},
	{domainML, "LinearClassifier"}:       {1, 1, compileLinearClassifier},
	{domainML, "LinearRegressor"}:        {1, 1, compileLinearRegressor},
	{domainML, "TreeEnsembleClassifier"}: {1, 1, compileTreeClassifier},
	{domainML, "TreeEnsembleRegressor"}:  {1, 1, compileTreeRegressor},
	{domainML, "TreeEnsemble"}:           {1, 1, compileTreeEnsemble},
}

func compileIdentity(x *nodeCtx) (kernel, error) {
	if len(x.ins) == 0 || x.ins[0] == nil {
		return nil, x.errorf("input 0 is missing")
	}
	in := x.ins[0]
	if in.konst != nil {
		return nil, x.errorf("input 0 (%q) is a constant, which is not supported here", in.name)
	}
	out, err := x.out(0, in.dt, in.dims)
	if err != nil || out == nil {
		return func(*state) {}, err
	}
	out.zip, out.cls, out.clsInts = in.zip, in.cls, in.clsInts
	out.origin, out.scores = in.origin, in.scores
	return func(s *state) { s.vals[out.slot] = s.vals[in.slot] }, nil
}

func compileCast(x *nodeCtx) (kernel, error) {
	in, err := x.in(0)
	if err != nil {
		return nil, err
	}
	x.ignore("saturate")
	to, err := x.intAttr("to", 0)
	if err != nil {
		return nil, err
	}
	dt, ok := dtypeOf(to)
	if !ok {
		return nil, x.errorf("casting to %s is not supported", onnxTypeName(to))
	}
	if in.dt == dtFloat || in.dt == dtDouble {
		if dt == dtString {
			return nil, x.errorf("casting %s to string is not supported", in.dt)
		}
	}
	out, err := x.out(0, dt, in.dims)
	if err != nil || out == nil {
		return func(*state) {}, err
	}
	if dt == dtFloat || dt == dtDouble {
		out.cls, out.clsInts, out.scores = in.cls, in.clsInts, in.scores
	}
	if in.dt != dtString && dt != dtString {
		out.origin = in.origin // a number cast is still the input's, as the trees read it
	}
	from := in.dt
	return func(s *state) {
		src := s.vals[in.slot]
		n := s.rows * in.width
		var dst tensor
		switch dt {
		case dtFloat:
			dst.f32 = make([]float32, n)
		case dtDouble:
			dst.f64 = make([]float64, n)
		case dtString:
			dst.str = make([]string, n)
		default:
			dst.i64 = make([]int64, n)
		}
		for i := range n {
			switch {
			case from == dtString:
				castString(s, i/in.width, src.str[i], dt, &dst, i)
			case dt == dtString:
				dst.str[i] = strconv.FormatInt(src.i64[i], 10)
			default:
				f, iv, isInt := numberAt(from, &src, i)
				storeNumber(dt, &dst, i, f, iv, isInt)
			}
		}
		s.vals[out.slot] = dst
	}, nil
}

// numberAt reads element i of a numeric tensor.
func numberAt(dt dtype, t *tensor, i int) (f float64, iv int64, isInt bool) {
	switch dt {
	case dtFloat:
		return float64(t.f32[i]), 0, false
	case dtDouble:
		return t.f64[i], 0, false
	}
	return 0, t.i64[i], true
}

// storeNumber writes a number into element i of a tensor of type dt, as a
// C++ static_cast does.
func storeNumber(dt dtype, t *tensor, i int, f float64, iv int64, isInt bool) {
	switch dt {
	case dtFloat:
		if isInt {
			t.f32[i] = float32(iv)
		} else {
			t.f32[i] = float32(f)
		}
	case dtDouble:
		if isInt {
			t.f64[i] = float64(iv)
		} else {
			t.f64[i] = f
		}
	case dtBool:
		if (isInt && iv != 0) || (!isInt && f != 0) {
			t.i64[i] = 1
		} else {
			t.i64[i] = 0
		}
	default:
		v := iv
		if !isInt {
			v = truncInt(f)
		}
		if dt == dtInt32 {
			v = int64(int32(v))
		}
		t.i64[i] = v
	}
}

// truncInt truncates f toward zero; NaN and values out of range give the
// smallest int64, as x86 conversions do.
func truncInt(f float64) int64 {
	if math.IsNaN(f) || f >= 9.223372036854775807e18 || f < -9.223372036854775808e18 {
		return math.MinInt64
	}
	return int64(f)
}

// castString parses a string into a number of type dt; a string that is
// not one makes the row unscorable.
func castString(s *state, row int, v string, dt dtype, dst *tensor, i int) {
	if dt == dtString {
		dst.str[i] = v
		return
	}
	if dt.integer() {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			s.markBad(row)
		}
		storeNumber(dt, dst, i, 0, n, true)
		return
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		s.markBad(row)
		f = math.NaN()
	}
	storeNumber(dt, dst, i, f, 0, false)
}

func compileConcat(x *nodeCtx) (kernel, error) {
	axis, err := x.intAttr("axis", math.MinInt64)
	if err != nil {
		return nil, err
	}
	if axis == math.MinInt64 {
		return nil, x.errorf("attribute \"axis\" is missing")
	}
	var ins []*value
	for i := range x.ins {
		v, err := x.in(i)
		if err != nil {
			return nil, err
		}
		ins = append(ins, v)
	}
	first := ins[0]
	rank := int64(len(first.dims) + 1)
	if axis < 0 {
		axis += rank
	}
	if axis < 1 || axis >= rank {
		return nil, x.errorf("concatenating along axis %d of %s is not supported: only axes after the batch axis are", axis, first.describe())
	}
	a := int(axis) - 1
	dims := slices.Clone(first.dims)
	dims[a] = 0
	for _, v := range ins {
		if v.dt != first.dt || len(v.dims) != len(first.dims) {
			return nil, x.errorf("inputs %s and %s differ in type or rank", first.describe(), v.describe())
		}
		for k := range dims {
			if k != a && v.dims[k] != first.dims[k] {
				return nil, x.errorf("inputs %s and %s differ in shape", first.describe(), v.describe())
			}
		}
		dims[a] += v.dims[a]
	}
	out, err := x.out(0, first.dt, dims)
	if err != nil || out == nil {
		return func(*state) {}, err
	}
	outer := product(dims[:a])
	inner := product(dims[a+1:])
	chunks := make([]int, len(ins))
	for i, v := range ins {
		chunks[i] = v.dims[a] * inner
	}
	slotsIn := make([]int, len(ins))
	for i, v := range ins {
		slotsIn[i] = v.slot
	}
	out.origin = concatOrigin(ins, chunks, outer)
	dt, width := first.dt, out.width
	return func(s *state) {
		var dst tensor
		n := s.rows * width
		switch {
		case dt == dtFloat:
			dst.f32 = make([]float32, n)
			concatInto(dst.f32, s, slotsIn, chunks, s.rows*outer, func(t *tensor) []float32 { return t.f32 })
		case dt == dtDouble:
			dst.f64 = make([]float64, n)
			concatInto(dst.f64, s, slotsIn, chunks, s.rows*outer, func(t *tensor) []float64 { return t.f64 })
		case dt == dtString:
			dst.str = make([]string, n)
			concatInto(dst.str, s, slotsIn, chunks, s.rows*outer, func(t *tensor) []string { return t.str })
		default:
			dst.i64 = make([]int64, n)
			concatInto(dst.i64, s, slotsIn, chunks, s.rows*outer, func(t *tensor) []int64 { return t.i64 })
		}
		s.vals[out.slot] = dst
	}, nil
}

// concatOrigin is the origin of a row that concatenates the rows of ins
// in blocks of chunks: nil unless every input has one.
func concatOrigin(ins []*value, chunks []int, blocks int) []int32 {
	var out []int32
	for b := range blocks {
		for i, v := range ins {
			if v.origin == nil {
				return nil
			}
			c := chunks[i]
			out = append(out, v.origin[b*c:(b+1)*c]...)
		}
	}
	return out
}

func concatInto[T any](dst []T, s *state, slots, chunks []int, blocks int, get func(*tensor) []T) {
	pos := 0
	for b := range blocks {
		for i, slot := range slots {
			c := chunks[i]
			pos += copy(dst[pos:pos+c], get(&s.vals[slot])[b*c:(b+1)*c])
		}
	}
}

// operand is one side of an element-wise operation: a batch value or a
// constant, read at element j of a row as index (j % width) of the row
// (batch) or of the constant.
type operand struct {
	slot  int
	konst *constant
	width int
}

// broadcastOperand checks that v, of per-row dims (a batch value) or full
// dims (a constant), broadcasts to out's per-row dims the way these
// graphs need: the same dims, one value per row, or a constant that is a
// row (or a suffix of it) repeated.
func broadcastOperand(x *nodeCtx, v *value, out []int) (operand, error) {
	dims := v.dims
	if v.konst != nil {
		// A constant's leading dimension lines up with the batch axis
		// only when it has as many dimensions as the result.
		if len(dims) == len(out)+1 {
			if dims[0] != 1 {
				return operand{}, x.errorf("constant %q of shape %v does not broadcast over rows", v.name, dims)
			}
			dims = dims[1:]
		}
	}
	for len(dims) > 0 && dims[0] == 1 {
		dims = dims[1:]
	}
	w := product(dims)
	if w != 1 {
		if len(dims) > len(out) || !slices.Equal(dims, out[len(out)-len(dims):]) {
			return operand{}, x.errorf("shapes %s and [N%s] do not broadcast in a way that is supported", v.describe(), dimsSuffix(out))
		}
	}
	if v.konst != nil {
		return operand{slot: -1, konst: v.konst, width: w}, nil
	}
	return operand{slot: v.slot, width: w}, nil
}

// broadcastDims returns the per-row dims of an element-wise result: the
// batch operand's, or both batch operands' broadcast together.
func broadcastDims(a, b *value) []int {
	if a.konst != nil {
		return b.dims
	}
	if b.konst != nil {
		return a.dims
	}
	da, db := a.dims, b.dims
	if len(db) > len(da) {
		da, db = db, da
	}
	out := slices.Clone(da)
	off := len(da) - len(db)
	for i, d := range db {
		if out[off+i] == 1 {
			out[off+i] = d
		}
	}
	return out
}

func compileArith(x *nodeCtx) (kernel, error) {
	if x.ins[0] == nil || x.ins[1] == nil {
		return nil, x.errorf("an input is missing")
	}
	a, b := x.ins[0], x.ins[1]
	if a.konst != nil && b.konst != nil {
		return nil, x.errorf("both inputs are constants, which is not supported")
	}
	if a.zip || b.zip {
		return nil, x.errorf("an input is a sequence of maps")
	}
	if a.dt != b.dt {
		return nil, x.errorf("inputs are %s and %s; they must be of one type", a.dt, b.dt)
	}
	dt := a.dt
	op := x.n.opType
	switch {
	case dt == dtFloat || dt == dtDouble:
	case (dt == dtInt64 || dt == dtInt32) && op != "Div":
	default:
		return nil, x.errorf("%s of %s values is not supported", op, dt)
	}
	dims := broadcastDims(a, b)
	oa, err := broadcastOperand(x, a, dims)
	if err != nil {
		return nil, err
	}
	ob, err := broadcastOperand(x, b, dims)
	if err != nil {
		return nil, err
	}
	out, err := x.out(0, dt, dims)
	if err != nil || out == nil {
		return func(*state) {}, err
	}
	width := out.width
	return func(s *state) {
		n := s.rows * width
		var dst tensor
		switch dt {
		case dtFloat:
			dst.f32 = make([]float32, n)
			arith(dst.f32, s, oa, ob, width, op, func(t *tensor) []float32 { return t.f32 })
		case dtDouble:
			dst.f64 = make([]float64, n)
			arith(dst.f64, s, oa, ob, width, op, func(t *tensor) []float64 { return t.f64 })
		default:
			dst.i64 = make([]int64, n)
			arith(dst.i64, s, oa, ob, width, op, func(t *tensor) []int64 { return t.i64 })
			if dt == dtInt32 {
				for i, v := range dst.i64 {
					dst.i64[i] = int64(int32(v))
				}
			}
		}
		s.vals[out.slot] = dst
	}, nil
}

func arith[T float32 | float64 | int64](dst []T, s *state, a, b operand, width int, op string, get func(*tensor) []T) {
	av, bv := operandValues(s, a, get), operandValues(s, b, get)
	for r := range s.rows {
		for j := range width {
			x := av[operandIndex(a, r, j)]
			y := bv[operandIndex(b, r, j)]
			var z T
			switch op {
			case "Add":
				z = x + y
			case "Sub":
				z = x - y
			case "Mul":
				z = x * y
			default:
				z = x / y
			}
			dst[r*width+j] = z
		}
	}
}

func operandValues[T any](s *state, o operand, get func(*tensor) []T) []T {
	if o.konst != nil {
		return get(&o.konst.tensor)
	}
	return get(&s.vals[o.slot])
}

func operandIndex(o operand, row, j int) int {
	if o.konst != nil {
		return j % o.width
	}
	return row*o.width + j%o.width
}

func compileMatMul(x *nodeCtx) (kernel, error) {
	a, err := x.in(0, dtFloat, dtDouble)
	if err != nil {
		return nil, err
	}
	b, err := x.konst(1)
	if err != nil {
		return nil, err
	}
	if b.dt != a.dt {
		return nil, x.errorf("inputs are %s and %s; they must be of one type", a.dt, b.dt)
	}
	if len(a.dims) != 1 || (len(b.dims) != 1 && len(b.dims) != 2) || b.dims[0] != a.dims[0] {
		return nil, x.errorf("multiplying %s by %v is not supported: only [N,K] by [K,M] or [K] is", a.describe(), b.dims)
	}
	k := a.dims[0]
	var dims []int
	m := 1
	if len(b.dims) == 2 {
		m = b.dims[1]
		dims = []int{m}
	}
	out, err := x.out(0, a.dt, dims)
	if err != nil || out == nil {
		return func(*state) {}, err
	}
	w := b.asFloat64s()
	return func(s *state) {
		n := s.rows * m
		var dst tensor
		src := s.vals[a.slot]
		if a.dt == dtFloat {
			dst.f32 = make([]float32, n)
		} else {
			dst.f64 = make([]float64, n)
		}
		for r := range s.rows {
			for j := range m {
				// As ONNX Runtime's GEMM: fused multiply-adds in order,
				// rounded to the input's type at each step.
				if a.dt == dtFloat {
					var acc float32
					for i := range k {
						acc = float32(math.FMA(float64(src.f32[r*k+i]), w[i*m+j], float64(acc)))
					}
					dst.f32[r*m+j] = acc
				} else {
					var acc float64
					for i := range k {
						acc = math.FMA(src.f64[r*k+i], w[i*m+j], acc)
					}
					dst.f64[r*m+j] = acc
				}
			}
		}
		s.vals[out.slot] = dst
	}, nil
}

func compileReshape(x *nodeCtx) (kernel, error) {
	in, err := x.in(0)
	if err != nil {
		return nil, err
	}
	allowZero, err := x.intAttr("allowzero", 0)
	if err != nil {
		return nil, err
	}
	shape, err := x.konst(1)
	if err != nil {
		return nil, err
	}
	if shape.dt != dtInt64 || len(shape.dims) != 1 || len(shape.i64) == 0 {
		return nil, x.errorf("the shape must be a list of int64")
	}
	sh := shape.i64
	if allowZero != 0 && slices.Contains(sh, 0) {
		return nil, x.errorf("reshaping to %v with allowzero, an empty tensor, is not supported", sh)
	}
	var dims []int
	infer := -1
	for i, d := range sh[1:] {
		switch {
		case d == -1 && infer < 0 && sh[0] == 0:
			infer = i
			dims = append(dims, 1)
		case d == 0 && i+1 < len(in.dims)+1 && i < len(in.dims):
			dims = append(dims, in.dims[i])
		case d > 0 && d <= int64(x.c.lim.MaxFeatures):
			dims = append(dims, int(d))
		default:
			return nil, x.errorf("reshaping %s to %v is not supported: the first dimension must stay the batch (-1 or 0)", in.describe(), sh)
		}
	}
	if sh[0] != -1 && sh[0] != 0 {
		return nil, x.errorf("reshaping %s to %v is not supported: the first dimension must stay the batch (-1 or 0)", in.describe(), sh)
	}
	if infer >= 0 {
		rest := product(dims)
		if in.width%rest != 0 {
			return nil, x.errorf("cannot reshape %s to %v", in.describe(), sh)
		}
		dims[infer] = in.width / rest
	}
	if product(dims) != in.width {
		return nil, x.errorf("reshaping %s to %v would move values between rows, which is not supported", in.describe(), sh)
	}
	out, err := x.out(0, in.dt, dims)
	if err != nil || out == nil {
		return func(*state) {}, err
	}
	out.cls, out.clsInts = in.cls, in.clsInts
	out.origin, out.scores = in.origin, in.scores // the same values in the same order
	return func(s *state) { s.vals[out.slot] = s.vals[in.slot] }, nil
}

func compileFlatten(x *nodeCtx) (kernel, error) {
	in, err := x.in(0)
	if err != nil {
		return nil, err
	}
	axis, err := x.intAttr("axis", 1)
	if err != nil {
		return nil, err
	}
	if axis < 0 {
		axis += int64(len(in.dims) + 1)
	}
	if axis != 1 {
		return nil, x.errorf("flattening %s at axis %d is not supported: only axis 1 is", in.describe(), axis)
	}
	out, err := x.out(0, in.dt, []int{in.width})
	if err != nil || out == nil {
		return func(*state) {}, err
	}
	out.cls, out.clsInts = in.cls, in.clsInts
	out.origin, out.scores = in.origin, in.scores // the same values in the same order
	return func(s *state) { s.vals[out.slot] = s.vals[in.slot] }, nil
}

// rowGroups returns the size of the groups a Softmax normalizes, each a
// run of consecutive values within a row.
func softmaxGroup(x *nodeCtx, in *value) (int, error) {
	rank := int64(len(in.dims) + 1)
	def := int64(-1)
	if x.version < 13 {
		def = 1
	}
	axis, err := x.intAttr("axis", def)
	if err != nil {
		return 0, err
	}
	if axis < 0 {
		axis += rank
	}
	switch {
	case axis < 1 || axis >= rank:
		return 0, x.errorf("softmax along axis %d of %s is not supported", axis, in.describe())
	case x.version < 13:
		return product(in.dims[axis-1:]), nil
	case axis == rank-1:
		return in.dims[axis-1], nil
	}
	return 0, x.errorf("softmax along axis %d of %s is not supported: only the last axis is", axis, in.describe())
}

func compileSoftmax(x *nodeCtx) (kernel, error) {
	in, err := x.in(0, dtFloat, dtDouble)
	if err != nil {
		return nil, err
	}
	group, err := softmaxGroup(x, in)
	if err != nil {
		return nil, err
	}
	out, err := x.out(0, in.dt, in.dims)
	if err != nil || out == nil {
		return func(*state) {}, err
	}
	out.cls, out.clsInts = in.cls, in.clsInts // normalized scores are still the classes' scores
	return func(s *state) {
		n := s.rows * in.width
		src := s.vals[in.slot]
		var dst tensor
		buf := make([]float64, group)
		if in.dt == dtFloat {
			dst.f32 = make([]float32, n)
		} else {
			dst.f64 = make([]float64, n)
		}
		for g := 0; g < n; g += group {
			maxv := math.Inf(-1)
			for j := range group {
				v := readFloat(in.dt, &src, g+j)
				buf[j] = v
				maxv = math.Max(maxv, v)
			}
			var sum float64
			for j := range buf {
				buf[j] = math.Exp(buf[j] - maxv)
				sum += buf[j]
			}
			for j, v := range buf {
				if in.dt == dtFloat {
					dst.f32[g+j] = float32(v / sum)
				} else {
					dst.f64[g+j] = v / sum
				}
			}
		}
		s.vals[out.slot] = dst
	}, nil
}

func readFloat(dt dtype, t *tensor, i int) float64 {
	if dt == dtFloat {
		return float64(t.f32[i])
	}
	return t.f64[i]
}

func compileSigmoid(x *nodeCtx) (kernel, error) {
	in, err := x.in(0, dtFloat, dtDouble)
	if err != nil {
		return nil, err
	}
	out, err := x.out(0, in.dt, in.dims)
	if err != nil || out == nil {
		return func(*state) {}, err
	}
	out.cls, out.clsInts = in.cls, in.clsInts
	return func(s *state) {
		n := s.rows * in.width
		src := s.vals[in.slot]
		var dst tensor
		if in.dt == dtFloat {
			dst.f32 = make([]float32, n)
			for i, v := range src.f32[:n] {
				dst.f32[i] = float32(1 / (1 + math.Exp(-float64(v))))
			}
		} else {
			dst.f64 = make([]float64, n)
			for i, v := range src.f64[:n] {
				dst.f64[i] = 1 / (1 + math.Exp(-v))
			}
		}
		s.vals[out.slot] = dst
	}, nil
}

func compileArrayFeatureExtractor(x *nodeCtx) (kernel, error) {
	in, err := x.in(0)
	if err != nil {
		return nil, err
	}
	idx, err := x.konst(1)
	if err != nil {
		return nil, err
	}
	if !idx.dt.integer() || idx.dt == dtBool {
		return nil, x.errorf("the indices must be int64")
	}
	if len(in.dims) == 0 {
		return nil, x.errorf("extracting from %s is not supported: the input needs a feature axis", in.describe())
	}
	last := in.dims[len(in.dims)-1]
	for _, i := range idx.i64 {
		if i < 0 || i >= int64(last) {
			return nil, x.errorf("index %d is out of range for %s", i, in.describe())
		}
	}
	if len(idx.i64) == 0 {
		return nil, x.errorf("there are no indices")
	}
	dims := append(slices.Clone(in.dims[:len(in.dims)-1]), len(idx.i64))
	out, err := x.out(0, in.dt, dims)
	if err != nil || out == nil {
		return func(*state) {}, err
	}
	blocks := product(in.dims[:len(in.dims)-1])
	ids := idx.i64
	if in.origin != nil {
		out.origin = make([]int32, out.width)
		gather(out.origin, in.origin, ids, last, blocks)
	}
	return func(s *state) {
		src := s.vals[in.slot]
		var dst tensor
		n := s.rows * out.width
		switch {
		case in.dt == dtFloat:
			dst.f32 = make([]float32, n)
			gather(dst.f32, src.f32, ids, last, s.rows*blocks)
		case in.dt == dtDouble:
			dst.f64 = make([]float64, n)
			gather(dst.f64, src.f64, ids, last, s.rows*blocks)
		case in.dt == dtString:
			dst.str = make([]string, n)
			gather(dst.str, src.str, ids, last, s.rows*blocks)
		default:
			dst.i64 = make([]int64, n)
			gather(dst.i64, src.i64, ids, last, s.rows*blocks)
		}
		s.vals[out.slot] = dst
	}, nil
}

func gather[T any](dst, src []T, ids []int64, width, blocks int) {
	k := 0
	for b := range blocks {
		row := src[b*width : (b+1)*width]
		for _, i := range ids {
			dst[k] = row[i]
			k++
		}
	}
}

func compileZipMap(x *nodeCtx) (kernel, error) {
	in, err := x.in(0, dtFloat)
	if err != nil {
		return nil, err
	}
	labels, err := classLabels(x, "classlabels_strings", "classlabels_int64s")
	if err != nil {
		return nil, err
	}
	if len(in.dims) != 1 || in.dims[0] != len(labels) {
		return nil, x.errorf("it names %d classes, but its input is %s", len(labels), in.describe())
	}
	out, err := x.out(0, dtFloat, in.dims)
	if err != nil || out == nil {
		return func(*state) {}, err
	}
	ints, _ := x.intsAttr("classlabels_int64s")
	out.zip, out.cls, out.clsInts = true, labels, len(ints) > 0
	if in.cls != nil {
		out.scores = in.scores // a classifier's scores, by class
	}
	return func(s *state) { s.vals[out.slot] = s.vals[in.slot] }, nil
}

// classLabels reads a classifier's labels from its string or integer
// attribute (exactly one must be given); integers are written in decimal.
func classLabels(x *nodeCtx, strs, ints string) ([]string, error) {
	s, err := x.stringsAttr(strs)
	if err != nil {
		return nil, err
	}
	n, err := x.intsAttr(ints)
	if err != nil {
		return nil, err
	}
	if (len(s) > 0) == (len(n) > 0) {
		return nil, x.errorf("it needs exactly one of %q and %q", strs, ints)
	}
	if len(n) > 0 {
		s = make([]string, len(n))
		for i, v := range n {
			s[i] = strconv.FormatInt(v, 10)
		}
	}
	if len(s) > x.c.lim.MaxClasses {
		return nil, x.limitf("it has %d classes, more than the limit of %d", len(s), x.c.lim.MaxClasses)
	}
	return s, nil
}

// classifier is what a classifier node (LinearClassifier,
// TreeEnsembleClassifier) answers: its labels, the type of its label
// output (string labels give a string output, integer ones an int64
// output) and its two outputs, either of which may be unused.
type classifier struct {
	labels []string
	ints   []int64 // the labels as integers when ldt is dtInt64
	ldt    dtype
	yv, zv *value
}

// readClassLabels reads a classifier's labels, from classlabels_strings
// or from the integer attribute ints.
func readClassLabels(x *nodeCtx, ints string) (*classifier, error) {
	labels, err := classLabels(x, "classlabels_strings", ints)
	if err != nil {
		return nil, err
	}
	cl := &classifier{labels: labels, ldt: dtInt64}
	if s, _ := x.stringsAttr("classlabels_strings"); len(s) > 0 {
		cl.ldt = dtString
		return cl, nil
	}
	cl.ints = make([]int64, len(labels))
	for i, l := range labels {
		cl.ints[i], _ = strconv.ParseInt(l, 10, 64)
	}
	return cl, nil
}

// outputs declares the classifier's label output and its score output,
// one score a class, which names the classes.
func (cl *classifier) outputs(x *nodeCtx) error {
	var err error
	if cl.yv, err = x.out(0, cl.ldt, nil); err != nil {
		return err
	}
	if cl.zv, err = x.out(1, dtFloat, []int{len(cl.labels)}); err != nil {
		return err
	}
	if cl.zv != nil {
		cl.zv.cls, cl.zv.clsInts = cl.labels, cl.ldt == dtInt64
	}
	return nil
}

// writeLabels stores the label output when it is used, row r taking the
// label of class best(r).
func (cl *classifier) writeLabels(s *state, best func(r int) int) {
	if cl.yv == nil {
		return
	}
	var y tensor
	if cl.ldt == dtString {
		y.str = make([]string, s.rows)
		for r := range s.rows {
			y.str[r] = cl.labels[best(r)]
		}
	} else {
		y.i64 = make([]int64, s.rows)
		for r := range s.rows {
			y.i64[r] = cl.ints[best(r)]
		}
	}
	s.vals[cl.yv.slot] = y
}

// argmax returns the index of the first largest of v.
func argmax(v []float32) int {
	best := 0
	for j := 1; j < len(v); j++ {
		if v[j] > v[best] {
			best = j
		}
	}
	return best
}
