package wire

import (
	"fmt"
	"math"
	"slices"

	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry/process"
)

// Request is a decoded scoring request: the rows of "data" as a columnar
// table, and what the response needs to echo every input value exactly as
// it was sent.
//
// A Request is not safe for concurrent use. Its Table is immutable and may
// be shared and kept; everything else belongs to the Request, and to the
// [State] it lives in.
type Request struct {
	// Table holds one column per distinct key of the rows, in order of
	// first appearance. Numbers are float64, text (booleans included, as
	// "true" and "false") is string; null and absent keys are missing
	// values. A column whose every value is null is Text, unless
	// [Request.Conform] declares it a Number.
	Table *process.Table

	st *State
}

// Raw returns the JSON text row row sent for the table's column col, exactly
// as sent (a string with its quotes and escapes), and false when the row had
// no such key. The bytes must not be modified.
func (r *Request) Raw(row, col int) ([]byte, bool) {
	st := r.st
	cells := st.row(row)
	i, ok := slices.BinarySearchFunc(cells, uint32(col), func(c cell, col uint32) int { return int(c.col) - int(col) })
	if !ok {
		return nil, false
	}
	return cells[i].raw.of(st.data), true
}

// Conform checks the table against a process's input schema and applies it:
// a Required column that no row has, or a column that holds values of
// another kind than declared, is a 400 schema_mismatch naming the column; a
// column whose every value is null takes the declared kind. Columns the
// schema does not name are kept as they are.
func (r *Request) Conform(schema []process.ColumnSpec) error {
	var cols []process.Column // copied on the first change
	for _, s := range schema {
		c, ok := r.st.lookup(s.Name)
		if !ok {
			if s.Required {
				return BadRequest(problem.SchemaMismatch, "/data", "the required column %q is missing from every row", s.Name)
			}
			continue
		}
		col := r.Table.Column(int(c))
		if col.Kind == s.Kind {
			continue
		}
		info := &r.st.cols[c]
		if info.values > 0 {
			return BadRequest(problem.SchemaMismatch, pointer(int(info.first), s.Name),
				"the column %q must hold %s values, not %s", s.Name, s.Kind, col.Kind)
		}
		if cols == nil {
			cols = make([]process.Column, r.Table.NumColumns())
			for i := range cols {
				cols[i] = *r.Table.Column(i)
			}
		}
		cols[c] = emptyColumn(s.Name, s.Kind, r.Table.Rows())
	}
	if cols == nil {
		return nil
	}
	t, err := process.NewTable(r.Table.Rows(), cols...)
	if err != nil {
		return fmt.Errorf("scoring: conform: %w", err)
	}
	r.Table = t
	return nil
}

// emptyColumn returns a column of rows missing values.
func emptyColumn(name string, kind process.Kind, rows int) process.Column {
	missing := make([]bool, rows)
	for i := range missing {
		missing[i] = true
	}
	if kind == process.Number {
		nums := make([]float64, rows)
		for i := range nums {
			nums[i] = math.NaN()
		}
		return process.NumberColumn(name, nums, missing)
	}
	return process.TextColumn(name, make([]string, rows), missing)
}
