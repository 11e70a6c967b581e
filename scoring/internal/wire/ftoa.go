package wire

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"strconv"
)

//go:generate go run mkpow10.go

// Shortest float formatting, written for result columns: a response of
// 10,000 rows holds tens of thousands of probabilities with 17 digits, and
// strconv's general path (any format, any precision, any bit size) costs
// more than finding the digits. This formatter finds the same digits and
// writes them straight into the response.
//
// The digits are found as in Schubfach (R. Giulietti, "The Schubfach way
// to render doubles", 2020): for f = c·2^q, the shortest decimal that reads
// back as f lies in the rounding interval [f - ulp/2, f + ulp/2] (the lower
// half-ulp is ulp/4 when f is a power of two above the smallest normal,
// and the ends belong to it when c is even, as round-half-to-even reads
// them). With k = ⌊log10 of the interval's width⌋, the interval holds at
// most one multiple of 10^(k+1) and at least one of 10^k: so the answer is
// that multiple if there is one, else the multiple of 10^k nearest to f
// that the interval holds. Both tests need f, and the interval's ends,
// divided by 10^k to two bits past the point and rounded to odd (the last
// bit says "something was cut off"), which one 64×128-bit product with a
// 128-bit 10^-k from the table in pow10.go gives exactly enough: the
// paper shows the product is never so close to an integer or a quarter
// that its cut-off part would change a comparison, for a 126-bit table
// cut at 2^-63 of a unit; this one is four times as close and cut at
// 2^-64, which keeps the paper's margins. That is an argument, not a proof:
// TestShortestMatchesStrconv checks every binary exponent at its edges,
// and many millions of values, against strconv, as does FuzzAppendFloat.

// appendFloat formats f as JavaScript and encoding/json do: the shortest
// decimal that reads back as f, in exponent form only for magnitudes below
// 1e-6 or from 1e21 ("1e-7", "1e+21"). NaN and ±Inf, which answers never
// hold (they are null there), are written as strconv writes them.
func appendFloat(b []byte, f float64) []byte {
	u := math.Float64bits(f)
	if u>>fracBits&0x7ff == 0x7ff {
		return strconv.AppendFloat(b, f, 'g', -1, 64)
	}
	return appendFinite(b, u)
}

// appendFinite is appendFloat for the finite float64 with bits u.
func appendFinite(b []byte, u uint64) []byte {
	// The digits are written in whole words, past the end of the number
	// too: the room for that is made first, and the length set last.
	if cap(b)-len(b) < floatRoom {
		b = slices.Grow(b, floatRoom)
	}
	n0 := len(b)
	out := b[n0 : n0+floatRoom]
	w := 0
	if u>>63 != 0 {
		out[0] = '-'
		w = 1
		u &^= 1 << 63
	}
	if u == 0 {
		out[w] = '0'
		return b[:n0+w+1]
	}
	d, e, integer := shortestDecimal(u)
	var dg decimal
	lead, trail := dg.set(d)
	if integer {
		// Below 2^53, so written in full, no point or exponent.
		dg.copy24(out[w:], lead)
		return b[:n0+w+decimalLen-lead]
	}
	e += trail
	n := decimalLen - lead - trail // significant digits
	x := e + n - 1                 // the exponent of the leading digit
	// x < -6 exactly when f < 1e-6, and x ≥ 21 exactly when f ≥ 1e21:
	// 10^21 is a float64 and 10^-6 lies in the rounding interval of
	// float64(1e-6) only, so no float64's shortest decimal lies on the
	// other side of either bound than the float64 itself.
	switch {
	case x < -6 || x >= 21:
		out[w] = dg.d[lead]
		i := w + 1
		if n > 1 {
			out[i] = '.'
			dg.copy24(out[i+1:], lead+1)
			i += n
		}
		out[i] = 'e'
		out[i+1] = '+'
		if x < 0 {
			out[i+1] = '-'
			x = -x
		}
		i += 2
		switch {
		case x >= 100:
			out[i] = byte('0' + x/100)
			x %= 100
			out[i+1], out[i+2] = digitPairs[2*x], digitPairs[2*x+1]
			i += 3
		case x >= 10:
			out[i], out[i+1] = digitPairs[2*x], digitPairs[2*x+1]
			i += 2
		default:
			out[i] = byte('0' + x)
			i++
		}
		return b[:n0+i]
	case x < 0:
		// "0." and -x-1 zeros, then the digits.
		binary.LittleEndian.PutUint64(out[w:], zeroPoint)
		i := w + 1 - x
		dg.copy24(out[i:], lead)
		return b[:n0+i+n]
	case x+1 >= n:
		// The digits and x+1-n zeros, fewer than 21 in all.
		dg.copy24(out[w:], lead)
		for i := w + n; i < w+x+1; i += 8 {
			binary.LittleEndian.PutUint64(out[i:], zeros)
		}
		return b[:n0+w+x+1]
	default:
		// The digits, then those after the point again one further on.
		dg.copy24(out[w:], lead)
		dg.copy24(out[w+x+2:], lead+x+1)
		out[w+x+1] = '.'
		return b[:n0+w+n+1]
	}
}

