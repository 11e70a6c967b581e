package wire

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry/process"
)

// Decode reads a request body from r into a state of its own and decodes
// it, as [State.Read] and [State.Decode] do.
func Decode(r io.Reader, lim Limits) (*Request, error) {
	st := new(State)
	if err := st.Read(r, lim.MaxBodyBytes, -1); err != nil {
		return nil, err
	}
	return st.Decode(lim)
}

var errNotObject = BadRequest(problem.InvalidRequest, "", `the request body must be a JSON object with a "data" array of row objects`)

// Decode decodes the body [State.Read] read, {"data":[{...},...]} with
// any other top-level keys ignored, into the Request that lives in st.
//
// Every fault of the request is a [*problem.Error]: malformed JSON (including
// trailing commas, comments, NaN, single quotes, invalid UTF-8 and data
// after the top-level object), a duplicate key, a missing or non-array
// "data", a row that is not an object, a nested object or array as a value,
// a column with both numbers and text, an exceeded limit.
//
// A large body is decoded in parts on several goroutines when it can
// (decodeParallel); otherwise, and whenever the parts find any fault, in
// one pass, which finds the same fault at the same place as it would have
// alone.
func (st *State) Decode(lim Limits) (*Request, error) {
	if st.body.Len() >= parallelBodyBytes {
		if n := Parallelism(); n > 1 {
			if req := st.decodeParallel(lim, n, minPartBytes); req != nil {
				return req, nil
			}
			st.restart()
		}
	}
	return st.decodeDoc(lim)
}

// Parallelism is how many goroutines decoding the body [State.Read] read
// takes: [Parallelism] for a body large enough to be decoded in parts,
// else one.
func (st *State) Parallelism() int {
	if st.body.Len() >= parallelBodyBytes {
		return Parallelism()
	}
	return 1
}

// restart forgets what a decoding that gave up had decoded, for another
// to start from the beginning of the body.
func (st *State) restart() {
	st.cols, st.cells, st.rowEnd, st.arena, st.split = st.cols[:0], st.cells[:0], st.rowEnd[:0], st.arena[:0], st.split[:0]
	st.order, st.rowText = st.order[:0], st.rowText[:0]
}

// begin readies the column index for a new decoding.
func (st *State) begin() {
	if st.index == nil {
		st.index = make(map[string]*colRef)
		st.names = make(map[string]struct{})
	}
	st.gen++
	if st.gen == 0 || len(st.index) > maxKnownNames {
		clear(st.index)
		st.gen = 1
	}
}

// decodeDoc parses st.body, the whole document, in one pass: with the
// scanner when the body has the usual shape (see scan.go), otherwise with
// the strict decoder, which answers every fault.
func (st *State) decodeDoc(lim Limits) (*Request, error) {
	if st.scanDoc(lim) {
		return &st.req, nil
	}
	st.restart()
	return st.decodeStrict(lim)
}

