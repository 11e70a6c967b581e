package scoring

import (
	"math"
	"math/bits"
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
	if u>>63 != 0 {
		b = append(b, '-')
		u &^= 1 << 63
	}
	if u == 0 {
		return append(b, '0')
	}
	d, e, integer := shortestDecimal(u)
	var buf [24]byte
	if integer {
		// Below 2^53, so written in full, no point or exponent.
		i := putDigits(&buf, d)
		return append(b, buf[i:]...)
	}
	d, e = trimZeros(d, e)
	i := putDigits(&buf, d)
	digits := buf[i:]
	n := len(digits)
	x := e + n - 1 // the exponent of the leading digit
	// x < -6 exactly when f < 1e-6, and x ≥ 21 exactly when f ≥ 1e21:
	// 10^21 is a float64 and 10^-6 lies in the rounding interval of
	// float64(1e-6) only, so no float64's shortest decimal lies on the
	// other side of either bound than the float64 itself.
	if x < -6 || x >= 21 {
		b = append(b, digits[0])
		if n > 1 {
			b = append(b, '.')
			b = append(b, digits[1:]...)
		}
		b = append(b, 'e')
		if x < 0 {
			b = append(b, '-')
			x = -x
		} else {
			b = append(b, '+')
		}
		j := putDigits(&buf, uint64(x))
		return append(b, buf[j:]...)
	}
	switch {
	case x < 0:
		b = append(b, "0.00000"[:1-x]...)
		b = append(b, digits...)
	case x+1 >= n:
		b = append(b, digits...)
		for range x + 1 - n {
			b = append(b, '0')
		}
	default:
		b = append(b, digits[:x+1]...)
		b = append(b, '.')
		b = append(b, digits[x+1:]...)
	}
	return b
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

// trimZeros removes d's trailing zeros, adding them to the exponent e.
// d is not 0.
func trimZeros(d uint64, e int) (uint64, int) {
	for d%100000000 == 0 {
		d /= 100000000
		e += 8
	}
	if d%10000 == 0 {
		d /= 10000
		e += 4
	}
	if d%100 == 0 {
		d /= 100
		e += 2
	}
	if d%10 == 0 {
		d /= 10
		e++
	}
	return d, e
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

// putDigits writes d in decimal at the end of buf and returns where it
// starts.
func putDigits(buf *[24]byte, d uint64) int {
	i := len(buf)
	for d >= 100000000 {
		// Eight digits at a time in 32 bits, where division is cheaper,
		// as two independent groups of four.
		hi := d / 100000000
		lo := uint32(d - hi*100000000)
		d = hi
		put4(buf[i-8:i-4], lo/10000)
		put4(buf[i-4:i], lo%10000)
		i -= 8
	}
	v := uint32(d)
	for v >= 100 {
		r := v % 100
		v /= 100
		i -= 2
		buf[i], buf[i+1] = digitPairs[2*r], digitPairs[2*r+1]
	}
	if v >= 10 {
		i -= 2
		buf[i], buf[i+1] = digitPairs[2*v], digitPairs[2*v+1]
		return i
	}
	i--
	buf[i] = byte('0' + v)
	return i
}

// put4 writes v < 10,000 as four digits into b.
func put4(b []byte, v uint32) {
	hi, lo := v/100, v%100
	_ = b[3]
	b[0], b[1] = digitPairs[2*hi], digitPairs[2*hi+1]
	b[2], b[3] = digitPairs[2*lo], digitPairs[2*lo+1]
}