// floatRoom is the room appendFinite writes in past the end of b: a
// number takes at most 25 bytes, but its digits are written 24 at a time,
// the last from up to 18 bytes in.
const floatRoom = 48

// decimalLen is the digits a decimal holds, enough for any uint64.
const decimalLen = 24

const (
	zeros     = 0x3030303030303030  // "00000000" read as a little-endian word
	zeroPoint = 0x303030303030_2e30 // "0.000000"
)

// decimal is an integer's decimal digits, with leading zeros, in d[:24];
// the rest of d lets 24 bytes be read from anywhere in the digits.
type decimal struct {
	d [2 * decimalLen]byte
}

// set writes v in decimal and returns how many of the digits are leading
// zeros and how many are trailing zeros. v is not 0.
func (dg *decimal) set(v uint64) (lead, trail int) {
	if v < 1e8 {
		// Integers and short decimals: one block.
		l := digits8(uint32(v))
		binary.LittleEndian.PutUint64(dg.d[0:], zeros)
		binary.LittleEndian.PutUint64(dg.d[8:], zeros)
		binary.LittleEndian.PutUint64(dg.d[16:], l|zeros)
		return 16 + bits.TrailingZeros64(l)/8, bits.LeadingZeros64(l) / 8
	}
	hi := v / 1e16
	r := v - hi*1e16
	mid := r / 1e8
	lo := r - mid*1e8
	m, l := digits8(uint32(mid)), digits8(uint32(lo))
	h := uint64(hi) << 56 // a 17th digit, if any: the last of its block
	if hi >= 10 {
		h = digits8(uint32(hi))
	}
	// A block's first digit is its lowest byte, and a 0 digit a 0 byte;
	// the trailing zeros are the leading ones of the blocks reversed.
	lead = zeroBytes(h, m, l)
	trail = zeroBytes(bits.ReverseBytes64(l), bits.ReverseBytes64(m), bits.ReverseBytes64(h))
	binary.LittleEndian.PutUint64(dg.d[0:], h|zeros)
	binary.LittleEndian.PutUint64(dg.d[8:], m|zeros)
	binary.LittleEndian.PutUint64(dg.d[16:], l|zeros)
	return lead, trail
}

// zeroBytes is how many zero bytes come first in the 24 bytes of a, b
// and c, in that order, each from its lowest byte.
func zeroBytes(a, b, c uint64) int {
	switch {
	case a != 0:
		return bits.TrailingZeros64(a) / 8
	case b != 0:
		return 8 + bits.TrailingZeros64(b)/8
	}
	return 16 + bits.TrailingZeros64(c)/8
}

// copy24 copies the 24 bytes of dg.d from from to b, in three words
// rather than a call to memmove, which costs more for so few.
func (dg *decimal) copy24(b []byte, from int) {
	src := dg.d[from : from+24]
	_ = b[23]
	binary.LittleEndian.PutUint64(b[0:], binary.LittleEndian.Uint64(src[0:]))
	binary.LittleEndian.PutUint64(b[8:], binary.LittleEndian.Uint64(src[8:]))
	binary.LittleEndian.PutUint64(b[16:], binary.LittleEndian.Uint64(src[16:]))
}

// digits8 returns the eight decimal digits of v < 10^8, leading zeros
// included, one a byte, the first in the lowest: each step splits every
// number in the word in two at once, by multiplying with a reciprocal
// that is exact for the numbers it can hold (checked for every v by
// TestDigits8).
func digits8(v uint32) uint64 {
	hi := v / 10000
	x := uint64(hi) | uint64(v-hi*10000)<<32 // two numbers < 10^4, 32 bits apart
	q := (x * 10486 >> 20) & 0x0000007f_0000007f
	x = q | (x-q*100)<<16 // four numbers < 100, 16 bits apart
	q = (x * 103 >> 10) & 0x000f_000f_000f_000f
	return q | (x-q*10)<<8 // eight digits, 8 bits apart
}

