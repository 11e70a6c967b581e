package process

import (
	"errors"
	"fmt"
	"math"
)

// Kind is the type of a column's values. The zero Kind is invalid.
type Kind uint8

const (
	// Number columns hold float64 values.
	Number Kind = iota + 1
	// Text columns hold string values.
	Text
)

// String returns "number" or "text".
func (k Kind) String() string {
	switch k {
	case Number:
		return "number"
	case Text:
		return "text"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// MarshalText encodes k as "number" or "text".
func (k Kind) MarshalText() ([]byte, error) {
	if k != Number && k != Text {
		return nil, fmt.Errorf("registry: invalid kind %d", uint8(k))
	}
	return []byte(k.String()), nil
}

// UnmarshalText accepts "number" or "text".
func (k *Kind) UnmarshalText(b []byte) error {
	switch string(b) {
	case "number":
		*k = Number
	case "text":
		*k = Text
	default:
		return fmt.Errorf("registry: unknown kind %q (want number or text)", b)
	}
	return nil
}

// Column is one named, typed column of a [Table]. Exactly one of Numbers and
// Texts is used, chosen by Kind; its length is the table's row count. Missing
// is either nil (no value is missing) or as long as the values, true marking
// a missing value. A NaN in a Number column also reads as missing.
//
// A Column inside a Table must not be modified: tables are shared between
// goroutines once built.
type Column struct {
	Name    string
	Kind    Kind
	Numbers []float64
	Texts   []string
	Missing []bool
}

// NumberColumn returns a Number column. missing may be nil.
func NumberColumn(name string, values []float64, missing []bool) Column {
	return Column{Name: name, Kind: Number, Numbers: values, Missing: missing}
}

// TextColumn returns a Text column. missing may be nil.
func TextColumn(name string, values []string, missing []bool) Column {
	return Column{Name: name, Kind: Text, Texts: values, Missing: missing}
}

// Len returns the number of values in c.
func (c *Column) Len() int {
	if c.Kind == Text {
		return len(c.Texts)
	}
	return len(c.Numbers)
}

// IsMissing reports whether row i has no value.
func (c *Column) IsMissing(i int) bool {
	if c.Missing != nil && c.Missing[i] {
		return true
	}
	return c.Kind == Number && math.IsNaN(c.Numbers[i])
}

// Number returns row i of a Number column and whether it is present. It
// returns false for every row of a Text column.
func (c *Column) Number(i int) (float64, bool) {
	if c.Kind != Number || c.IsMissing(i) {
		return 0, false
	}
	return c.Numbers[i], true
}

// Text returns row i of a Text column and whether it is present. It returns
// false for every row of a Number column.
func (c *Column) Text(i int) (string, bool) {
	if c.Kind != Text || c.IsMissing(i) {
		return "", false
	}
	return c.Texts[i], true
}

// Table is a columnar table: named, typed columns of equal length. Build it
// with [NewTable]; a built Table is immutable and safe for concurrent reads.
type Table struct {
	rows int
	cols []Column
	// byName indexes the columns of a wide table; a narrow one (at most
	// indexThreshold columns) has none and is searched in order, which is
	// faster than hashing for so few names and saves building a map for
	// every table a request makes.
	byName map[string]int
}

// indexThreshold is the most columns a table holds without a by-name index.
const indexThreshold = 16

// NewTable returns a table of rows rows holding cols, in order. It fails when
// a name is empty or repeated, a kind is invalid, or a column's length
// (values or missing marks) is not rows. The table keeps cols' slices: do not
// modify them afterwards.
func NewTable(rows int, cols ...Column) (*Table, error) {
	if rows < 0 {
		return nil, errors.New("registry: negative row count")
	}
	t := &Table{rows: rows, cols: cols}
	if err := t.check(); err != nil {
		return nil, err
	}
	return t, nil
}

// check validates t's columns and indexes a wide table's names.
func (t *Table) check() error {
	cols := t.cols
	if len(cols) > indexThreshold {
		t.byName = make(map[string]int, len(cols))
	}
	for i := range cols {
		c := &cols[i]
		if c.Name == "" {
			return fmt.Errorf("registry: column %d has no name", i)
		}
		if t.byName != nil {
			if _, dup := t.byName[c.Name]; dup {
				return fmt.Errorf("registry: column %q appears twice", c.Name)
			}
			t.byName[c.Name] = i
		} else {
			for j := range i {
				if cols[j].Name == c.Name {
					return fmt.Errorf("registry: column %q appears twice", c.Name)
				}
			}
		}
		switch c.Kind {
		case Number:
			if c.Texts != nil {
				return fmt.Errorf("registry: number column %q has text values", c.Name)
			}
		case Text:
			if c.Numbers != nil {
				return fmt.Errorf("registry: text column %q has number values", c.Name)
			}
		default:
			return fmt.Errorf("registry: column %q has invalid kind %d", c.Name, c.Kind)
		}
		if n := c.Len(); n != t.rows {
			return fmt.Errorf("registry: column %q has %d values, want %d", c.Name, n, t.rows)
		}
		if c.Missing != nil && len(c.Missing) != t.rows {
			return fmt.Errorf("registry: column %q has %d missing marks, want %d", c.Name, len(c.Missing), t.rows)
		}
	}
	return nil
}

// Rows returns the number of rows.
func (t *Table) Rows() int { return t.rows }

// Slice returns rows lo to hi-1 of t as a table of their own, with t's
// columns. It shares t's memory, as a slice expression does, and like one
// panics unless 0 <= lo <= hi <= t.Rows().
func (t *Table) Slice(lo, hi int) *Table {
	if lo < 0 || hi < lo || hi > t.rows {
		panic(fmt.Sprintf("registry: Slice(%d, %d) of a table of %d rows", lo, hi, t.rows))
	}
	cols := make([]Column, len(t.cols))
	for i, c := range t.cols {
		if c.Numbers != nil {
			c.Numbers = c.Numbers[lo:hi:hi]
		}
		if c.Texts != nil {
			c.Texts = c.Texts[lo:hi:hi]
		}
		if c.Missing != nil {
			c.Missing = c.Missing[lo:hi:hi]
		}
		cols[i] = c
	}
	// The columns and their names are t's, so t's index serves as it is.
	return &Table{rows: hi - lo, cols: cols, byName: t.byName}
}

// NumColumns returns the number of columns.
func (t *Table) NumColumns() int { return len(t.cols) }

// Column returns column i, 0 ≤ i < NumColumns. The column must not be
// modified.
func (t *Table) Column(i int) *Column { return &t.cols[i] }

// Lookup returns the column named name. The column must not be modified.
func (t *Table) Lookup(name string) (*Column, bool) {
	i := t.Index(name)
	if i < 0 {
		return nil, false
	}
	return &t.cols[i], true
}

// Index returns the position of the column named name, or -1 when the table
// has none. A process that reads the same columns of many tables can look
// their positions up once per table and read [Table.Column] after that.
func (t *Table) Index(name string) int {
	if t.byName != nil {
		if i, ok := t.byName[name]; ok {
			return i
		}
		return -1
	}
	for i := range t.cols {
		if t.cols[i].Name == name {
			return i
		}
	}
	return -1
}

// Row returns a view of row i, 0 ≤ i < Rows.
func (t *Table) Row(i int) Row { return Row{t: t, i: i} }

// Row is a view of one row of a [Table], for code that reads row by row.
type Row struct {
	t *Table
	i int
}

// Index returns the row's position in its table.
func (r Row) Index() int { return r.i }

// Number returns the row's value in the Number column name and whether it is
// present. It returns false when the column does not exist or is Text.
func (r Row) Number(name string) (float64, bool) {
	c, ok := r.t.Lookup(name)
	if !ok {
		return 0, false
	}
	return c.Number(r.i)
}

// Text returns the row's value in the Text column name and whether it is
// present. It returns false when the column does not exist or is a Number.
func (r Row) Text(name string) (string, bool) {
	c, ok := r.t.Lookup(name)
	if !ok {
		return "", false
	}
	return c.Text(r.i)
}

// Value returns the row's value in column name as a float64 or a string, and
// false when the column does not exist or the value is missing.
func (r Row) Value(name string) (any, bool) {
	c, ok := r.t.Lookup(name)
	if !ok || c.IsMissing(r.i) {
		return nil, false
	}
	if c.Kind == Text {
		return c.Texts[r.i], true
	}
	return c.Numbers[r.i], true
}
