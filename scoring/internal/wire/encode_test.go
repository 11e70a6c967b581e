package wire_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/internal/tabletest"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring/internal/wire"
)

func TestAppendResponse(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name   string
		body   string
		result func(rows int) *process.Table
		want   string
	}{
		{"numbers are echoed with their digits",
			`{"data":[{"id":12345678901234567890,"p":1.10,"e":1E+2,"z":-0.0}]}`, nil,
			`{"data":[{"id":12345678901234567890,"p":1.10,"e":1E+2,"z":-0.0}]}`},
		{"strings are echoed with their escapes",
			`{"data":[{"s":"caf\u00e9 \"q\" \/ \t"}]}`, nil,
			`{"data":[{"s":"caf\u00e9 \"q\" \/ \t"}]}`},
		{"booleans and nulls are echoed as sent",
			`{"data":[{"b":true,"n":null},{"b":false}]}`, nil,
			`{"data":[{"b":true,"n":null},{"b":false}]}`},
		{"whitespace between tokens is dropped",
			"{ \"data\" : [ { \"a\" : 1 ,\n \"b\" : \"x\" } ] }", nil,
			`{"data":[{"a":1,"b":"x"}]}`},
		{"each row keeps only its keys, in column order",
			`{"data":[{"a":1,"b":2},{"c":3},{"b":4,"a":5,"c":6}]}`, nil,
			`{"data":[{"a":1,"b":2},{"c":3},{"a":5,"b":4,"c":6}]}`},
		{"a key is echoed as it first appeared",
			`{"data":[{"\u0061":1},{"a":2}]}`, nil,
			`{"data":[{"\u0061":1},{"\u0061":2}]}`},
		{"results follow the inputs in the process's order",
			`{"data":[{"x":1},{"x":2}]}`,
			func(n int) *process.Table {
				return tabletest.Must(n,
					process.TextColumn("prediction(y)", []string{"yes", "no"}, nil),
					process.NumberColumn("confidence(yes)", []float64{0.75, 0.25}, nil))
			},
			`{"data":[{"x":1,"prediction(y)":"yes","confidence(yes)":0.75},{"x":2,"prediction(y)":"no","confidence(yes)":0.25}]}`},
		{"missing, NaN and infinite results are null",
			`{"data":[{"x":1},{"x":2},{"x":3},{"x":4}]}`,
			func(n int) *process.Table {
				return tabletest.Must(n,
					process.NumberColumn("r", []float64{nan, inf, -inf, 5}, []bool{false, false, false, false}),
					process.TextColumn("t", []string{"", "b", "c", "d"}, []bool{true, false, false, true}))
			},
			`{"data":[{"x":1,"r":null,"t":null},{"x":2,"r":null,"t":"b"},{"x":3,"r":null,"t":"c"},{"x":4,"r":5,"t":null}]}`},
		{"a result named like an input column replaces it in place, in every row",
			`{"data":[{"a":1,"b":2,"c":3},{"a":4,"c":6}]}`,
			func(n int) *process.Table {
				return tabletest.Must(n,
					process.NumberColumn("new", []float64{7, 8}, nil),
					process.TextColumn("b", []string{"B1", "B2"}, nil))
			},
			`{"data":[{"a":1,"b":"B1","c":3,"new":7},{"a":4,"b":"B2","c":6,"new":8}]}`},
		{"replacements keep the input order whatever the result order",
			`{"data":[{"a":1,"b":2,"c":3}]}`,
			func(n int) *process.Table {
				return tabletest.Must(n,
					process.NumberColumn("c", []float64{30}, nil),
					process.NumberColumn("a", []float64{10}, nil))
			},
			`{"data":[{"a":10,"b":2,"c":30}]}`},
		{"a replaced column of a row that lacked it, before the row's keys",
			`{"data":[{"a":1,"b":2},{"b":3}]}`,
			func(n int) *process.Table {
				return tabletest.Must(n, process.NumberColumn("a", []float64{0, 9}, nil))
			},
			`{"data":[{"a":0,"b":2},{"a":9,"b":3}]}`},
		{"number formatting",
			`{"data":[{},{},{},{},{},{},{}]}`,
			func(n int) *process.Table {
				return tabletest.Must(n, process.NumberColumn("v",
					[]float64{0.1, 100, 1e21, 1e-7, -2.5e-300, 123456789012, math.Copysign(0, -1)}, nil))
			},
			`{"data":[{"v":0.1},{"v":100},{"v":1e+21},{"v":1e-7},{"v":-2.5e-300},{"v":123456789012},{"v":-0}]}`},
		{"text results are escaped, invalid UTF-8 replaced",
			`{"data":[{}]}`,
			func(n int) *process.Table {
				return tabletest.Must(n, process.TextColumn("s \"q\"", []string{"a\"b\\c\n\x01\xffé🙂"}, nil))
			},
			`{"data":[{"s \"q\"":"a\"b\\c\n\u0001\ufffdé🙂"}]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := decode(strings.NewReader(tc.body), wire.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			result := tabletest.Must(req.Table.Rows())
			if tc.result != nil {
				result = tc.result(req.Table.Rows())
			}
			got, err := wire.AppendResponse(nil, req, result)
			if err != nil {
				t.Fatal(err)
			}
			if want := tc.want + "\n"; string(got) != want {
				t.Errorf("response\n got %s\nwant %s", got, want)
			}
			if !json.Valid(got) {
				t.Errorf("response is not valid JSON")
			}
			// The lower bound a job's result is judged by before it runs,
			// whether or not the process declares its result columns.
			var outputs []process.ColumnSpec
			for i := range result.NumColumns() {
				outputs = append(outputs, process.ColumnSpec{Name: result.Column(i).Name, Kind: result.Column(i).Kind})
			}
			names := 0
			for _, c := range outputs {
				names += len(c.Name)
			}
			if min := process.MinResultBytes(req.Table.Rows(), len(outputs), names); min > int64(len(got)) {
				t.Errorf("MinResultBytes = %d, answer %d bytes", min, len(got))
			}
			for _, declared := range [][]process.ColumnSpec{nil, outputs} {
				if min := req.MinResponseBytes(declared); min > int64(len(got)) || min <= 0 {
					t.Errorf("MinResponseBytes(%d columns) = %d, answer %d bytes", len(declared), min, len(got))
				}
			}
		})
	}
}

func TestAppendResponseRefusesBadResults(t *testing.T) {
	req, err := decode(strings.NewReader(`{"data":[{"a":1},{"a":2}]}`), wire.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for name, result := range map[string]*process.Table{
		"nil table":                nil,
		"one row":                  tabletest.Must(1, process.NumberColumn("r", []float64{1}, nil)),
		"three rows":               tabletest.Must(3),
		"zero rows":                tabletest.Must(0),
		"three rows with a column": tabletest.Must(3, process.TextColumn("t", []string{"a", "b", "c"}, nil)),
	} {
		t.Run(name, func(t *testing.T) {
			out, err := wire.AppendResponse([]byte("prefix"), req, result)
			if err == nil {
				t.Fatalf("AppendResponse accepted it: %s", out)
			}
			if string(out) != "prefix" {
				t.Errorf("dst changed to %q on error", out)
			}
		})
	}
}
