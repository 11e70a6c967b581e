package wire_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring/internal/wire"
)

func num(name string, v ...any) colView  { return colView{Name: name, Kind: process.Number, Values: v} }
func text(name string, v ...any) colView { return colView{Name: name, Kind: process.Text, Values: v} }

func TestDecodeAccepts(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []colView
	}{
		{"numbers and text", `{"data":[{"a":1,"b":"x"}]}`,
			[]colView{num("a", 1.0), text("b", "x")}},
		{"union of keys in order of first appearance, absent keys missing",
			`{"data":[{"a":1},{"b":"x"},{"c":true,"a":2,"b":"y"}]}`,
			[]colView{num("a", 1.0, nil, 2.0), text("b", nil, "x", "y"), text("c", nil, nil, "true")}},
		{"null is a missing value", `{"data":[{"a":null},{"a":2}]}`,
			[]colView{num("a", nil, 2.0)}},
		{"booleans are text", `{"data":[{"f":true},{"f":false},{"f":"maybe"}]}`,
			[]colView{text("f", "true", "false", "maybe")}},
		{"a column of nulls only is text", `{"data":[{"a":null},{"a":null}]}`,
			[]colView{text("a", nil, nil)}},
		{"other top-level keys are ignored, an index column is a column",
			`{"schema":{"fields":[{"name":"index","type":"integer"}],"pandas_version":"1.4.0"},"data":[{"index":0,"a":1.5}],"extra":[1,[2,{"x":null}]]}`,
			[]colView{num("index", 0.0), num("a", 1.5)}},
		{"data before other keys", `{"data":[{"a":1}],"schema":{"x":1}}`,
			[]colView{num("a", 1.0)}},
		{"escaped strings are unescaped", `{"data":[{"s":"a\"b\u00e9\n\\"}]}`,
			[]colView{text("s", "a\"b\u00e9\n\\")}},
		{"a key spelled with escapes is the same column", `{"data":[{"\u0061":1},{"a":2}]}`,
			[]colView{num("a", 1.0, 2.0)}},
		{"an escaped data key", `{"d\u0061ta":[{"a":1}]}`,
			[]colView{num("a", 1.0)}},
		{"keys in another order", `{"data":[{"a":1,"b":2},{"b":3,"a":4}]}`,
			[]colView{num("a", 1.0, 4.0), num("b", 2.0, 3.0)}},
		{"large and exact numbers parse as float64", `{"data":[{"id":12345678901234567890,"p":1.10,"e":-2.5E+3,"u":1e-400,"z":-0}]}`,
			[]colView{num("id", 1.2345678901234567e19), num("p", 1.1), num("e", -2500.0), num("u", 0.0), num("z", math.Copysign(0, -1))}},
		{"an empty row", `{"data":[{},{"a":1}]}`,
			[]colView{num("a", nil, 1.0)}},
		{"no rows", `{"data":[]}`, []colView{}},
		{"whitespace anywhere", " \n{ \"data\" : [ { \"a\" : 1 } , { \"a\" : null } ] }\r\n\t",
			[]colView{num("a", 1.0, nil)}},
		{"unicode keys and values", `{"data":[{"größe":"日本","🙂":1}]}`,
			[]colView{text("größe", "日本"), num("🙂", 1.0)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := decode(strings.NewReader(tc.body), wire.Limits{})
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if diff := cmp.Diff(tc.want, viewTable(req.Table)); diff != "" {
				t.Errorf("table (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeRefuses(t *testing.T) {
	tests := []struct {
		name string
		body string
		lim  wire.Limits
		want apiError
	}{
		{"empty body", ``, wire.Limits{}, apiError{Status: 400, Type: "malformed_json"}},
		{"whitespace only", " \n", wire.Limits{}, apiError{Status: 400, Type: "malformed_json"}},
		{"top-level array", `[{"a":1}]`, wire.Limits{}, apiError{Status: 400, Type: "invalid_request"}},
		{"top-level string", `"data"`, wire.Limits{}, apiError{Status: 400, Type: "invalid_request"}},
		{"no data", `{"rows":[]}`, wire.Limits{}, apiError{Status: 400, Type: "invalid_request"}},
		{"data is an object", `{"data":{"a":1}}`, wire.Limits{}, apiError{Status: 400, Type: "invalid_request", Pointer: "/data"}},
		{"data is null", `{"data":null}`, wire.Limits{}, apiError{Status: 400, Type: "invalid_request", Pointer: "/data"}},
		{"a row is a number", `{"data":[{"a":1},2]}`, wire.Limits{}, apiError{Status: 400, Type: "invalid_request", Pointer: "/data/1"}},
		{"a row is an array", `{"data":[[1,2]]}`, wire.Limits{}, apiError{Status: 400, Type: "invalid_request", Pointer: "/data/0"}},
		{"trailing comma in a row", `{"data":[{"a":1,}]}`, wire.Limits{}, apiError{Status: 400, Type: "malformed_json", Pointer: "/data/0"}},
		{"trailing comma in data", `{"data":[{"a":1},]}`, wire.Limits{}, apiError{Status: 400, Type: "malformed_json", Pointer: "/data"}},
		{"trailing comma at the top", `{"data":[],}`, wire.Limits{}, apiError{Status: 400, Type: "malformed_json"}},
		{"line comment", "{\"data\":[ // rows\n]}", wire.Limits{}, apiError{Status: 400, Type: "malformed_json", Pointer: "/data/0"}},
		{"block comment", `{"data":[{"a":1/*one*/}]}`, wire.Limits{}, apiError{Status: 400, Type: "malformed_json", Pointer: "/data/0"}},
		{"NaN", `{"data":[{"a":NaN}]}`, wire.Limits{}, apiError{Status: 400, Type: "malformed_json", Pointer: "/data/0/a"}},
		{"Infinity", `{"data":[{"a":-Infinity}]}`, wire.Limits{}, apiError{Status: 400, Type: "malformed_json", Pointer: "/data/0/a"}},
		{"single quotes", `{'data':[]}`, wire.Limits{}, apiError{Status: 400, Type: "malformed_json"}},
		{"single-quoted value", `{"data":[{"a":'x'}]}`, wire.Limits{}, apiError{Status: 400, Type: "malformed_json", Pointer: "/data/0/a"}},
		{"invalid UTF-8", "{\"data\":[{\"a\":\"\xff\"}]}", wire.Limits{}, apiError{Status: 400, Type: "malformed_json", Pointer: "/data/0/a"}},
		{"lone surrogate escape", `{"data":[{"a":"\ud800"}]}`, wire.Limits{}, apiError{Status: 400, Type: "malformed_json", Pointer: "/data/0/a"}},
		{"leading zero", `{"data":[{"a":01}]}`, wire.Limits{}, apiError{Status: 400, Type: "malformed_json", Pointer: "/data/0"}},
		{"hex number", `{"data":[{"a":0x10}]}`, wire.Limits{}, apiError{Status: 400, Type: "malformed_json", Pointer: "/data/0"}},
		{"unquoted key", `{"data":[{a:1}]}`, wire.Limits{}, apiError{Status: 400, Type: "malformed_json", Pointer: "/data/0"}},
		{"duplicate key in a row", `{"data":[{"a":1,"b":2,"a":3}]}`, wire.Limits{}, apiError{Status: 400, Type: "duplicate_key", Pointer: "/data/0/a"}},
		{"duplicate key spelled differently", `{"data":[{"a":1,"\u0061":3}]}`, wire.Limits{}, apiError{Status: 400, Type: "duplicate_key", Pointer: "/data/0/a"}},
		{"duplicate data", `{"data":[],"data":[]}`, wire.Limits{}, apiError{Status: 400, Type: "duplicate_key", Pointer: "/data"}},
		{"duplicate key in an ignored value", `{"schema":{"x":1,"x":2},"data":[]}`, wire.Limits{}, apiError{Status: 400, Type: "duplicate_key", Pointer: "/schema/x"}},
		{"garbage after the object", `{"data":[]} x`, wire.Limits{}, apiError{Status: 400, Type: "malformed_json"}},
		{"a second object", `{"data":[]}{"data":[]}`, wire.Limits{}, apiError{Status: 400, Type: "malformed_json"}},
		{"a second value", `{"data":[]} 1`, wire.Limits{}, apiError{Status: 400, Type: "malformed_json"}},
		{"truncated", `{"data":[{"a":1}`, wire.Limits{}, apiError{Status: 400, Type: "malformed_json", Pointer: "/data"}},
		{"truncated top level", `{"data":[]`, wire.Limits{}, apiError{Status: 400, Type: "malformed_json"}},
		{"nested object value", `{"data":[{"age":1},{"age":2},{"age":3},{"age":{"years":4}}]}`, wire.Limits{}, apiError{Status: 400, Type: "invalid_value", Pointer: "/data/3/age"}},
		{"nested array value", `{"data":[{"age":[4]}]}`, wire.Limits{}, apiError{Status: 400, Type: "invalid_value", Pointer: "/data/0/age"}},
		{"pointer escapes ~ and /", `{"data":[{"a/b~c":{}}]}`, wire.Limits{}, apiError{Status: 400, Type: "invalid_value", Pointer: "/data/0/a~1b~0c"}},
		{"numbers then text", `{"data":[{"a":1},{"a":null},{"a":"x"}]}`, wire.Limits{}, apiError{Status: 400, Type: "mixed_types", Pointer: "/data/2/a"}},
		{"text then numbers", `{"data":[{"a":"x"},{"a":2}]}`, wire.Limits{}, apiError{Status: 400, Type: "mixed_types", Pointer: "/data/1/a"}},
		{"booleans then numbers", `{"data":[{"a":true},{"a":1}]}`, wire.Limits{}, apiError{Status: 400, Type: "mixed_types", Pointer: "/data/1/a"}},
		{"a number out of range", `{"data":[{"a":1e400}]}`, wire.Limits{}, apiError{Status: 400, Type: "invalid_value", Pointer: "/data/0/a"}},
		{"an empty key", `{"data":[{"":1}]}`, wire.Limits{}, apiError{Status: 400, Type: "invalid_request", Pointer: "/data/0/"}},
		{"body too large", `{"data":[{"a":1}]}`, wire.Limits{MaxBodyBytes: 17}, apiError{Status: 413, Type: "body_too_large"}},
		{"too many rows", `{"data":[{},{},{}]}`, wire.Limits{MaxRows: 2}, apiError{Status: 413, Type: "too_many_rows"}},
		{"too many columns", `{"data":[{"a":1,"b":2},{"c":3}]}`, wire.Limits{MaxColumns: 2}, apiError{Status: 413, Type: "too_many_columns"}},
		{"too many cells", `{"data":[{"a":1},{"b":1},{"c":1}]}`, wire.Limits{MaxCells: 8}, apiError{Status: 413, Type: "too_many_cells"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := decode(strings.NewReader(tc.body), tc.lim)
			if err == nil {
				t.Fatalf("Decode accepted it: %v", viewTable(req.Table))
			}
			var e *problem.Error
			if !errors.As(err, &e) {
				t.Fatalf("Decode error %v is not a *problem.Error", err)
			}
			got := apiError{Status: e.Status, Type: string(e.Code), Pointer: e.Pointer}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("error %q (-want +got):\n%s", e.Message, diff)
			}
			if e.Message == "" || strings.Contains(e.Message, "jsontext") {
				t.Errorf("message %q is not a sentence for the client", e.Message)
			}
		})
	}
}

func TestDecodeLimitsAreInclusive(t *testing.T) {
	body := `{"data":[{"a":1,"b":2},{"a":3,"b":4}]}`
	lim := wire.Limits{MaxBodyBytes: int64(len(body)), MaxRows: 2, MaxColumns: 2, MaxCells: 4}
	req, err := decode(strings.NewReader(body), lim)
	if err != nil {
		t.Fatalf("a request exactly at every limit: %v", err)
	}
	if got := req.Table.Rows(); got != 2 {
		t.Errorf("rows = %d, want 2", got)
	}
}

func TestRequestRaw(t *testing.T) {
	req, err := decode(strings.NewReader(`{"data":[{"b":"x\u0041","a":1.50},{"a":null}]}`), wire.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	type raw struct {
		Text string
		OK   bool
	}
	var got []raw
	for row := range 2 {
		for col := range 2 {
			b, ok := req.Raw(row, col)
			got = append(got, raw{string(b), ok})
		}
	}
	want := []raw{{`"x\u0041"`, true}, {`1.50`, true}, {``, false}, {`null`, true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Raw (-want +got):\n%s", diff)
	}
}

func TestConform(t *testing.T) {
	spec := []process.ColumnSpec{
		{Name: "age", Kind: process.Number, Required: true},
		{Name: "city", Kind: process.Text},
		{Name: "score", Kind: process.Number},
	}
	tests := []struct {
		name string
		body string
		want []colView
		err  apiError
	}{
		{"matching columns, extra columns kept", `{"data":[{"age":30,"city":"Oslo","x":"y"}]}`,
			[]colView{num("age", 30.0), text("city", "Oslo"), text("x", "y")}, apiError{}},
		{"an optional column may be absent", `{"data":[{"age":30}]}`,
			[]colView{num("age", 30.0)}, apiError{}},
		{"a required column absent from one row only", `{"data":[{"age":30},{"city":"Oslo"}]}`,
			[]colView{num("age", 30.0, nil), text("city", nil, "Oslo")}, apiError{}},
		{"a required column of nulls is present", `{"data":[{"age":null}]}`,
			[]colView{num("age", nil)}, apiError{}},
		{"an all-null column takes the declared kind", `{"data":[{"age":1,"score":null},{"age":2}]}`,
			[]colView{num("age", 1.0, 2.0), num("score", nil, nil)}, apiError{}},
		{"a required column absent from every row", `{"data":[{"city":"Oslo"}]}`,
			nil, apiError{Status: 400, Type: "schema_mismatch", Pointer: "/data"}},
		{"text where a number is declared", `{"data":[{"age":null},{"age":"thirty"}]}`,
			nil, apiError{Status: 400, Type: "schema_mismatch", Pointer: "/data/1/age"}},
		{"a number where text is declared", `{"data":[{"age":1,"city":7}]}`,
			nil, apiError{Status: 400, Type: "schema_mismatch", Pointer: "/data/0/city"}},
		{"booleans where a number is declared", `{"data":[{"age":true}]}`,
			nil, apiError{Status: 400, Type: "schema_mismatch", Pointer: "/data/0/age"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := decode(strings.NewReader(tc.body), wire.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			err = req.Conform(spec)
			var got apiError
			var e *problem.Error
			if errors.As(err, &e) {
				got = apiError{Status: e.Status, Type: string(e.Code), Pointer: e.Pointer}
				if !strings.Contains(e.Message, `"age"`) && !strings.Contains(e.Message, `"city"`) {
					t.Errorf("message %q does not name the column", e.Message)
				}
			} else if err != nil {
				t.Fatalf("Conform: %v", err)
			}
			if diff := cmp.Diff(tc.err, got); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if err == nil {
				if diff := cmp.Diff(tc.want, viewTable(req.Table)); diff != "" {
					t.Errorf("table (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestConformNamesEveryMissingColumn: required columns no row has are all
// named, with the columns the rows have instead and, for a likely typo,
// the name meant.
func TestConformNamesEveryMissingColumn(t *testing.T) {
	spec := []process.ColumnSpec{
		{Name: "mean radius", Kind: process.Number, Required: true},
		{Name: "mean_texture", Kind: process.Number, Required: true},
		{Name: "petal_width", Kind: process.Number, Required: true},
		{Name: "age", Kind: process.Number},
	}
	for _, tc := range []struct {
		name, body string
		want       string // the message
	}{
		{"one missing, no other column", `{"data":[{"mean radius":1,"mean_texture":2}]}`,
			`the required column "petal_width" is missing from every row`},
		{"typos of every kind", `{"data":[{"mean_radius":1,"Mean Texture":2,"petal_widht":3,"age":4,"colour":"red"}]}`,
			`the required columns "mean radius", "mean_texture", "petal_width" are missing from every row; ` +
				`the rows have columns it does not read: "mean_radius" (did you mean "mean radius"?), ` +
				`"Mean Texture" (did you mean "mean_texture"?), "petal_widht" (did you mean "petal_width"?), "colour"`},
		{"nothing close", `{"data":[{"x":1}]}`,
			`the required columns "mean radius", "mean_texture", "petal_width" are missing from every row; ` +
				`the rows have columns it does not read: "x"`},
		{"no rows", `{"data":[]}`,
			`the required columns "mean radius", "mean_texture", "petal_width" are missing from every row`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := decode(strings.NewReader(tc.body), wire.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			var e *problem.Error
			if err := req.Conform(spec); !errors.As(err, &e) || e.Code != problem.SchemaMismatch || e.Status != 400 {
				t.Fatalf("Conform: %v, want a 400 schema_mismatch", err)
			}
			if e.Message != tc.want {
				t.Errorf("message\n %s\nwant\n %s", e.Message, tc.want)
			}
		})
	}
}
