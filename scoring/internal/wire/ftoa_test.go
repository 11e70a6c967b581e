package wire

import (
	"flag"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"
)

var ftoaRandom = flag.Int("ftoa.random", 0,
	"random float64 bit patterns TestShortestMatchesStrconv compares with strconv (0: 2,000,000, or 200,000 under -race)")

// scaled is n, or a tenth of it under the race detector, which slows the
// comparisons tenfold and finds nothing in them.
func scaled(n int) int {
	if raceEnabled {
		return n / 10
	}
	return n
}

// appendFloatStrconv is what appendFloat must write: strconv's
// shortest formatting in JavaScript's form, as encoding/json writes it.
func appendFloatStrconv(b []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// checkShortest reports where appendFloat and strconv differ on v,
// both signs, and counts the failures so a broken build does not flood
// the log.
func checkShortest(t *testing.T, v float64, fails *int) {
	t.Helper()
	var got, want [40]byte
	for _, x := range [2]float64{v, -v} {
		g := appendFloat(got[:0], x)
		w := appendFloatStrconv(want[:0], x)
		if string(g) != string(w) {
			if *fails++; *fails <= 20 {
				t.Errorf("appendFloat(%#x) = %s, strconv writes %s", math.Float64bits(x), g, w)
			}
		}
	}
}

// TestShortestMatchesStrconv compares the formatter with strconv on the
// values where a digit generator goes wrong if it does: both sides of
// every binary exponent, every power of two and of ten, subnormals, the
// switch to exponent form, integers near 2^53, decimals with 15 to 17
// digits, and random bit patterns (-ftoa.random of them; for a long run,
// go test -run TestShortestMatchesStrconv -ftoa.random 1000000000).
func TestShortestMatchesStrconv(t *testing.T) {
	fails := 0
	check := func(v float64) { checkShortest(t, v, &fails) }
	r := rand.New(rand.NewPCG(7, 8))

	t.Run("exponents", func(t *testing.T) {
		// Every biased exponent, at the ends of its significands (the
		// interval below a power of two is narrower) and in between.
		const mask = 1<<52 - 1
		for be := uint64(0); be < 0x7ff; be++ {
			for _, frac := range []uint64{0, 1, 2, 3, mask, mask - 1, mask / 2, mask/2 + 1} {
				check(math.Float64frombits(be<<52 | frac))
			}
			for range scaled(60) {
				check(math.Float64frombits(be<<52 | r.Uint64()&mask))
			}
		}
	})
	t.Run("powers", func(t *testing.T) {
		for e := -1074; e <= 1023; e++ {
			v := math.Ldexp(1, e)
			check(v)
			check(math.Nextafter(v, 0))
			check(math.Nextafter(v, math.Inf(1)))
		}
		for e := -323; e <= 308; e++ {
			v, err := strconv.ParseFloat("1e"+strconv.Itoa(e), 64)
			if err != nil {
				t.Fatal(err)
			}
			check(v)
			check(math.Nextafter(v, 0))
			check(math.Nextafter(v, math.Inf(1)))
			for _, d := range []string{"2", "5", "9", "1.5", "9.999999999999999", "9.9999999999999999"} {
				if v, err := strconv.ParseFloat(d+"e"+strconv.Itoa(e), 64); err == nil {
					check(v)
				}
			}
		}
	})
	t.Run("subnormals and limits", func(t *testing.T) {
		for u := uint64(1); u <= uint64(scaled(100_000)); u++ {
			check(math.Float64frombits(u))
			check(math.Float64frombits(1<<52 - u))
		}
		check(math.SmallestNonzeroFloat64)
		check(math.MaxFloat64)
		check(0x1p-1022)
		check(math.Nextafter(0x1p-1022, 0))
	})
	t.Run("exponent form boundaries", func(t *testing.T) {
		for _, v := range []float64{1e-6, 1e-7, 1e21, 1e20, 9.999999999999999e-7, 1.0000000000000001e-6,
			9.999999999999999e20, 1.0000000000000001e21, 999999999999999999999, 0.000001234} {
			check(v)
			w := v
			for range 1000 {
				w = math.Nextafter(w, 0)
				check(w)
			}
			w = v
			for range 1000 {
				w = math.Nextafter(w, math.Inf(1))
				check(w)
			}
		}
	})
	t.Run("integers", func(t *testing.T) {
		for _, c := range []float64{1 << 53, 1 << 52, 1 << 54, 1e15, 1e16, 1e17} {
			for d := -2000.0; d <= 2000; d++ {
				check(c + d)
			}
		}
		for range scaled(100_000) {
			check(float64(r.Uint64N(1 << 53)))
			check(float64(r.Uint64()))
		}
	})
	t.Run("decimals", func(t *testing.T) {
		// 15, 16 and 17 significant digits at every magnitude: the
		// lengths where the shortest is near the limit of float64.
		for range scaled(200_000) {
			n := 15 + r.IntN(3)
			d := strconv.FormatUint(r.Uint64N(9e16)+1e16, 10)[:n]
			v, err := strconv.ParseFloat(d[:1]+"."+d[1:]+"e"+strconv.Itoa(r.IntN(630)-323), 64)
			if err != nil && v != 0 && !math.IsInf(v, 0) {
				t.Fatal(err)
			}
			if !math.IsInf(v, 0) {
				check(v)
			}
		}
		for range scaled(200_000) {
			check(r.Float64())
		}
	})
	t.Run("random bits", func(t *testing.T) {
		start := time.Now()
		total := *ftoaRandom
		if total == 0 {
			total = scaled(2_000_000)
		}
		n := 0
		for range total {
			v := math.Float64frombits(r.Uint64())
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			check(v)
			n++
		}
		t.Logf("%d random values in %v", n, time.Since(start))
	})
}

// The integer logarithms shortestDecimal computes by multiplication must
// be exact over the exponents of float64; math/big says what they are.
func TestFloorLogs(t *testing.T) {
	// floorLog10 returns ⌊log10(num/den)⌋ for num/den > 0.
	floorLog10 := func(num, den *big.Int) int {
		ten := big.NewInt(10)
		e := 0
		n, d := new(big.Int).Set(num), new(big.Int).Set(den)
		for n.Cmp(d) < 0 {
			n.Mul(n, ten)
			e--
		}
		for {
			d10 := new(big.Int).Mul(d, ten)
			if n.Cmp(d10) < 0 {
				return e
			}
			d = d10
			e++
		}
	}
	pow2 := func(q int) (num, den *big.Int) {
		if q >= 0 {
			return new(big.Int).Lsh(big.NewInt(1), uint(q)), big.NewInt(1)
		}
		return big.NewInt(1), new(big.Int).Lsh(big.NewInt(1), uint(-q))
	}
	for q := qMin; q <= 0x7fe-expShift; q++ {
		num, den := pow2(q)
		if got, want := floorLog10Pow2(q), floorLog10(num, den); got != want {
			t.Errorf("floorLog10Pow2(%d) = %d, want %d", q, got, want)
		}
		num.Mul(num, big.NewInt(3))
		den.Mul(den, big.NewInt(4))
		if got, want := floorLog10ThreeQuartersPow2(q), floorLog10(num, den); got != want {
			t.Errorf("floorLog10ThreeQuartersPow2(%d) = %d, want %d", q, got, want)
		}
	}
	for e := pow10Min; e <= pow10Max; e++ {
		p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(max(e, -e))), nil)
		want := p.BitLen() - 1 // ⌊log2(10^e)⌋ for e ≥ 0
		if e < 0 {
			want = -p.BitLen() // 10^-e is never a power of two
		}
		if got := floorLog2Pow10(e); got != want {
			t.Errorf("floorLog2Pow10(%d) = %d, want %d", e, got, want)
		}
	}
}

// The formatter writes into the slice it is given and allocates nothing.
func TestShortestAllocates(t *testing.T) {
	buf := make([]byte, 0, 64)
	values := []float64{0.1 + 0.2, 1e-20, 123456789, 1.5e300, 5e-324, -0.25}
	if n := testing.AllocsPerRun(100, func() {
		for _, v := range values {
			buf = appendFloat(buf[:0], v)
		}
	}); n != 0 {
		t.Errorf("appendFloat allocates %v times per %d values", n, len(values))
	}
}

// digits8 must split every number below 10^8 into its digits: its
// reciprocals are exact only for the numbers each step can hold.
func TestDigits8(t *testing.T) {
	step := uint32(1)
	if raceEnabled {
		step = 7
	}
	for v := uint32(0); v < 1e8; v += step {
		got := digits8(v)
		want := v
		for k := 7; k >= 0; k-- {
			if d := uint32(got >> (8 * k) & 0xff); d != want%10 {
				t.Fatalf("digits8(%d) = %#x: digit %d is %d, want %d", v, got, k, d, want%10)
			}
			want /= 10
		}
	}
}
