package wire

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"

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
// Required columns that no row has are a 400 schema_mismatch naming every
// one of them and the columns the rows have that the schema does not name,
// with the closest required name suggested for each (see [missingColumns]);
// a column that holds values of another kind than declared is a 400
// schema_mismatch naming the column and the row of its first value; a
// column whose every value is null takes the declared kind. Columns the
// schema does not name are kept as they are.
func (r *Request) Conform(schema []process.ColumnSpec) error {
	var missing []string
	for _, s := range schema {
		if _, ok := r.st.lookup(s.Name); !ok && s.Required {
			missing = append(missing, s.Name)
		}
	}
	if len(missing) > 0 {
		return r.missingColumns(schema, missing)
	}
	var cols []process.Column // copied on the first change
	for _, s := range schema {
		c, ok := r.st.lookup(s.Name)
		if !ok {
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

// maxNamed is how many columns a schema_mismatch message names of each
// list; it says how many more there are.
const maxNamed = 10

// missingColumns is the refusal of a request none of whose rows has the
// required columns missing: it names them, then the columns the rows have
// that the schema does not name, each with the missing name it most likely
// misspells ("mean radius" for "mean_radius"), so that a typo is not
// scored as a row of missing values. Fields holds one entry per missing
// column, with its suggestion.
func (r *Request) missingColumns(schema []process.ColumnSpec, missing []string) *problem.Error {
	known := make(map[string]bool, len(schema))
	for _, s := range schema {
		known[s.Name] = true
	}
	var unknown []string
	for i := range r.Table.NumColumns() {
		if name := r.Table.Column(i).Name; !known[name] {
			unknown = append(unknown, name)
		}
	}
	var b strings.Builder
	if len(missing) == 1 {
		fmt.Fprintf(&b, "the required column %q is missing from every row", missing[0])
	} else {
		b.WriteString("the required columns ")
		writeNames(&b, missing, nil)
		b.WriteString(" are missing from every row")
	}
	suggest := make(map[string]string)
	for _, u := range unknown {
		if m, ok := closest(u, missing); ok {
			suggest[u] = m
		}
	}
	if len(unknown) > 0 {
		b.WriteString("; the rows have columns it does not read: ")
		writeNames(&b, unknown, suggest)
	}
	e := BadRequest(problem.SchemaMismatch, "/data", "%s", b.String())
	for _, m := range missing {
		f := problem.FieldError{Pointer: "/data", Message: fmt.Sprintf("the required column %q is missing from every row", m)}
		for _, u := range unknown {
			if suggest[u] == m {
				f.Message += fmt.Sprintf("; the rows have %q", u)
				break
			}
		}
		e.Fields = append(e.Fields, f)
	}
	return e
}

// writeNames writes up to maxNamed of names, quoted and separated by
// commas, each with the name suggest has for it, and how many it left out.
func writeNames(b *strings.Builder, names []string, suggest map[string]string) {
	for i, n := range names {
		if i == maxNamed {
			fmt.Fprintf(b, " and %d more", len(names)-maxNamed)
			return
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(b, "%q", n)
		if s, ok := suggest[n]; ok {
			fmt.Fprintf(b, " (did you mean %q?)", s)
		}
	}
}

// closest returns the name of names that s most likely misspells: the one
// equal to it but for case, spaces and punctuation, else the nearest by
// edit distance over those folded forms, within a third of its length (at
// least 1, at most 3 edits).
func closest(s string, names []string) (string, bool) {
	fs := fold(s)
	best, bestDist := "", -1
	for _, n := range names {
		fn := fold(n)
		limit := min(max(1, len(fn)/3), 3)
		d := editDistance(fs, fn, limit)
		if d <= limit && (bestDist < 0 || d < bestDist) {
			best, bestDist = n, d
		}
	}
	return best, bestDist >= 0
}

// fold returns s in lower case without spaces and punctuation.
func fold(s string) []rune {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			out = append(out, unicode.ToLower(r))
		}
	}
	return out
}

// editDistance returns the Levenshtein distance of a and b, or limit+1 as
// soon as it is known to pass limit.
func editDistance(a, b []rune, limit int) int {
	if d := len(a) - len(b); d > limit || -d > limit {
		return limit + 1
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin > limit {
			return limit + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
