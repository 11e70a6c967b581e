package wire

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/scorehub/scorehub/internal/demo"
	"github.com/scorehub/scorehub/internal/tabletest"
	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/registry/process"
)

// sameDecoding fails t when body, decoded as a request is, is answered
// otherwise than want and wantErr, the strict decoder's answer.
func sameDecoding(t *testing.T, body []byte, want *Request, wantErr error, lim Limits) {
	t.Helper()
	st := new(State)
	st.body.Write(body)
	got, err := st.decodeDoc(lim)
	if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
		t.Fatalf("%q: decoded with error %v, the strict decoder's is %v", body, err, wantErr)
	}
	if err != nil {
		return
	}
	sameRequest(t, body, want, got)
}

// sameRequest fails t when got is not want's table and echo.
func sameRequest(t *testing.T, body []byte, want, got *Request) {
	t.Helper()
	if diff := cmp.Diff(columns(want.Table), columns(got.Table), cmpopts.EquateNaNs()); diff != "" {
		t.Fatalf("%q: another table (-strict +scanned):\n%s", body, diff)
	}
	sameEcho(t, body, want, got)
}

// sameEcho fails t when got's answer, with or without a result column
// added, is not want's.
func sameEcho(t *testing.T, body []byte, want, got *Request) {
	t.Helper()
	rows := want.Table.Rows()
	scores := make([]float64, rows)
	for i := range scores {
		scores[i] = float64(i) / 4
	}
	results := []*process.Table{
		tabletest.Must(rows),
		tabletest.Must(rows, process.NumberColumn("score", scores, nil)),
	}
	if want.Table.NumColumns() > 0 {
		// A result in the place of an input column: every row echoed
		// from its cells.
		results = append(results, tabletest.Must(rows, process.NumberColumn(want.Table.Column(0).Name, scores, nil)))
	}
	for row := range rows {
		for col := range want.Table.NumColumns() {
			w, wok := want.Raw(row, col)
			g, gok := got.Raw(row, col)
			if wok != gok || !bytes.Equal(w, g) {
				t.Fatalf("%q: row %d column %d sent as %q (%v), want %q (%v)", body, row, col, g, gok, w, wok)
			}
		}
	}
	for _, result := range results {
		a, b := want.Encoder(Result{Whole: result}).Append(nil), got.Encoder(Result{Whole: result}).Append(nil)
		if !bytes.Equal(a, b) {
			t.Fatalf("%q: echo\n%s\nwant\n%s", body, b, a)
		}
	}
}

// scanBoth decodes body with the strict decoder and with the scanner
// alone, fails t when the scanner accepts what the strict decoder refuses
// or decodes it otherwise, and reports whether the scanner accepted it.
func scanBoth(t *testing.T, body []byte, lim Limits) bool {
	t.Helper()
	strict := new(State)
	strict.body.Write(body)
	want, wantErr := strict.decodeStrict(lim)
	scan := new(State)
	scan.body.Write(body)
	if !scan.scanDoc(lim) {
		return false
	}
	if wantErr != nil {
		t.Fatalf("the scanner accepts %q, which the strict decoder refuses: %v", body, wantErr)
	}
	sameRequest(t, body, want, &scan.req)
	return true
}