// decodeStrict parses st.body, the whole document, in one pass with the
// strict decoder.
func (st *State) decodeStrict(lim Limits) (*Request, error) {
	st.begin()
	st.data = st.body.Bytes()
	// Duplicate keys are found below, where it is cheaper than in the
	// decoder: by column within rows, by name at the top level, and by a
	// strict check of the values that are skipped.
	st.dec.Reset(&st.body, jsontext.AllowDuplicateNames(true))
	d := &st.dec
	switch d.PeekKind() {
	case '{':
	case 0:
		if len(bytes.TrimSpace(st.data)) == 0 {
			return nil, BadRequest(problem.MalformedJSON, "", "the request body is empty")
		}
		_, err := d.ReadToken()
		return nil, jsonError(err)
	default:
		return nil, errNotObject
	}
	if _, err := d.ReadToken(); err != nil {
		return nil, jsonError(err)
	}
	clear(st.names)
	sawData := false
	for d.PeekKind() != '}' {
		raw, err := d.ReadValue()
		if err != nil {
			return nil, jsonError(err)
		}
		name, err := st.unquote(raw)
		if err != nil {
			return nil, err
		}
		// "data", usually the only key, is told apart by sawData, which
		// spares a map insert (and its key's allocation) per request.
		dup := sawData && string(name) == "data"
		if !dup && string(name) != "data" {
			_, dup = st.names[string(name)]
		}
		if dup {
			return nil, BadRequest(problem.DuplicateKey, "/"+escapePointer(string(name)),
				"the key %q appears twice in one object", name)
		}
		if string(name) != "data" {
			st.names[string(name)] = struct{}{}
			v, err := d.ReadValue()
			if err != nil {
				return nil, jsonError(err)
			}
			if (v[0] == '{' || v[0] == '[') && !v.IsValid() {
				return nil, st.strictError()
			}
			continue
		}
		sawData = true
		if err := st.rows(lim); err != nil {
			return nil, err
		}
	}
	if _, err := d.ReadToken(); err != nil {
		return nil, jsonError(err)
	}
	if !sawData {
		return nil, BadRequest(problem.InvalidRequest, "", `the request body has no "data" array`)
	}
	switch _, err := d.ReadToken(); {
	case err == io.EOF:
	case err != nil:
		return nil, jsonError(err)
	default:
		return nil, BadRequest(problem.MalformedJSON, "", "the request body has data after the JSON object")
	}
	if err := st.build(); err != nil {
		return nil, err
	}
	return &st.req, nil
}

// unquote returns the name a raw JSON string denotes, in st.scratch when
// it has escapes.
func (st *State) unquote(raw []byte) ([]byte, error) {
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw[1 : len(raw)-1], nil
	}
	var err error
	if st.scratch, err = jsontext.AppendUnquote(st.scratch[:0], raw); err != nil {
		return nil, BadRequest(problem.MalformedJSON, "", "a key is not a valid JSON string")
	}
	return st.scratch, nil
}

// strictError finds the first fault of the body with a strict decoder, for
// what the lenient one let through.
func (st *State) strictError() error {
	d := jsontext.NewDecoder(bytes.NewReader(st.data))
	for {
		if _, err := d.ReadToken(); err != nil {
			if err == io.EOF {
				return BadRequest(problem.MalformedJSON, "", "the request body is not valid JSON")
			}
			return jsonError(err)
		}
	}
}

// rows decodes the "data" array, the decoder standing before it.
func (st *State) rows(lim Limits) error {
	d := &st.dec
	switch d.PeekKind() {
	case '[':
	case 0:
		_, err := d.ReadToken()
		return jsonError(err)
	default:
		return BadRequest(problem.InvalidRequest, "/data", `"data" must be an array of row objects`)
	}
	if _, err := d.ReadToken(); err != nil {
		return jsonError(err)
	}
	for row := 0; ; row++ {
		switch st.peek(row > 0) {
		case ']':
			_, err := d.ReadToken()
			return jsonError(err)
		case '{':
		default:
			if d.PeekKind() == 0 {
				_, err := d.ReadToken()
				return jsonError(err)
			}
			if err := d.SkipValue(); err != nil {
				return jsonError(err)
			}
			return BadRequest(problem.InvalidRequest, rowPointer(row), "every element of \"data\" must be a row object")
		}
		if row == lim.MaxRows {
			return tooLarge(problem.TooManyRows, "the request has more than %d rows", lim.MaxRows)
		}
		if _, err := d.ReadToken(); err != nil {
			return jsonError(err)
		}
		if err := st.row1(row, lim); err != nil {
			return err
		}
		if n := len(st.cols); n > 0 && (row+1) > lim.MaxCells/n {
			return tooLarge(problem.TooManyCells, "the request has more than %d cells (rows × columns)", lim.MaxCells)
		}
	}
}

// peek returns the next byte of the body that is not whitespace (nor, with
// comma, one comma), 0 at the end. It only chooses the next decoder call,
// which is cheaper than the decoder's PeekKind; the decoder still checks
// every byte.
func (st *State) peek(comma bool) byte {
	for i := int(st.dec.InputOffset()); i < len(st.data); i++ {
		switch c := st.data[i]; c {
		case ' ', '\t', '\n', '\r':
		case ',':
			if !comma {
				return c
			}
			comma = false
		default:
			return c
		}
	}
	return 0
}

