package wire

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/scorehub/scorehub/registry/process"
)

// Result is what a process answered a request: one table, or, for an
// input scored in row ranges at once, the table of each range, in row
// order, with the same columns. The answer is written from the ranges'
// tables as they are, never joined.
type Result struct {
	Whole *process.Table
	Parts []*process.Table
}

// MinResponseBytes returns a lower bound of the bytes of r's response
// when its result holds the columns outputs, whatever else it holds: the
// brackets and braces, and for every input key of every row and every
// output column of every row, its name in quotes, a colon and a value of
// one byte. It counts no value in full, as any input column may be
// replaced by a result column of the same name, and a name as it is
// written is never shorter than the name itself.
func (r *Request) MinResponseBytes(outputs []process.ColumnSpec) int64 {
	rows := int64(r.Table.Rows())
	if rows == 0 {
		return int64(len(EmptyResponse))
	}
	const around = len(`"":0`)
	n := int64(len(ResponseStart)+len(ResponseEnd)) + rows*3 - 1 // {}, and the commas between rows
	declared := make(map[string]bool, len(outputs))
	for _, c := range outputs {
		declared[c.Name] = true
		n += rows * int64(len(c.Name)+around)
	}
	sizes := make([]int64, len(r.st.cols))
	for i, c := range r.st.cols {
		if !declared[c.name] {
			sizes[i] = int64(len(c.name) + around)
		}
	}
	for _, c := range r.st.cells {
		n += sizes[c.col]
	}
	return n
}

// AppendResponse appends to dst the response body for req scored as result:
// {"data":[...]} with one object per input row, in input order. Each object
// holds the keys its row had, in the order the columns first appeared in the
// request, every value exactly as it was sent; then the result columns in
// result's order. A result column named like an input column takes that
// column's place instead, in every row. Missing, NaN and infinite results
// are null.
//
// It fails when result is nil or does not have one row per input row.
func AppendResponse(dst []byte, req *Request, result *process.Table) ([]byte, error) {
	if err := CheckResult(req.Table.Rows(), result); err != nil {
		return dst, err
	}
	return req.Encoder(Result{Whole: result}).Append(dst), nil
}

// Append appends the whole response, as [AppendResponse] does.
func (e *Encoder) Append(dst []byte) []byte {
	dst = append(dst, ResponseStart...)
	for i := range e.rows {
		dst = e.AppendRow(dst, i)
	}
	return append(dst, ResponseEnd...)
}

// A response is ResponseStart, the rows that [Encoder.AppendRow] writes,
// and ResponseEnd; one without rows is EmptyResponse.
const (
	ResponseStart = `{"data":[`
	ResponseEnd   = "]}\n"
	EmptyResponse = ResponseStart + ResponseEnd
)

// Encoder writes the rows of one response. It lives in the request's
// state, so that a pooled state reuses its slices. Once made, it is only
// read, and safe for concurrent use: the rows of a long answer are
// encoded on several goroutines at once.
type Encoder struct {
	body     []byte
	st       *State
	rows     int               // input rows, one answer row each
	res      []resultCol       // the result columns of every table of the result, table after table
	nres     int               // result columns a table
	partEnd  []int             // of a result in parts: the row after each part's last
	one      [1]*process.Table // a whole result's table while Request.Encoder runs, as a slice of one
	keys     []byte            // `,"name":` of every result column, back to back
	keyEnd   []int             // where each result column's key ends in keys
	keyNames []string          // the names keys holds, kept for the next response
	replace  []replacement     // result columns that take an input column's place, by input column
	appended []int             // the other result columns, in result order
	// verbatim: the rows' texts are their echoes (see State.rowText)
	// and no result column takes an input column's place.
	verbatim bool
}

// resultCol is what the encoder reads of a result column, at hand.
type resultCol struct {
	key     []byte // `,"name":`
	numbers []float64
	texts   []string
	missing []bool
	text    bool
}

// replacement is a result column res that replaces the input column in.
type replacement struct {
	in  uint32
	res int
}

// CheckResult reports a result a process must not return for rows input
// rows: the encoder writes one answer row per input row from it.
func CheckResult(rows int, result *process.Table) error {
	if result == nil {
		return errors.New("scoring: the process returned no table")
	}
	if got, want := result.Rows(), rows; got != want {
		return fmt.Errorf("scoring: the process returned %d rows for %d input rows", got, want)
	}
	return nil
}

