package scoring

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// parseNumber's fast path must give exactly what strconv gives.
func TestParseNumberMatchesStrconv(t *testing.T) {
	inputs := []string{
		"0", "-0", "1", "-1", "0.1", "0.2", "0.3", "1.10", "52000.75", "123456789012345", "1234567890123456",
		"999999999999999", "9007199254740993", "12345678901234567890", "0.000000000000000000001",
		"0.0000000000000000000001", "0.00000000000000000000001", "1.7976931348623157e308", "5e-324",
		"1e-400", "-2.5E+3", "3.141592653589793", "0.1000000000000000055511151231257827",
		"100000000000000000000000", "0.30000000000000004",
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
		inputs = append(inputs, s, "0."+digits, "0.0000"+digits)
	}
	for _, s := range inputs {
		got, gerr := parseNumber([]byte(s))
		want, werr := strconv.ParseFloat(s, 64)
		if math.Float64bits(got) != math.Float64bits(want) || (gerr == nil) != (werr == nil) {
			t.Errorf("parseNumber(%s) = %v, %v; strconv says %v, %v", s, got, gerr, want, werr)
		}
	}
}