// row1 decodes the members of row row, the decoder standing after its '{'.
func (st *State) row1(row int, lim Limits) error {
	d := &st.dec
	start := len(st.cells)
	sorted := true
	last := -1
	for k := 0; ; k++ {
		if st.peek(false) == '}' {
			if _, err := d.ReadToken(); err != nil {
				return jsonError(err)
			}
			cells := st.cells[start:]
			if !sorted {
				slices.SortFunc(cells, func(a, b cell) int { return int(a.col) - int(b.col) })
			}
			st.rowEnd = append(st.rowEnd, uint32(len(st.cells)))
			return nil
		}
		key, err := d.ReadValue()
		if err != nil {
			return jsonError(err)
		}
		keyEnd := uint32(d.InputOffset())
		c, err := st.column(k, key, span{keyEnd - uint32(len(key)), keyEnd}, row, lim)
		if err != nil {
			return err
		}
		info := &st.cols[c]
		if info.seen == int32(row)+1 {
			return BadRequest(problem.DuplicateKey, pointer(row, info.name), "the key %q appears twice in one object", info.name)
		}
		info.seen = int32(row) + 1
		if int(c) < last {
			sorted = false
		}
		last = int(c)
		v, err := d.ReadValue()
		if err != nil {
			return jsonError(err)
		}
		end := uint32(d.InputOffset())
		cl := cell{raw: span{end - uint32(len(v)), end}, col: c}
		kind := process.Text
		switch v[0] {
		case 'n':
			cl.kind = cellNull
		case 't':
			cl.kind = cellTrue
		case 'f':
			cl.kind = cellFalse
		case '"':
			cl.kind = cellText
			a := uint32(len(st.arena))
			if bytes.IndexByte(v, '\\') < 0 {
				st.arena = append(st.arena, v[1:len(v)-1]...)
			} else if st.arena, err = jsontext.AppendUnquote(st.arena, v); err != nil {
				return BadRequest(problem.MalformedJSON, pointer(row, info.name), "the value is not a valid JSON string")
			}
			cl.val = uint64(a)<<32 | uint64(uint32(len(st.arena)))
		case '{', '[':
			return BadRequest(problem.InvalidValue, pointer(row, info.name),
				"the value of %q is an object or array; values must be numbers, text, booleans or null", info.name)
		default:
			f, _, ok := scanNumber(v, 0)
			if !ok { // the decoder has checked its grammar
				return BadRequest(problem.InvalidValue, pointer(row, info.name), "the number %.40s is out of range", v)
			}
			cl.kind = cellNumber
			cl.val = math.Float64bits(f)
			kind = process.Number
		}
		if cl.kind != cellNull && !info.add(kind, row) {
			return BadRequest(problem.MixedTypes, pointer(row, info.name),
				"the column %q holds both numbers and text", info.name)
		}
		st.cells = append(st.cells, cl)
	}
}

// column returns the column of the k-th key of row row, whose raw JSON text
// is key (at raw in the body), adding a column for a new name.
func (st *State) column(k int, key []byte, raw span, row int, lim Limits) (uint32, error) {
	if k < len(st.order) {
		if c := st.order[k]; bytes.Equal(st.cols[c].key.of(st.data), key) {
			return c, nil
		}
	}
	name, err := st.unquote(key)
	if err != nil {
		return 0, err
	}
	ref := st.index[string(name)]
	if ref == nil || ref.gen != st.gen {
		switch {
		case len(name) == 0:
			return 0, BadRequest(problem.InvalidRequest, pointer(row, ""), "a key of a row is empty; columns need a name")
		case len(st.cols) == lim.MaxColumns:
			return 0, tooLarge(problem.TooManyColumns, "the request has more than %d columns", lim.MaxColumns)
		}
		if ref == nil {
			ref = &colRef{name: string(name)}
			st.index[ref.name] = ref
		}
		ref.col, ref.gen = uint32(len(st.cols)), st.gen
		st.cols = append(st.cols, colInfo{name: ref.name, key: raw, words: keyWordsOf(raw.of(st.data))})
	}
	c := ref.col
	if k < len(st.order) {
		st.order[k] = c
	} else {
		st.order = append(st.order, c)
	}
	return c, nil
}

