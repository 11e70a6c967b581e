package wire

import (
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"

	"github.com/scorehub/scorehub/internal/testutil"
)

// scanNumber must give exactly what strconv gives, and take the whole
// number.
func TestScanNumberMatchesStrconv(t *testing.T) {
	inputs := []string{
		"0", "-0", "1", "-1", "0.1", "0.2", "0.3", "1.10", "52000.75", "123456789012345", "1234567890123456",
		"999999999999999", "9007199254740993", "12345678901234567890", "0.000000000000000000001",
		"0.0000000000000000000001", "0.00000000000000000000001", "1.7976931348623157e308", "5e-324",
		"1e-400", "-2.5E+3", "3.141592653589793", "0.1000000000000000055511151231257827",
		"100000000000000000000000", "0.30000000000000004", "9007199254740992", "9007199254740993e3",
		"1e22", "1e23", "4.5e22", "123456789e-22", "123456789e-23", "-0e5", "0e-400", "1E+0", "9999999999999999999",
		"99999999999999999999", "1.2345678901234567e-300", "2.2250738585072011e-308", "1e400", "-1e400",
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		digits := strconv.FormatUint(r.Uint64N(1_000_000_000_000_000), 10)
		cut := r.IntN(len(digits) + 1)
		s := digits
		if cut < len(digits) && cut > 0 {
			s = digits[:cut] + "." + digits[cut:]
		}
		if r.IntN(2) == 0 {
			s = "-" + s
		}
		e := strconv.Itoa(r.IntN(60) - 30)
		inputs = append(inputs, s, "0."+digits, "0.0000"+digits, s+"e"+e, s+"E+"+e)
	}
	for _, s := range inputs {
		got, end, ok := scanNumber([]byte(s+","), 0)
		want, werr := strconv.ParseFloat(s, 64)
		if math.Float64bits(got) != math.Float64bits(want) && ok || ok != (werr == nil) || ok && end != len(s) {
			t.Errorf("scanNumber(%s) = %v, %d, %v; strconv says %v, %v", s, got, end, ok, want, werr)
		}
	}
	for _, s := range []string{"", "-", "+1", "01", "1.", ".5", "1e", "1e+", "-a", "1.e5", "0x1", "Infinity", "NaN"} {
		if _, end, ok := scanNumber([]byte(s+"}"), 0); ok && end == len(s) {
			t.Errorf("scanNumber took %q, which is not a JSON number", s)
		}
	}
}

