package lightgbm

import "math"

// exp is e^x correctly rounded but in cases too rare to meet (where e^x
// lies within about 2^-95 of a value halfway between two doubles), which
// is what the C library LightGBM calls returns: its exp is not quite
// correctly rounded either, but errs only in such cases. Go's math.Exp
// errs by up to one ulp, which would make a prediction differ from
// LightGBM's in its last bit.
//
// e^x = 2^k · 2^(j/256) · e^r, with x = (256k + j)·ln2/256 + r and
// |r| <= ln2/512, r carried in double-double arithmetic; 2^(j/256) comes
// from a table of double-doubles, e^r from its Taylor series, the terms
// from r^4 on (below 2^-41) in plain doubles. Subnormal results and the
// edges of the range are math.Exp's.
func exp(x float64) float64 {
	if !(x > -708 && x < 709) {
		return math.Exp(x)
	}
	m := math.Round(x * (256 / ln2Hi))
	rh, rl := reduce(x, m, 256)
	// e^r = 1 + r·(1 + r·(1/2 + r·(1/6 + q))),
	// q = r·(1/24 + r·(1/120 + r·(1/720 + r/5040)))
	q := rh * (1.0/24 + rh*(1.0/120+rh*(1.0/720+rh*(1.0/5040))))
	sh, sl := ddAdd(invFact3[0], invFact3[1], q, 0)
	sh, sl = ddMul(sh, sl, rh, rl)
	sh, sl = ddAdd(sh, sl, 0.5, 0)
	sh, sl = ddMul(sh, sl, rh, rl)
	sh, sl = ddAdd(sh, sl, 1, 0)
	sh, sl = ddMul(sh, sl, rh, rl)
	sh, sl = ddAdd(sh, sl, 1, 0)
	mi := int64(m)
	j := mi & 255
	sh, sl = ddMul(sh, sl, exp2Table[j][0], exp2Table[j][1])
	// 2^k is a normal double for every k of this range, and so is the
	// product: the scaling is exact.
	k := (mi - j) / 256
	return (sh + sl) * math.Float64frombits(uint64(k+1023)<<52)
}

const (
	ln2Hi = 0x1.62e42fefa39efp-01 // ln 2 rounded to a double
	ln2Lo = 0x1.abc9e3b39803fp-56 // ln 2 - ln2Hi
)

// invFact3 is 1/6 as a double-double.
var invFact3 = func() [2]float64 {
	h, l := ddDiv(1, 0, 6)
	return [2]float64{h, l}
}()

// reduce is x - m·ln2/n in double-double, exactly enough: m·ln2Hi/n as an
// exact product, subtracted from x (exactly, the two being close), then
// the rest. n is a power of two.
func reduce(x, m, n float64) (float64, float64) {
	ph, pl := twoProd(m, ln2Hi/n)
	qh, ql := twoProd(m, ln2Lo/n)
	rh, rl := twoSum(x-ph, -pl)
	return ddAdd(rh, rl, -qh, -ql)
}

// exp2Table[j] is 2^(j/256) as a double-double, e^(j·ln2/256) by its
// Taylor series, which for |t| < 0.7 reaches 2^-106 in 27 terms.
var exp2Table = func() (t [256][2]float64) {
	for j := range t {
		rh, rl := reduce(0, -float64(j), 256)
		sh, sl := 1.0, 0.0
		for n := 27; n >= 1; n-- {
			sh, sl = ddMul(sh, sl, rh, rl)
			sh, sl = ddDiv(sh, sl, float64(n))
			sh, sl = ddAdd(sh, sl, 1, 0)
		}
		t[j] = [2]float64{sh, sl}
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