// build makes the table from the decoded cells: one allocation per kind of
// backing array, whatever the row count.
func (st *State) build() error {
	rows := len(st.rowEnd)
	var nNum, nText, nMissing int
	for i := range st.cols {
		c := &st.cols[i]
		if c.kind == 0 {
			c.kind = process.Text
		}
		if c.kind == process.Number {
			nNum++
		} else {
			nText++
		}
		if c.values < rows {
			nMissing++
		}
	}
	nums := make([]float64, nNum*rows)
	texts := make([]string, nText*rows)
	missing := make([]bool, nMissing*rows)
	cols := make([]process.Column, len(st.cols))
	for i := range st.cols {
		c := &st.cols[i]
		col := &cols[i]
		col.Name, col.Kind = c.name, c.kind
		var miss []bool
		if c.values < rows {
			miss, missing = missing[:rows:rows], missing[rows:]
			for j := range miss {
				miss[j] = true
			}
			col.Missing = miss
		}
		if c.kind == process.Number {
			col.Numbers, nums = nums[:rows:rows], nums[rows:]
			if miss != nil {
				for j := range col.Numbers {
					col.Numbers[j] = math.NaN()
				}
			}
		} else {
			col.Texts, texts = texts[:rows:rows], texts[rows:]
		}
	}
	arena := string(st.arena)
	if len(st.split) > 2 {
		// The rows of a body decoded in parts are filled in by as many
		// goroutines: each writes its own rows of every column.
		var wg sync.WaitGroup
		for k := 1; k < len(st.split)-1; k++ {
			wg.Go(func() { st.fill(cols, arena, st.split[k], st.split[k+1]) })
		}
		st.fill(cols, arena, 0, st.split[1])
		wg.Wait()
	} else {
		st.fill(cols, arena, 0, rows)
	}
	t, err := process.NewTable(rows, cols...)
	if err != nil {
		return fmt.Errorf("scoring: build table: %w", err)
	}
	st.req = Request{Table: t, st: st}
	return nil
}

// fill writes the values of rows lo to hi into cols.
func (st *State) fill(cols []process.Column, arena string, lo, hi int) {
	start := uint32(0)
	if lo > 0 {
		start = st.rowEnd[lo-1]
	}
	for r := lo; r < hi; r++ {
		end := st.rowEnd[r]
		for _, cl := range st.cells[start:end] {
			col := &cols[cl.col]
			switch cl.kind {
			case cellNull:
				continue
			case cellNumber:
				col.Numbers[r] = math.Float64frombits(cl.val)
			case cellText:
				col.Texts[r] = arena[cl.val>>32 : uint32(cl.val)]
			case cellTrue:
				col.Texts[r] = "true"
			case cellFalse:
				col.Texts[r] = "false"
			}
			if col.Missing != nil {
				col.Missing[r] = false
			}
		}
		start = end
	}
}

// jsonError turns an error of the JSON decoder into the client's answer.
func jsonError(err error) error {
	if err == nil {
		return nil
	}
	var se *jsontext.SyntacticError
	switch {
	case errors.As(err, &se) && errors.Is(se.Err, jsontext.ErrDuplicateName):
		return BadRequest(problem.DuplicateKey, string(se.JSONPointer),
			"the key %q appears twice in one object", se.JSONPointer.LastToken())
	case errors.As(err, &se) && errors.Is(se.Err, io.ErrUnexpectedEOF):
		return BadRequest(problem.MalformedJSON, string(se.JSONPointer), "the request body ends before its JSON is complete")
	case errors.As(err, &se):
		return BadRequest(problem.MalformedJSON, string(se.JSONPointer),
			"the request body is not valid JSON: %s after byte %d", se.Err, se.ByteOffset).Wrap(err)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return BadRequest(problem.MalformedJSON, "", "the request body ends before its JSON is complete")
	}
	return BadRequest(problem.MalformedJSON, "", "the request body is not valid JSON").Wrap(err)
}