// appendFloat must write exactly what strconv writes in JavaScript's form,
// on edge values, on decimals of every length and magnitude, on decimals
// with few digits (the common results: 0.25, 5.1, 3) and on random bit
// patterns.
func TestAppendFloatMatchesShortest(t *testing.T) {
	values := []float64{
		0, math.Copysign(0, -1), 1, -1, 0.1, 0.2, 0.1 + 0.2, 0.3, 0.25, 5.1, 1.5e-6, 1e-6, 9.99999e-7, 1e-7,
		0.000001, 0.0000015, 0.00012, 0.0001, 0.00001, 1e14, 1e15, 1e15 - 1, 1e15 + 1, 999999999999999.9,
		99999999999999.99, 9999999999999.999, 1 << 50, 1 << 52, 1 << 53, 1<<53 + 2, 1e20, 1e21, 1e22,
		123456789012345, 12345678901234.5, 1234567890123.45, 0.123456789012345, math.MaxFloat64,
		math.SmallestNonzeroFloat64, math.Inf(1), math.Inf(-1), math.NaN(), 2.675, 1.005, 0.9999999999999999,
		math.Nextafter(1, 0), math.Nextafter(1, 2), math.Nextafter(0.1, 1), math.Nextafter(0.1, 0),
		math.Nextafter(1e15, 0), math.Nextafter(1e-6, 0), math.Nextafter(1e-6, 1),
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range scaled(300000) {
		// A decimal with up to 17 significant digits and up to 6 decimals,
		// at every magnitude.
		m := float64(r.Uint64N(1 << r.IntN(57)))
		v := m / math.Pow10(r.IntN(7)) * math.Pow10(r.IntN(25)-12)
		if r.IntN(2) == 0 {
			v = -v
		}
		values = append(values, v, math.Nextafter(v, 0), math.Nextafter(v, math.Inf(1)),
			math.Float64frombits(r.Uint64()))
	}
	// Up to 15 significant digits and 4 decimals.
	for range scaled(100000) {
		k := r.IntN(5)
		m := r.Int64N(int64(math.Pow10(r.IntN(16-k) + k)))
		values = append(values, float64(m)/math.Pow10(k))
	}
	for _, v := range values {
		want := string(appendFloatStrconv(nil, v))
		if got := string(appendFloat([]byte("x"), v)); got != "x"+want {
			t.Errorf("appendFloat(%b) = %s, strconv writes %s", v, got[1:], want)
		}
	}
}

// FuzzAppendFloat checks appendFloat byte for byte against strconv on
// values the fuzzer finds.
func FuzzAppendFloat(f *testing.F) {
	for _, v := range []float64{0, 0.25, 5.1, 1e-6, 1e15, 0.1 + 0.2, 123.456, 5e-324, 1e21, 1<<53 + 2, 0.9999999999999999} {
		f.Add(math.Float64bits(v))
	}
	f.Fuzz(func(t *testing.T, bits uint64) {
		v := math.Float64frombits(bits)
		want := string(appendFloatStrconv(nil, v))
		if got := string(appendFloat([]byte("x"), v)); got != "x"+want {
			t.Errorf("appendFloat(%b) = %s, strconv writes %s", v, got[1:], want)
		}
	})
}

// BenchmarkAppendFloat compares appendFloat with the strconv formatting it
// replaced on the results a process returns: probabilities with 17 digits,
// tiny values in exponent form, integers, and values with two decimals or
// quarters. Compare with benchstat -col /impl.
func BenchmarkAppendFloat(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	sets := []struct {
		name string
		gen  func() float64
	}{
		{"probabilities", r.Float64},
		{"tiny", func() float64 { return math.Ldexp(r.Float64(), -20-r.IntN(100)) }},
		{"integers", func() float64 { return float64(r.IntN(1_000_000)) }},
		{"cents", func() float64 { return float64(r.IntN(1_000_000)) / 100 }},
		{"quarters", func() float64 { return float64(18+r.IntN(60)) * 0.25 }},
	}
	for _, set := range sets {
		values := make([]float64, 1024)
		for i := range values {
			values[i] = set.gen()
		}
		for _, fn := range []struct {
			name string
			f    func([]byte, float64) []byte
		}{{"appendFloat", appendFloat}, {"strconv", appendFloatStrconv}} {
			b.Run("values="+set.name+"/impl="+fn.name, func(b *testing.B) {
				buf := make([]byte, 0, 64)
				i := 0
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				report := testutil.MeasureCPU(b, testutil.ThreadCPU)
				for b.Loop() {
					buf = fn.f(buf[:0], values[i&1023])
					i++
				}
				report()
			})
		}
	}
}

// The scanner reads the short numbers of a row itself, and must read
// every number as strconv does and refuse what JSON refuses, as
// scanNumber does.
func TestScanRowNumbersMatchStrconv(t *testing.T) {
	lim := defaultLimits
	inputs := []string{"0", "-0", "0.0", "-0.0", "5.1", "-5.1", "1.10", "52000.75", "123456789012345",
		"12345678901234.5", "1234567890123456", "0.000000000000001", "999999999999999", "9007199254740993",
		"1e5", "1E-5", "-2.5e+3", "0.1e1"}
	r := rand.New(rand.NewPCG(11, 12))
	for range scaled(20000) {
		digits := strconv.FormatUint(1e17+r.Uint64N(9e17), 10)[:1+r.IntN(18)]
		s := digits
		if cut := r.IntN(len(digits)); cut > 0 {
			s = digits[:cut] + "." + digits[cut:]
		}
		if r.IntN(2) == 0 {
			s = "-" + s
		}
		inputs = append(inputs, s, "0."+digits)
	}
	for _, s := range inputs {
		st := new(State)
		st.body.WriteString(`{"data":[{"x":` + s + `},{"x":` + s + `}]}`)
		want, werr := strconv.ParseFloat(s, 64)
		if !st.scanDoc(lim) || werr != nil {
			t.Errorf("the scanner refused %s (strconv: %v)", s, werr)
			continue
		}
		for row := range 2 {
			if got, _ := st.req.Table.Column(0).Number(row); math.Float64bits(got) != math.Float64bits(want) {
				t.Errorf("the scanner read %s as %v, strconv as %v", s, got, want)
			}
		}
	}
	for _, s := range []string{"-", "+1", "01", "-01", "00.5", "1.", "-.5", ".5", "1e", "1.e5", "0x1", "1..2", "--1"} {
		st := new(State)
		st.body.WriteString(`{"data":[{"x":` + s + `}]}`)
		if st.scanDoc(lim) {
			t.Errorf("the scanner took %s, which is not a JSON number", s)
		}
	}
}
