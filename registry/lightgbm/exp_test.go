package lightgbm

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// bigExp is e^x to 300 bits, rounded once to a double: the correctly
// rounded value.
func bigExp(x float64) float64 {
	const prec = 300
	y := new(big.Float).SetPrec(prec).SetFloat64(x)
	halvings := 0
	for y.Sign() != 0 && y.MantExp(nil) > -4 { // |y| >= 1/16
		y.Quo(y, big.NewFloat(2))
		halvings++
	}
	sum := new(big.Float).SetPrec(prec).SetInt64(1)
	term := new(big.Float).SetPrec(prec).SetInt64(1)
	for n := int64(1); n < 60; n++ {
		term.Mul(term, y)
		term.Quo(term, new(big.Float).SetPrec(prec).SetInt64(n))
		sum.Add(sum, term)
	}
	for range halvings {
		sum.Mul(sum, sum)
	}
	f, _ := sum.Float64()
	return f
}

// TestExp: exp is e^x correctly rounded over the range predictions meet,
// as the C library's exp is (but in cases too rare to meet), where Go's
// math.Exp may be off by one in the last bit.
func TestExp(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	xs := []float64{0, 1, -1, 0.5, 1e-300, -1e-20, 700, -700, math.Ln2, 88.7, -88.7}
	for range 3000 {
		switch r.IntN(3) {
		case 0:
			xs = append(xs, r.Float64()*2-1)
		case 1:
			xs = append(xs, r.Float64()*60-30)
		default:
			xs = append(xs, r.Float64()*1400-700)
		}
	}
	mathOff := 0
	for _, x := range xs {
		want := bigExp(x)
		if got := exp(x); got != want {
			t.Errorf("exp(%v) = %v, correctly rounded %v", x, got, want)
		}
		if math.Exp(x) != want {
			mathOff++
		}
	}
	t.Logf("math.Exp is off by a bit for %d of %d", mathOff, len(xs))
}

func BenchmarkExp(b *testing.B) {
	x := 0.0
	for b.Loop() {
		x += exp(x*1e-9 - 3)
	}
}
