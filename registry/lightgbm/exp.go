package lightgbm

import "math"

// exp is e^x correctly rounded but in cases too rare to meet (where e^x
// lies within 2^-90 of a value halfway between two doubles), which is
// what the C library LightGBM calls returns: its exp is not quite
// correctly rounded either, but errs only in such cases. Go's math.Exp
// errs by up to one ulp, which would make a prediction differ from
// LightGBM's in its last bit.
//
// e^x = 2^k · e^r with r = x - k·ln2 carried in double-double
// arithmetic; e^r is e^(r/256) by its Taylor series, squared eight
// times. Subnormal results and the edges of the range are math.Exp's.
func exp(x float64) float64 {
	if !(x > -708 && x < 709) {
		return math.Exp(x)
	}
	const (
		ln2Hi = 0x1.62e42fefa39efp-01 // ln 2 rounded to a double
		ln2Lo = 0x1.abc9e3b39803fp-56 // ln 2 - ln2Hi
	)
	k := math.Round(x / ln2Hi)
	// r = x - k·ln2, exactly enough: k·ln2Hi as an exact product of two
	// doubles, subtracted from x (exact, the two being close), then the
	// rest.
	ph, pl := twoProd(k, ln2Hi)
	qh, ql := twoProd(k, ln2Lo)
	rh, rl := twoSum(x-ph, -pl)
	rh, rl = ddAdd(rh, rl, -qh, -ql)
	// e^(r/256): |r/256| < 2^-9, so ten terms reach 2^-110.
	rh, rl = rh/256, rl/256
	sh, sl := 1.0/3628800, 0.0 // 1/10!, as the series' last coefficient
	for n := 9; n >= 1; n-- {
		sh, sl = ddMul(sh, sl, rh, rl)
		sh, sl = ddAdd(sh, sl, invFact[n][0], invFact[n][1])
	}
	sh, sl = ddMul(sh, sl, rh, rl)
	sh, sl = ddAdd(sh, sl, 1, 0)
	for range 8 {
		sh, sl = ddMul(sh, sl, sh, sl)
	}
	// 2^k is a normal double for every k of this range, and so is the
	// product: the scaling is exact.
	return (sh + sl) * math.Float64frombits(uint64(int64(k)+1023)<<52)
}

// invFact[n] is 1/n! as a double-double.
var invFact = func() [10][2]float64 {
	var t [10][2]float64
	h, l := 1.0, 0.0
	t[0] = [2]float64{1, 0}
	for n := 1; n < 10; n++ {
		h, l = ddDiv(h, l, float64(n))
		t[n] = [2]float64{h, l}
	}
	return t
}()

// twoSum is a+b as the rounded sum and its exact error.
func twoSum(a, b float64) (float64, float64) {
	s := a + b
	bb := s - a
	return s, (a - (s - bb)) + (b - bb)
}

// twoProd is a·b as the rounded product and its exact error.
func twoProd(a, b float64) (float64, float64) {
	p := a * b
	return p, math.FMA(a, b, -p)
}

// ddAdd is (ah+al) + (bh+bl) in double-double.
func ddAdd(ah, al, bh, bl float64) (float64, float64) {
	s, e := twoSum(ah, bh)
	e += al + bl
	return twoSum(s, e)
}

// ddMul is (ah+al) · (bh+bl) in double-double.
func ddMul(ah, al, bh, bl float64) (float64, float64) {
	p, e := twoProd(ah, bh)
	e += ah*bl + al*bh
	return twoSum(p, e)
}

// ddDiv is (ah+al) / b in double-double.
func ddDiv(ah, al, b float64) (float64, float64) {
	q := ah / b
	ph, pl := twoProd(q, b)
	r := (ah - ph - pl + al) / b
	return twoSum(q, r)
}
