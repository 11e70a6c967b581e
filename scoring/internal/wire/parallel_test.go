package wire

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/scorehub/scorehub/registry/process"
)

// testLimits are tight enough that the bodies below pass them.
var testLimits = Limits{MaxBodyBytes: 1 << 20, MaxRows: 400, MaxColumns: 12, MaxCells: 2400}

// defaultLimits are the scoring package's defaults, which the handler
// decodes under unless configured otherwise.
var defaultLimits = Limits{MaxBodyBytes: 32 << 20, MaxRows: 1_000_000, MaxColumns: 10_000, MaxCells: 10_000_000}

// decodeBoth decodes body in one pass with the strict decoder, in one
// pass as a request is (the scanner first), and in n parts of at least
// one byte each. It fails t when the one pass answers otherwise than the
// strict decoder, or the parts accept a body the strict decoder refuses or
// decode it to another table or another echo. It reports whether the parts
// accepted it.
func decodeBoth(t *testing.T, body []byte, n int) bool {
	t.Helper()
	lim := testLimits
	one := new(State)
	one.body.Write(body)
	want, wantErr := one.decodeStrict(lim)
	sameDecoding(t, body, want, wantErr, lim)
	parts := new(State)
	parts.body.Write(body)
	got := parts.decodeParallel(lim, n, 1)
	if got == nil {
		return false
	}
	if wantErr != nil {
		t.Fatalf("%d parts accept %q, which one pass refuses: %v", n, body, wantErr)
	}
	if diff := cmp.Diff(columns(want.Table), columns(got.Table), cmpopts.EquateNaNs()); diff != "" {
		t.Fatalf("%d parts of %q: another table (-one pass +parts):\n%s", n, body, diff)
	}
	sameEcho(t, body, want, got)
	return true
}

func columns(t *process.Table) []process.Column {
	out := make([]process.Column, t.NumColumns())
	for i := range out {
		out[i] = *t.Column(i)
	}
	return out
}

// partsBody is a body of rows rows whose every row is row(i), with extra
// around "data".
func partsBody(before, after string, rows int, row func(i int) string) []byte {
	var b strings.Builder
	b.WriteString("{" + before + `"data":[`)
	for i := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(row(i))
	}
	b.WriteString("]" + after + "}")
	return []byte(b.String())
}

