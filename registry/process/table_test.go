package process_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/internal/tabletest"
	"github.com/scorehub/scorehub/registry/process"
)

func TestNewTableErrors(t *testing.T) {
	num := func(name string, n int) process.Column { return process.NumberColumn(name, make([]float64, n), nil) }
	tests := []struct {
		name string
		rows int
		cols []process.Column
		want string // in the error
	}{
		{"negative rows", -1, nil, "negative row count"},
		{"unnamed column", 1, []process.Column{num("", 1)}, "column 0 has no name"},
		{"repeated name", 1, []process.Column{num("a", 1), process.TextColumn("a", []string{"x"}, nil)}, `column "a" appears twice`},
		{"zero kind", 1, []process.Column{{Name: "a", Numbers: []float64{1}}}, `column "a" has invalid kind`},
		{"number column with texts", 1, []process.Column{{Name: "a", Kind: process.Number, Numbers: []float64{1}, Texts: []string{"x"}}}, "has text values"},
		{"text column with numbers", 1, []process.Column{{Name: "a", Kind: process.Text, Texts: []string{"x"}, Numbers: []float64{1}}}, "has number values"},
		{"short column", 3, []process.Column{num("a", 3), num("b", 2)}, `column "b" has 2 values, want 3`},
		{"long text column", 1, []process.Column{process.TextColumn("t", []string{"x", "y"}, nil)}, `column "t" has 2 values, want 1`},
		{"missing marks of another length", 2, []process.Column{process.NumberColumn("a", []float64{1, 2}, []bool{false})}, "1 missing marks, want 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, err := process.NewTable(tt.rows, tt.cols...)
			if err == nil {
				t.Fatalf("NewTable succeeded with %d rows, %d columns", tab.Rows(), tab.NumColumns())
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "registry: ") {
				t.Errorf("error %q, want registry: ... %q", err, tt.want)
			}
		})
	}
}