// Binary layout of float64.
const (
	fracBits = 52
	qMin     = -1074 // the binary exponent of subnormals, the least
	expShift = 1075  // q = biased exponent - expShift
)

// shortestDecimal returns d and e such that d·10^e is the shortest decimal
// that reads back as the positive finite float64 with bits u, the nearest
// to it among those as short, and the one with an even last digit if two
// are as near. d may have trailing zeros, which the shortest has not.
// integer reports a value below 2^53 without a fraction: then e is 0 and d
// the value.
func shortestDecimal(u uint64) (d uint64, e int, integer bool) {
	t := u & (1<<fracBits - 1)
	be := int(u >> fracBits)
	c, q := t, qMin
	if be != 0 {
		c, q = t|1<<fracBits, be-expShift
		// An integer below 2^53 is its own shortest decimal: any other
		// decimal within half an ulp (≤ 1/2) of it has a fraction and so
		// more significant digits.
		if -fracBits <= q && q <= 0 {
			if m := c >> uint(-q); m<<uint(-q) == c {
				return m, 0, true
			}
		}
	}

	// The interval, as 4·c·2^q ± 2 (± 1 below a power of two), is closed
	// when c is even; open adds 1 to every comparison against its ends.
	open := c & 1
	cb := c << 2
	cbr := cb + 2
	var cbl uint64
	var k int
	if c != 1<<fracBits || q == qMin {
		cbl = cb - 2
		k = floorLog10Pow2(q)
	} else {
		cbl = cb - 1
		k = floorLog10ThreeQuartersPow2(q)
	}
	// 10^-k = g·2^(r-127); h shifts the multiplicand so that the upper 64
	// bits of the 192-bit product are 4·c·2^q·10^-k.
	g := &pow10[-k-pow10Min]
	h := uint(q + floorLog2Pow10(-k) + 1)
	vb := mulRoundOdd(g, cb<<h)
	vbl := mulRoundOdd(g, cbl<<h)
	vbr := mulRoundOdd(g, cbr<<h)

	s := vb >> 2 // ⌊f/10^k⌋
	// One digit fewer: the multiples of 10^(k+1) around f.
	sp := s / 10
	upin := vbl+open <= sp*40
	wpin := (sp+1)*40+open <= vbr
	if upin != wpin {
		if upin {
			return sp, k + 1, false
		}
		return sp + 1, k + 1, false
	}
	// The multiples of 10^k around f, s and s+1.
	uin := vbl+open <= s<<2
	win := (s+1)<<2+open <= vbr
	if uin != win {
		if uin {
			return s, k, false
		}
		return s + 1, k, false
	}
	// Both: the nearer, or the even on a tie. vb - 2·(2s+1) is f's
	// distance past the midpoint, in quarters.
	if mid := int64(vb - (4*s + 2)); mid < 0 || mid == 0 && s&1 == 0 {
		return s, k, false
	}
	return s + 1, k, false
}

// mulRoundOdd returns ⌊g·cp / 2^128⌋ with its lowest bit set when the
// product has a fraction, g the 128-bit {high, low}.
func mulRoundOdd(g *[2]uint64, cp uint64) uint64 {
	x1, _ := bits.Mul64(g[1], cp)
	y1, y0 := bits.Mul64(g[0], cp)
	z, carry := bits.Add64(y0, x1, 0)
	return (y1 + carry) | (z|-z)>>63
}

// floorLog10Pow2 is ⌊log10(2^q)⌋ for |q| ≤ 2,000.
func floorLog10Pow2(q int) int {
	return int((int64(q) * 661971961083) >> 41)
}

// floorLog10ThreeQuartersPow2 is ⌊log10(¾·2^q)⌋ for |q| ≤ 2,000.
func floorLog10ThreeQuartersPow2(q int) int {
	return int((int64(q)*661971961083 - 274743187321) >> 41)
}

// floorLog2Pow10 is ⌊log2(10^e)⌋ for |e| ≤ 400.
func floorLog2Pow10(e int) int {
	return int((int64(e) * 913124641741) >> 38)
}

const digitPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"