// TestDecodeParallelSameAsOnePass: a body decoded in parts gives the table
// and the echo that one pass gives, whatever the shape of its rows; and a
// body with any fault, anywhere, is left to the one pass (which answers
// it as it always has).
func TestDecodeParallelSameAsOnePass(t *testing.T) {
	accepted := map[string]string{
		"plain": string(partsBody("", "", 120, func(i int) string {
			return fmt.Sprintf(`{"id":%d,"x":%d.5,"city":"c%d","ok":%t}`, 1_000_000_000_000_000_000+i, i, i%7, i%2 == 0)
		})),
		"keys in other orders and new keys late": string(partsBody("", "", 150, func(i int) string {
			switch i % 3 {
			case 0:
				return fmt.Sprintf(`{"a":%d,"b":"t"}`, i)
			case 1:
				return fmt.Sprintf(`{"b":"u","a":%d}`, i)
			}
			if i > 100 {
				return fmt.Sprintf(`{"late%d":1,"a":null}`, i%4)
			}
			return `{}`
		})),
		"nulls first, then values": string(partsBody("", "", 100, func(i int) string {
			if i < 70 {
				return `{"n":null,"s":null}`
			}
			return `{"n":2e3,"s":"x"}`
		})),
		"whitespace everywhere": string(partsBody(" \n", "\n", 80, func(i int) string {
			return fmt.Sprintf("\n  { \"a\" : %d ,\t\"b\" : \"x\" }\n", i)
		})),
		"other keys around data": string(partsBody(`"schema":{"fields":[{"name":"a"}],"data":[1]},`, `,"index":[1,2]`, 60, func(i int) string {
			return fmt.Sprintf(`{"a":%d}`, i)
		})),
		"escaped keys": string(partsBody("", "", 60, func(i int) string {
			return fmt.Sprintf(`{"\u0061":%d,"a\"b":1}`, i)
		})),
	}
	for name, body := range accepted {
		t.Run(name, func(t *testing.T) {
			for _, n := range []int{2, 3, 8, 64} {
				if !decodeBoth(t, []byte(body), n) {
					t.Errorf("%d parts refused a body one pass accepts", n)
				}
			}
		})
	}

	// A cut may fall inside a string that looks like the end of a row;
	// the part then fails and the body goes to the one pass. Either way
	// the answer is the one pass's.
	tricky := partsBody("", "", 90, func(i int) string {
		return fmt.Sprintf(`{"t":"},{\"a\":%d},{","u":"\\\\","v":"\u00e9\n"}`, i)
	})
	// So may a cut after "data", among rows of another array: the part
	// before it must still end exactly where its stretch does.
	after := partsBody("", `,"x":[`+strings.Repeat(`{"b":1},`, 200)+`{"b":2}]`, 40, func(i int) string {
		return fmt.Sprintf(`{"a":%d}`, i)
	})
	for n := 2; n < 70; n++ {
		decodeBoth(t, tricky, n)
		decodeBoth(t, after, n)
	}

	row := func(i int) string { return fmt.Sprintf(`{"a":%d,"b":"x"}`, i) }
	refused := map[string][]byte{
		"mixed kinds across parts": partsBody("", "", 100, func(i int) string {
			if i == 90 {
				return `{"a":"text"}`
			}
			return row(i)
		}),
		"too many rows":         partsBody("", "", testLimits.MaxRows+1, row),
		"too many columns":      partsBody("", "", 100, func(i int) string { return fmt.Sprintf(`{"c%d":1}`, i%20) }),
		"a trailing comma":      []byte(strings.Replace(string(partsBody("", "", 100, row)), "]}", ",]}", 1)),
		"duplicate data":        partsBody("", `,"data":[]`, 100, row),
		"trailing garbage":      append(partsBody("", "", 100, row), " x"...),
		"a comment in a row":    []byte(strings.Replace(string(partsBody("", "", 100, row)), `{"a":50,`, `{/**/"a":50,`, 1)),
		"a row not an object":   []byte(strings.Replace(string(partsBody("", "", 100, row)), `{"a":60,"b":"x"}`, `[1]`, 1)),
		"a nested value":        []byte(strings.Replace(string(partsBody("", "", 100, row)), `{"a":70,"b":"x"}`, `{"a":{},"b":"x"}`, 1)),
		"a duplicate key":       []byte(strings.Replace(string(partsBody("", "", 100, row)), `{"a":80,"b":"x"}`, `{"a":80,"a":1}`, 1)),
		"unterminated":          partsBody("", "", 100, row)[:900],
		"data not closed":       []byte(strings.TrimSuffix(string(partsBody("", "", 100, row)), "]}") + "}"),
		"an empty key":          []byte(strings.Replace(string(partsBody("", "", 100, row)), `"a":90,`, `"":90,`, 1)),
		"an invalid number":     []byte(strings.Replace(string(partsBody("", "", 100, row)), `"a":40,`, `"a":040,`, 1)),
		"a bad escape":          []byte(strings.Replace(string(partsBody("", "", 100, row)), `"b":"x"}`, `"b":"\x"}`, 1)),
		"too many cells":        partsBody("", "", 300, func(i int) string { return fmt.Sprintf(`{"a":%d,"b":1,"c":2,"d":3,"e":4,"f":5,"g":6,"h":7,"i":8}`, i) }),
		"a number out of range": []byte(strings.Replace(string(partsBody("", "", 100, row)), `"a":30,`, `"a":1e999,`, 1)),
	}
	for name, body := range refused {
		t.Run(name, func(t *testing.T) {
			for _, n := range []int{2, 3, 8, 64} {
				if decodeBoth(t, body, n) {
					t.Errorf("%d parts accepted it", n)
				}
			}
		})
	}
}

// TestDecodeParallelCorpus: every body of the decoding fuzz corpus, cut
// into parts in every way, decodes as it does in one pass or is left to
// it.
func TestDecodeParallelCorpus(t *testing.T) {
	for _, f := range corpusFiles(t) {
		body := corpusBytes(t, f)
		for n := 2; n <= 16; n++ {
			decodeBoth(t, body, n)
		}
	}
}

// corpusFiles returns the files of the package's fuzz corpora.
func corpusFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "fuzz", "*", "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	return files
}

// corpusBytes reads the one []byte value of a fuzz corpus file.
func corpusBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, v, ok := strings.Cut(string(b), "\n")
	v = strings.TrimSpace(v)
	if !ok || !strings.HasPrefix(v, "[]byte(") || !strings.HasSuffix(v, ")") {
		t.Fatalf("%s: not a []byte corpus entry", path)
	}
	s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(v, "[]byte("), ")"))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return []byte(s)
}

// FuzzDecodeParts checks that a body cut into parts decodes to what one
// pass decodes, or is left to the one pass, for any body and any number
// of parts.
func FuzzDecodeParts(f *testing.F) {
	f.Add([]byte(`{"data":[{"a":1},{"a":2,"b":"x"},{"b":null},{"c":true}]}`), uint8(3))
	f.Add([]byte(`{"schema":{},"data":[{"t":"},{"},{"t":"a\"},{"}], "x":1}`), uint8(2))
	f.Add([]byte(`{"data":[ {"a":1} , {"a":"x"} ]}`), uint8(2))
	f.Fuzz(func(t *testing.T, body []byte, n uint8) {
		decodeBoth(t, body, int(n%32)+2)
	})
}

// TestDecodeParallelKeepsBits: parts keep numbers bit for bit.
func TestDecodeParallelKeepsBits(t *testing.T) {
	body := partsBody("", "", 64, func(i int) string {
		return fmt.Sprintf(`{"x":%s}`, strconv.FormatFloat(math.Float64frombits(0x3ff0000000000000+uint64(i)*0x9e3779b97f4a7c), 'g', -1, 64))
	})
	if !decodeBoth(t, body, 4) {
		t.Fatal("4 parts refused a body one pass accepts")
	}
}