// TestScanSameAsStrict: the scanner decodes the bodies clients send, of
// every shape of value, to what the strict decoder makes of them, and
// leaves every fault, and what it does not read itself, to the strict
// decoder.
func TestScanSameAsStrict(t *testing.T) {
	lim := testLimits
	row := func(i int) string { return fmt.Sprintf(`{"a":%d,"b":"x"}`, i) }
	accepted := map[string]string{
		"pandas":                    `{"data":[{"id":1,"x":5.1,"city":"S\u00e3o Paulo","ok":true,"n":null},{"id":2,"x":-0.25e-3,"city":"Oslo","ok":false,"n":null}]}`,
		"empty":                     `{"data":[]}`,
		"empty rows":                `{"data":[{},{}]}`,
		"whitespace":                " \t\n{ \"data\" : [ { \"a\" : 1 , \"b\" : \"x\" } , { } ] } \r\n",
		"text":                      `{"data":[{"t":"é中😀","u":"\"\\\/\b\f\n\r\t\u0000\ud83d\ude00"}]}`,
		"escaped keys":              `{"data":[{"\u0061":1,"a\"b":2},{"a":3,"a\"b":4}]}`,
		"keys in any order":         `{"data":[{"a":1,"b":2},{"b":3,"a":4},{"c":5},{"b":6,"c":7,"a":8}]}`,
		"numbers":                   `{"data":[{"n":0},{"n":-0},{"n":1E+2},{"n":1e-400},{"n":9007199254740993},{"n":123456789012345678901234567890},{"n":0.1e22},{"n":4.5e-22}]}`,
		"nulls, then kinds":         `{"data":[{"a":null,"b":null},{"a":1,"b":"x"},{"a":null}]}`,
		"many rows":                 string(partsBody("", "", 300, row)),
		"pandas' table orientation": `{"schema":{"fields":[{"name":"index","type":"integer"},{"name":"x","type":"number"}],"primaryKey":["index"],"pandas_version":"1.4.0"},"data":[{"index":0,"x":1.5},{"index":1,"x":null}]}`,
		"keys after data":           `{"data":[{"a":1}],"index":[0],"s":"t","n":-1e5,"t":true,"f":false,"z":null,"o":{}}`,
		"data as a key elsewhere":   `{"x":{"data":[1]},"data":[{"a":1}],"y":[{"data":{}}]}`,
		"spaces after data":         "{\"data\":[{\"a\":1}] ,\"x\":[ 1 ,2 ] }",
	}
	for name, body := range accepted {
		if !scanBoth(t, []byte(body), lim) {
			t.Errorf("%s: the scanner gave up on %s", name, body)
		}
	}
	leftToStrict := map[string]string{
		"duplicate data":      `{"data":[],"data":[]}`,
		"a key twice":         `{"x":1,"data":[],"x":2}`,
		"a key twice, nested": `{"schema":{"a":1,"a":2},"data":[]}`,
		"an invalid value":    `{"schema":{"a":01},"data":[]}`,
		"an invalid literal":  `{"data":[],"x":nul}`,
		"a bad string":        "{\"x\":\"\xff\",\"data\":[]}",
		"unbalanced":          `{"schema":{"a":[1}],"data":[]}`,
		"no data":             `{"schema":{}}`,
		"an escaped key":      `{"d\u0061ta":[{"a":1}]}`,
		"an empty object":     `{}`,
		"not an object":       `[{"a":1}]`,
		"empty":               ``,
		"data not an array":   `{"data":{}}`,
		"a row not an object": `{"data":[1]}`,
		"a nested value":      `{"data":[{"a":[1]}]}`,
		"a duplicate key":     `{"data":[{"a":1,"a":2}]}`,
		"mixed kinds":         `{"data":[{"a":1},{"a":"x"}]}`,
		"an empty key":        `{"data":[{"":1}]}`,
		"trailing comma":      `{"data":[{"a":1},]}`,
		"trailing comma, row": `{"data":[{"a":1,}]}`,
		"data after":          `{"data":[]} {}`,
		"unterminated":        `{"data":[{"a":1}`,
		"leading zero":        `{"data":[{"a":01}]}`,
		"bare dot":            `{"data":[{"a":1.}]}`,
		"plus":                `{"data":[{"a":+1}]}`,
		"out of range":        `{"data":[{"a":1e999}]}`,
		"NaN":                 `{"data":[{"a":NaN}]}`,
		"single quotes":       `{"data":[{'a':1}]}`,
		"a comment":           `{"data":[/**/{"a":1}]}`,
		"a control character": "{\"data\":[{\"a\":\"x\ty\"}]}",
		"invalid UTF-8":       "{\"data\":[{\"a\":\"\xff\"}]}",
		"invalid UTF-8 key":   "{\"data\":[{\"\xc3\":1}]}",
		"a surrogate":         "{\"data\":[{\"a\":\"\xed\xa0\x80\"}]}",
		"a lone surrogate":    `{"data":[{"a":"\ud800"}]}`,
		"a bad escape":        `{"data":[{"a":"\x"}]}`,
		"tru":                 `{"data":[{"a":tru}]}`,
		"truex":               `{"data":[{"a":truex}]}`,
		"too many rows":       string(partsBody("", "", testLimits.MaxRows+1, row)),
		"too many columns":    string(partsBody("", "", 20, func(i int) string { return fmt.Sprintf(`{"c%d":1}`, i) })),
		"too many cells":      string(partsBody("", "", 300, func(i int) string { return fmt.Sprintf(`{"a":%d,"b":1,"c":2,"d":3,"e":4,"f":5,"g":6,"h":7,"i":8}`, i) })),
	}
	for name, body := range leftToStrict {
		if scanBoth(t, []byte(body), lim) {
			t.Errorf("%s: the scanner accepted %q", name, body)
		}
		strict := new(State)
		strict.body.Write([]byte(body))
		want, wantErr := strict.decodeStrict(lim)
		sameDecoding(t, []byte(body), want, wantErr, lim)
	}
	// Every prefix of a body is refused by both, or decoded alike.
	body := accepted["pandas"]
	for i := range len(body) {
		scanBoth(t, []byte(body[:i]), lim)
		scanBoth(t, []byte(strings.Replace(body, body[i:i+1], "", 1)), lim)
	}
}

