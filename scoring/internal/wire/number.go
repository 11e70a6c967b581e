package wire

import (
	"strconv"
	"unsafe"
)

// exactPow10 holds the powers of ten that a float64 holds exactly.
var exactPow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// scanNumber reads the JSON number at b[i] and returns its value and the
// offset just after it; false when it is not a number by JSON's grammar or
// is out of range. Up to 19 digits with a power of ten up to 22 take
// Clinger's fast path: when the digits make an integer of at most 2^53,
// it and the power of ten are both exact in a float64, so one
// multiplication or division rounds correctly. The rest go to strconv.
func scanNumber(b []byte, i int) (float64, int, bool) {
	start := i
	neg := b[i] == '-'
	if neg {
		i++
	}
	var mant uint64
	digits := 0 // of mant, leading zeros included
	switch {
	case i == len(b):
		return 0, 0, false
	case b[i] == '0':
		i++
	case '1' <= b[i] && b[i] <= '9':
		for ; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
			mant = mant*10 + uint64(b[i]-'0')
			digits++
		}
	default:
		return 0, 0, false
	}
	exp := 0
	if i < len(b) && b[i] == '.' {
		i++
		frac := i
		for ; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
			mant = mant*10 + uint64(b[i]-'0')
			digits++
		}
		if i == frac {
			return 0, 0, false
		}
		exp = frac - i
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		eneg := false
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			eneg = b[i] == '-'
			i++
		}
		first := i
		e := 0
		for ; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
			if e < 1_000_000 {
				e = e*10 + int(b[i]-'0')
			}
		}
		if i == first {
			return 0, 0, false
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if digits <= 19 && mant <= 1<<53 && -22 <= exp && exp <= 22 {
		f := float64(mant)
		if exp < 0 {
			f /= exactPow10[-exp]
		} else if exp > 0 {
			f *= exactPow10[exp]
		}
		if neg {
			f = -f
		}
		return f, i, true
	}
	f, err := strconv.ParseFloat(unsafe.String(&b[start], i-start), 64)
	if err != nil {
		return 0, 0, false
	}
	return f, i, true
}