// Encoder returns the encoder of r's response with result, which must
// have one row per input row (see [CheckResult]) and, in parts, the same
// columns in every part. It replaces the encoder r's state held before.
func (r *Request) Encoder(result Result) *Encoder {
	e := &r.st.enc
	*e = Encoder{body: r.st.data, st: r.st, rows: r.Table.Rows(),
		res: e.res[:0], partEnd: e.partEnd[:0], keys: e.keys, keyEnd: e.keyEnd, keyNames: e.keyNames,
		replace: e.replace[:0], appended: e.appended[:0]}
	tables := result.Parts
	if tables == nil {
		e.one[0] = result.Whole
		tables = e.one[:]
	} else {
		end := 0
		for _, t := range tables {
			end += t.Rows()
			e.partEnd = append(e.partEnd, end)
		}
	}
	first := tables[0]
	e.nres = first.NumColumns()
	// A process tends to return the same columns every time, their names
	// the same strings, which compare at the cost of a pointer: the keys
	// encoded for the last response of this state are then reused.
	same := len(e.keyNames) == e.nres
	for i := 0; same && i < len(e.keyNames); i++ {
		same = e.keyNames[i] == first.Column(i).Name
	}
	if !same {
		e.keys, e.keyEnd, e.keyNames = e.keys[:0], e.keyEnd[:0], e.keyNames[:0]
	}
	for i := range e.nres {
		col := first.Column(i)
		if !same {
			e.keys = append(appendString(append(e.keys, ','), col.Name), ':')
			e.keyEnd = append(e.keyEnd, len(e.keys))
			e.keyNames = append(e.keyNames, col.Name)
		}
		if in, ok := r.st.lookup(col.Name); ok {
			e.replace = append(e.replace, replacement{in: in, res: i})
		} else {
			e.appended = append(e.appended, i)
		}
	}
	for _, t := range tables {
		start := 0
		for i := range e.nres {
			col := t.Column(i)
			e.res = append(e.res, resultCol{key: e.keys[start:e.keyEnd[i]:e.keyEnd[i]],
				numbers: col.Numbers, texts: col.Texts, missing: col.Missing, text: col.Kind == process.Text})
			start = e.keyEnd[i]
		}
	}
	e.one[0] = nil
	slices.SortFunc(e.replace, func(a, b replacement) int { return int(a.in) - int(b.in) })
	e.verbatim = len(e.replace) == 0 && len(r.st.rowText) == r.Table.Rows()
	return e
}

// results returns the result columns that hold row i, and the row's
// index in them.
func (e *Encoder) results(i int) ([]resultCol, int) {
	if len(e.partEnd) == 0 {
		return e.res, i
	}
	p, start := 0, 0
	for i >= e.partEnd[p] {
		start = e.partEnd[p]
		p++
	}
	return e.res[p*e.nres : (p+1)*e.nres], i - start
}

// AppendRow appends row i, preceded by a comma unless it is the first.
func (e *Encoder) AppendRow(b []byte, i int) []byte {
	if i > 0 {
		b = append(b, ',')
	}
	res, r := e.results(i)
	if e.verbatim {
		switch t := e.st.rowText[i]; {
		case t.end-t.start > 2:
			// The row's text but its '}', then every result column
			// (all are appended), each key with its comma: the loop
			// that most answers spend their time in, without calls
			// but to write a value.
			b = append(b, e.body[t.start:t.end-1]...)
			for k := range res {
				rc := &res[k]
				b = append(b, rc.key...)
				switch {
				case rc.missing != nil && rc.missing[r]:
					b = append(b, "null"...)
				case rc.text:
					b = appendString(b, rc.texts[r])
				default:
					b = appendNumber(b, rc.numbers[r])
				}
			}
			return append(b, '}')
		case t.end > t.start: // {}: no comma before the first result
			b = append(b, '{')
			for k := range res {
				b = appendResult(b, k > 0, &res[k], r)
			}
			return append(b, '}')
		}
	}
	b = append(b, '{')
	sep := false
	rp := e.replace
	for _, cl := range e.st.row(i) {
		for len(rp) > 0 && rp[0].in < cl.col {
			b = appendResult(b, sep, &res[rp[0].res], r)
			sep, rp = true, rp[1:]
		}
		if len(rp) > 0 && rp[0].in == cl.col {
			b = appendResult(b, sep, &res[rp[0].res], r)
			sep, rp = true, rp[1:]
			continue
		}
		if sep {
			b = append(b, ',')
		}
		sep = true
		b = append(b, e.st.cols[cl.col].key.of(e.body)...)
		b = append(b, ':')
		b = append(b, cl.raw.of(e.body)...)
	}
	for _, rpl := range rp {
		b = appendResult(b, sep, &res[rpl.res], r)
		sep = true
	}
	for _, c := range e.appended {
		b = appendResult(b, sep, &res[c], r)
		sep = true
	}
	return append(b, '}')
}

// appendResult appends rc's key and its value of row r, preceded by a
// comma if sep.
func appendResult(b []byte, sep bool, rc *resultCol, r int) []byte {
	key := rc.key
	if !sep {
		key = key[1:]
	}
	b = append(b, key...)
	switch {
	case rc.missing != nil && rc.missing[r]:
		return append(b, "null"...)
	case rc.text:
		return appendString(b, rc.texts[r])
	}
	return appendNumber(b, rc.numbers[r])
}

// appendNumber appends f as JSON, NaN and ±Inf as null.
func appendNumber(b []byte, f float64) []byte {
	u := math.Float64bits(f)
	if u>>fracBits&0x7ff == 0x7ff {
		return append(b, "null"...)
	}
	return appendFinite(b, u)
}

// appendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD,
// so the output is always valid JSON.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// AppendNumber appends f as an answer writes it: the shortest decimal
// that reads back as f, in exponent form only below 1e-6 or from 1e21,
// and NaN and ±Inf as null.
func AppendNumber(b []byte, f float64) []byte { return appendNumber(b, f) }

// AppendString appends s as an answer writes it: a JSON string, invalid
// UTF-8 as U+FFFD.
func AppendString(b []byte, s string) []byte { return appendString(b, s) }