func TestTableAccessors(t *testing.T) {
	tab, err := process.NewTable(3,
		process.NumberColumn("age", []float64{41, math.NaN(), 7}, nil),
		process.TextColumn("city", []string{"Oslo", "", "Lima"}, []bool{false, true, false}),
		process.NumberColumn("score", []float64{0.5, 1, 2}, []bool{false, false, true}),
	)
	if err != nil {
		t.Fatal(err)
	}
	if tab.Rows() != 3 || tab.NumColumns() != 3 {
		t.Fatalf("Rows, NumColumns = %d, %d, want 3, 3", tab.Rows(), tab.NumColumns())
	}
	var names []string
	for i := range tab.NumColumns() {
		names = append(names, tab.Column(i).Name)
	}
	if diff := cmp.Diff([]string{"age", "city", "score"}, names); diff != "" {
		t.Errorf("column order (-want +got):\n%s", diff)
	}
	if _, ok := tab.Lookup("nope"); ok {
		t.Error("Lookup found a column that does not exist")
	}

	type cell struct {
		Value   any
		Present bool
	}
	read := func(r process.Row, name string) cell {
		v, ok := r.Value(name)
		return cell{v, ok}
	}
	var got [][]cell
	for i := range tab.Rows() {
		r := tab.Row(i)
		if r.Index() != i {
			t.Errorf("Row(%d).Index() = %d", i, r.Index())
		}
		got = append(got, []cell{read(r, "age"), read(r, "city"), read(r, "score"), read(r, "nope")})
	}
	want := [][]cell{
		{{41.0, true}, {"Oslo", true}, {0.5, true}, {nil, false}},
		{{nil, false}, {nil, false}, {1.0, true}, {nil, false}}, // NaN reads as missing
		{{7.0, true}, {"Lima", true}, {nil, false}, {nil, false}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("row values (-want +got):\n%s", diff)
	}

	age, _ := tab.Lookup("age")
	city, _ := tab.Lookup("city")
	if !age.IsMissing(1) || age.IsMissing(0) || !city.IsMissing(1) {
		t.Error("IsMissing does not mark NaN numbers and marked texts, and only those")
	}
	if v, ok := age.Number(0); !ok || v != 41 {
		t.Errorf("age.Number(0) = %v, %v", v, ok)
	}
	if _, ok := age.Text(0); ok {
		t.Error("Text of a number column reported a value")
	}
	if _, ok := city.Number(0); ok {
		t.Error("Number of a text column reported a value")
	}
	if _, ok := tab.Row(0).Number("city"); ok {
		t.Error("Row.Number of a text column reported a value")
	}
	if v, ok := tab.Row(2).Text("city"); !ok || v != "Lima" {
		t.Errorf(`Row(2).Text("city") = %q, %v`, v, ok)
	}
	if _, ok := tab.Row(0).Text("nope"); ok {
		t.Error("Row.Text of a missing column reported a value")
	}
	if v, ok := tab.Row(0).Number("score"); !ok || v != 0.5 {
		t.Errorf(`Row(0).Number("score") = %v, %v`, v, ok)
	}
}

func TestEmptyTable(t *testing.T) {
	tab, err := process.NewTable(0, process.NumberColumn("a", nil, nil), process.TextColumn("b", nil, nil))
	if err != nil {
		t.Fatalf("a table without rows is valid: %v", err)
	}
	if tab.Rows() != 0 || tab.NumColumns() != 2 {
		t.Errorf("Rows, NumColumns = %d, %d, want 0, 2", tab.Rows(), tab.NumColumns())
	}
}

func TestKindText(t *testing.T) {
	for _, k := range []process.Kind{process.Number, process.Text} {
		b, err := k.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back process.Kind
		if err := back.UnmarshalText(b); err != nil || back != k {
			t.Errorf("%v: round trip through %q gave %v, %v", k, b, back, err)
		}
	}
	if _, err := process.Kind(0).MarshalText(); err == nil {
		t.Error("the zero Kind marshalled")
	}
	var k process.Kind
	if err := k.UnmarshalText([]byte("string")); err == nil {
		t.Error(`UnmarshalText accepted "string"`)
	}
	if got := process.Kind(9).String(); got != "Kind(9)" {
		t.Errorf("String of an invalid kind = %q", got)
	}
}

// TestTableIndex looks columns up in a narrow table (searched in order) and
// a wide one (indexed by name), and checks that both refuse a repeated name.
func TestTableIndex(t *testing.T) {
	for _, n := range []int{3, 40} {
		t.Run(fmt.Sprintf("columns=%d", n), func(t *testing.T) {
			cols := make([]process.Column, n)
			for i := range cols {
				cols[i] = process.NumberColumn(fmt.Sprintf("c%d", i), []float64{float64(i)}, nil)
			}
			tab, err := process.NewTable(1, cols...)
			if err != nil {
				t.Fatal(err)
			}
			for i := range n {
				if got := tab.Index(fmt.Sprintf("c%d", i)); got != i {
					t.Errorf("Index(c%d) = %d", i, got)
				}
			}
			if got := tab.Index("nope"); got != -1 {
				t.Errorf("Index(nope) = %d, want -1", got)
			}
			if v, ok := tab.Row(0).Number(fmt.Sprintf("c%d", n-1)); !ok || v != float64(n-1) {
				t.Errorf("last column reads %v, %v", v, ok)
			}
			dup := append(cols[:n:n], process.NumberColumn("c1", []float64{0}, nil))
			if _, err := process.NewTable(1, dup...); err == nil || !strings.Contains(err.Error(), `"c1" appears twice`) {
				t.Errorf("a repeated name gave %v", err)
			}
		})
	}
}

// TestTableSlice: a slice holds exactly its rows of every column, finds
// columns by name in narrow and wide tables alike, cannot grow into the
// rows after it, and panics out of range.
func TestTableSlice(t *testing.T) {
	for _, width := range []int{3, 20} { // below and above the by-name index
		cols := make([]process.Column, width)
		for j := range cols {
			name := fmt.Sprintf("c%d", j)
			if j%2 == 0 {
				cols[j] = process.NumberColumn(name, []float64{0, 1, 2, 3, 4}, []bool{false, true, false, false, true})
			} else {
				cols[j] = process.TextColumn(name, []string{"a", "b", "c", "d", "e"}, nil)
			}
		}
		tab := tabletest.Must(5, cols...)
		s := tab.Slice(1, 4)
		if s.Rows() != 3 || s.NumColumns() != width {
			t.Fatalf("width %d: Slice(1, 4) has %d rows of %d columns", width, s.Rows(), s.NumColumns())
		}
		last := fmt.Sprintf("c%d", width-1)
		if c, ok := s.Lookup(last); !ok || c.Name != last {
			t.Errorf("width %d: Lookup(%q) = %v, %v", width, last, c, ok)
		}
		num, _ := s.Lookup("c0")
		if v, ok := num.Number(0); ok {
			t.Errorf("width %d: row 0 of c0 is %v, want missing (row 1 of the table)", width, v)
		}
		if v, ok := num.Number(2); !ok || v != 3 {
			t.Errorf("width %d: row 2 of c0 is %v, %v; want 3", width, v, ok)
		}
		text, _ := s.Lookup("c1")
		if got := strings.Join(text.Texts, ""); got != "bcd" {
			t.Errorf("width %d: c1 is %q, want bcd", width, got)
		}
		_ = append(num.Numbers, 99)
		if tab.Column(0).Numbers[4] != 4 {
			t.Errorf("width %d: appending to a slice's column wrote %v into the table", width, tab.Column(0).Numbers[4])
		}
		if e := tab.Slice(5, 5); e.Rows() != 0 || e.NumColumns() != width {
			t.Errorf("width %d: Slice(5, 5) has %d rows of %d columns", width, e.Rows(), e.NumColumns())
		}
	}
	for _, r := range [][2]int{{-1, 2}, {3, 2}, {0, 6}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Slice(%d, %d) of 5 rows did not panic", r[0], r[1])
				}
			}()
			tabletest.Must(5, process.NumberColumn("x", make([]float64, 5), nil)).Slice(r[0], r[1])
		}()
	}
}