// TestScanCorpus: every body of the decoding fuzz corpus is decoded by
// the scanner as by the strict decoder, or left to it.
func TestScanCorpus(t *testing.T) {
	lim := testLimits
	for _, f := range corpusFiles(t) {
		body := corpusBytes(t, f)
		scanBoth(t, body, lim)
	}
}

// FuzzScan checks that the scanner decodes any body as the strict decoder
// does, or leaves it to it.
func FuzzScan(f *testing.F) {
	f.Add([]byte(`{"data":[{"a":1,"b":"x"},{"b":"S\u00e3o","a":-2.5e3},{"c":true,"d":null}]}`))
	f.Add([]byte(`{"data":[{"a":1},{"a":"x"}]}`))
	f.Add([]byte(" {\"data\" :[ {\"\\u0061\":0.1e22 } ] }\n"))
	lim := Limits{MaxBodyBytes: 1 << 16, MaxRows: 64, MaxColumns: 16, MaxCells: 256}
	f.Fuzz(func(t *testing.T, body []byte) {
		scanBoth(t, body, lim)
	})
}

// BenchmarkScanDoc decodes a request of the iris demo's four
// measurements, of one row and of 10,000, in one pass, with a decode state
// reused as the handler reuses its pooled ones: what the scanner costs per
// request.
func BenchmarkScanDoc(b *testing.B) {
	lim := defaultLimits
	for _, n := range []int{1, 10_000} {
		body := demo.IrisRequest(n)
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			st := new(State)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			report := testutil.MeasureCPU(b, testutil.ProcessCPU)
			for b.Loop() {
				st.reset()
				st.body.Write(body)
				req, err := st.decodeDoc(lim)
				if err != nil {
					b.Fatal(err)
				}
				if got := req.Table.Rows(); got != n {
					b.Fatalf("%d rows decoded of %d", got, n)
				}
			}
			report()
		})
	}
}

// keyWords must find a key and its colon exactly where the bytes are
// those, for every length it takes, and take no longer key.
func TestKeyWords(t *testing.T) {
	for n := 0; n <= 20; n++ {
		key := []byte(`"` + strings.Repeat("k", n) + `"`)
		w := keyWordsOf(key)
		if fits := len(key)+1 <= 16; (w.n > 0) != fits {
			t.Errorf("a key of %d bytes: words of %d bytes", len(key), w.n)
			continue
		}
		if w.n == 0 {
			continue
		}
		want := string(key) + ":"
		for _, text := range []string{
			want, want + " 1", string(key) + " :", string(key) + "1", `"` + strings.Repeat("k", n+1) + `":`,
			`"` + strings.Repeat("k", max(n-1, 0)) + `j":`, `'` + want[1:], want[:len(want)-1] + ";",
		} {
			body := []byte(",," + text + strings.Repeat(" ", 16))
			got := w.at(body, 2)
			if want := strings.HasPrefix(text, want); got != want {
				t.Errorf("key %s in %q: found %v, want %v", key, text, got, want)
			}
		}
	}
}
