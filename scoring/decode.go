package scoring

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"sync"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
)

// Default limits; see [Limits].
const (
	DefaultMaxBodyBytes = 32 << 20
	DefaultMaxRows      = 1_000_000
	DefaultMaxColumns   = 10_000
	DefaultMaxCells     = 10_000_000
)

// maxBodyLimit keeps every byte offset of a body within a uint32.
const maxBodyLimit = math.MaxUint32

// Limits bound what one scoring request may hold. A zero field means its
// default. Exceeding any of them is answered with 413.
type Limits struct {
	// MaxBodyBytes bounds the request body (default 32 MiB, at most
	// 4 GiB − 1).
	MaxBodyBytes int64
	// MaxRows bounds the rows in "data" (default 1,000,000, at most
	// 2³¹ − 1).
	MaxRows int
	// MaxColumns bounds the distinct keys over all rows (default 10,000).
	MaxColumns int
	// MaxCells bounds rows × columns (default 10,000,000). The process
	// sees a dense table, so rows that each bring new keys would otherwise
	// turn a small body into a large table.
	MaxCells int
}

// resolve returns l with defaults filled in, or an error for a negative or
// oversized field.
func (l Limits) resolve() (Limits, error) {
	switch {
	case l.MaxBodyBytes < 0 || l.MaxBodyBytes > maxBodyLimit:
		return l, fmt.Errorf("scoring: Limits.MaxBodyBytes %d is out of range (0 to %d)", l.MaxBodyBytes, int64(maxBodyLimit))
	case l.MaxRows < 0, l.MaxColumns < 0, l.MaxCells < 0:
		return l, errors.New("scoring: Limits fields must not be negative")
	case l.MaxRows > math.MaxInt32:
		return l, fmt.Errorf("scoring: Limits.MaxRows %d is out of range (at most %d)", l.MaxRows, math.MaxInt32)
	}
	if l.MaxBodyBytes == 0 {
		l.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if l.MaxRows == 0 {
		l.MaxRows = DefaultMaxRows
	}
	if l.MaxColumns == 0 {
		l.MaxColumns = DefaultMaxColumns
	}
	if l.MaxCells == 0 {
		l.MaxCells = DefaultMaxCells
	}
	return l, nil
}

// Request is a decoded scoring request: the rows of "data" as a columnar
// table, and what the response needs to echo every input value exactly as
// it was sent.
//
// A Request is not safe for concurrent use. Its Table is immutable and may
// be shared and kept; everything else belongs to the Request.
type Request struct {
	// Table holds one column per distinct key of the rows, in order of
	// first appearance. Numbers are float64, text (booleans included, as
	// "true" and "false") is string; null and absent keys are missing
	// values. A column whose every value is null is Text, unless
	// [Request.Conform] declares it a Number.
	Table *registry.Table

	st *decodeState
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
func (r *Request) Conform(schema []registry.ColumnSpec) error {
	var cols []registry.Column // copied on the first change
	for _, s := range schema {
		c, ok := r.st.lookup(s.Name)
		if !ok {
			if s.Required {
				return badRequest(problem.SchemaMismatch, "/data", "the required column %q is missing from every row", s.Name)
			}
			continue
		}
		col := r.Table.Column(int(c))
		if col.Kind == s.Kind {
			continue
		}
		info := &r.st.cols[c]
		if info.values > 0 {
			return badRequest(problem.SchemaMismatch, pointer(int(info.first), s.Name),
				"the column %q must hold %s values, not %s", s.Name, s.Kind, col.Kind)
		}
		if cols == nil {
			cols = make([]registry.Column, r.Table.NumColumns())
			for i := range cols {
				cols[i] = *r.Table.Column(i)
			}
		}
		cols[c] = emptyColumn(s.Name, s.Kind, r.Table.Rows())
	}
	if cols == nil {
		return nil
	}
	t, err := registry.NewTable(r.Table.Rows(), cols...)
	if err != nil {
		return fmt.Errorf("scoring: conform: %w", err)
	}
	r.Table = t
	return nil
}

// emptyColumn returns a column of rows missing values.
func emptyColumn(name string, kind registry.Kind, rows int) registry.Column {
	missing := make([]bool, rows)
	for i := range missing {
		missing[i] = true
	}
	if kind == registry.Number {
		nums := make([]float64, rows)
		for i := range nums {
			nums[i] = math.NaN()
		}
		return registry.NumberColumn(name, nums, missing)
	}
	return registry.TextColumn(name, make([]string, rows), missing)
}

// Decode reads a scoring request body from r and decodes it in one pass:
// {"data":[{...},...]} with any other top-level keys ignored. It reads at
// most lim.MaxBodyBytes (+1, to tell a body that is too large).
//
// Every fault of the request is a [*problem.Error]: malformed JSON (including
// trailing commas, comments, NaN, single quotes, invalid UTF-8 and data
// after the top-level object), a duplicate key, a missing or non-array
// "data", a row that is not an object, a nested object or array as a value,
// a column with both numbers and text, an exceeded limit. Invalid limits are
// a plain error.
func Decode(r io.Reader, lim Limits) (*Request, error) {
	lim, err := lim.resolve()
	if err != nil {
		return nil, err
	}
	st := new(decodeState)
	if err := st.read(r, lim.MaxBodyBytes, -1); err != nil {
		return nil, err
	}
	return st.decode(lim)
}

// cellKind is what a row held under a key.
type cellKind uint8

const (
	cellNull cellKind = iota
	cellNumber
	cellText
	cellTrue
	cellFalse
)

// span is a byte range of the body or of the text arena.
type span struct{ start, end uint32 }

func (s span) of(b []byte) []byte { return b[s.start:s.end:s.end] }

// cell is one key of one row: the column, the raw JSON text (for the echo)
// and the value: float64 bits for numbers, an arena span for text.
type cell struct {
	val  uint64
	raw  span
	col  uint32
	kind cellKind
}

// colRef is a column name as the decode state knows it. Names outlive the
// request that brought them, so that a pooled state does not allocate the
// same names again; only those with the current gen are columns of the
// request being decoded. The index holds pointers so that a known name
// becomes a column of the next request without a map assignment.
type colRef struct {
	name     string
	col, gen uint32
}

// maxKnownNames bounds the names a decode state remembers between
// requests.
const maxKnownNames = 4096

// lookup returns the column of the current request named name.
func (st *decodeState) lookup(name string) (uint32, bool) {
	ref := st.index[name]
	if ref == nil || ref.gen != st.gen {
		return 0, false
	}
	return ref.col, true
}

// colInfo is what decoding learns about a column.
type colInfo struct {
	name   string
	key    span          // the key's raw JSON text where it first appeared
	words  keyWords      // the key's text and a colon as words, for the scanner
	kind   registry.Kind // 0 while the column has only nulls
	values int           // rows with a non-null value
	first  int32         // row of the first non-null value
	seen   int32         // 1 + the last row that had the key
}

// add counts a value of kind kind in row row, and reports false when the
// column holds values of the other kind.
func (c *colInfo) add(kind registry.Kind, row int) bool {
	switch c.kind {
	case 0:
		c.kind, c.first = kind, int32(row)
	case kind:
	default:
		return false
	}
	c.values++
	return true
}

// statePool recycles decode states, with their buffers, between requests.
type statePool struct{ p sync.Pool }

// The largest buffers kept for reuse: a rare huge request should not pin
// its memory.
const (
	maxPooledBody  = 8 << 20
	maxPooledCells = 1 << 20
	maxPooledParts = 4 << 20
)

func (p *statePool) get() *decodeState {
	if st, ok := p.p.Get().(*decodeState); ok {
		return st
	}
	return &decodeState{pool: p}
}

func (p *statePool) put(st *decodeState) {
	if st.body.Cap() > maxPooledBody || cap(st.cells) > maxPooledCells {
		return
	}
	// The parts of a large body hold its cells (the first also the
	// document around its rows): only those of a body of a few MiB are
	// kept, and none keeps the body's bytes.
	held := 0
	for _, p := range st.parts {
		held += p.body.Cap() + cap(p.cells)*int(unsafe.Sizeof(cell{}))
		p.reset()
	}
	if held > maxPooledParts {
		st.parts = nil
	}
	st.reset()
	p.p.Put(st)
}

// decodeState holds a request's body and everything decoded from it. The
// handler reuses states through a pool; [Decode] makes a fresh one.
type decodeState struct {
	body bytes.Buffer
	// data is the body's bytes, which the decoder consumes from body;
	// spans index it. A part of a body decoded in parts (parallel.go)
	// has the whole body's bytes here, and its spans are the body's too.
	data   []byte
	dec    jsontext.Decoder
	cols   []colInfo
	index  map[string]*colRef // this request's columns (gen current) and names seen before
	gen    uint32
	names  map[string]struct{} // top-level keys
	cells  []cell              // row after row, each row ordered by column
	rowEnd []uint32            // rowEnd[i] is the end of row i in cells
	// rowText[i], when the scanner decoded the body, is the text of row
	// i, from '{' to '}', if it is what the echo of its cells is (no
	// whitespace, keys in column order and as first written), else
	// empty; with the strict decoder, rowText is empty.
	rowText []span
	arena   []byte           // unescaped text values, back to back
	scratch []byte           // an unescaped key
	order   []uint32         // column of the k-th key of the previous row: rows tend to repeat their keys
	limit   io.LimitedReader // the body reader while it is read
	parts   []*decodeState   // the parts of a large body, kept for reuse
	remap   []uint32         // of a part: the request's column of each of its columns
	split   []int            // of a body decoded in parts: the first row of each, then the row count
	req     Request
	enc     encoder
	pool    *statePool
}

// row returns the cells of row i.
func (st *decodeState) row(i int) []cell {
	start := uint32(0)
	if i > 0 {
		start = st.rowEnd[i-1]
	}
	return st.cells[start:st.rowEnd[i]]
}

func (st *decodeState) reset() {
	st.body.Reset()
	st.data = nil
	st.cols = st.cols[:0]
	st.cells = st.cells[:0]
	st.rowEnd = st.rowEnd[:0]
	st.rowText = st.rowText[:0]
	st.arena = st.arena[:0]
	st.order = st.order[:0]
	st.split = st.split[:0]
	st.req = Request{}
	clear(st.enc.res) // let the result tables go
	st.enc.body, st.enc.st = nil, nil
}

// read fills the body from r, reading at most max+1 bytes. size, when not
// negative, is the announced body size.
func (st *decodeState) read(r io.Reader, max, size int64) error {
	if size > max {
		return errBodyTooLarge(max)
	}
	if size > 0 {
		st.body.Grow(int(size) + bytes.MinRead)
	}
	st.limit = io.LimitedReader{R: r, N: max + 1}
	n, err := st.body.ReadFrom(&st.limit)
	st.limit.R = nil
	if n > max {
		return errBodyTooLarge(max)
	}
	if err != nil {
		// Only here: errors.As takes its target's address, which would
		// cost every request an allocation.
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return errBodyTooLarge(max)
		}
		if e := httperr.From(err); e.Status == http.StatusRequestTimeout {
			return e // the server's read timeout: 408
		}
		return badRequest(problem.InvalidRequest, "", "the request body could not be read").Wrap(fmt.Errorf("scoring: read body: %w", err))
	}
	return nil
}

func errBodyTooLarge(max int64) *problem.Error {
	return tooLarge(problem.BodyTooLarge, "the request body is larger than %d bytes", max)
}

var errNotObject = badRequest(problem.InvalidRequest, "", `the request body must be a JSON object with a "data" array of row objects`)

// decode parses st.body into st.req: a large body in parts on several
// goroutines when it can (decodeParallel), otherwise, and whenever the
// parts find any fault, in one pass, which finds the same fault at the
// same place as it would have alone.
func (st *decodeState) decode(lim Limits) (*Request, error) {
	if st.body.Len() >= parallelBodyBytes {
		if n := parallelism(); n > 1 {
			if req := st.decodeParallel(lim, n, minPartBytes); req != nil {
				return req, nil
			}
			st.restart()
		}
	}
	return st.decodeDoc(lim)
}

// restart forgets what a decoding that gave up had decoded, for another
// to start from the beginning of the body.
func (st *decodeState) restart() {
	st.cols, st.cells, st.rowEnd, st.arena, st.split = st.cols[:0], st.cells[:0], st.rowEnd[:0], st.arena[:0], st.split[:0]
	st.order, st.rowText = st.order[:0], st.rowText[:0]
}

// begin readies the column index for a new decoding.
func (st *decodeState) begin() {
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
func (st *decodeState) decodeDoc(lim Limits) (*Request, error) {
	if st.scanDoc(lim) {
		return &st.req, nil
	}
	st.restart()
	return st.decodeStrict(lim)
}

// decodeStrict parses st.body, the whole document, in one pass with the
// strict decoder.
func (st *decodeState) decodeStrict(lim Limits) (*Request, error) {
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
			return nil, badRequest(problem.MalformedJSON, "", "the request body is empty")
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
			return nil, badRequest(problem.DuplicateKey, "/"+escapePointer(string(name)),
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
		return nil, badRequest(problem.InvalidRequest, "", `the request body has no "data" array`)
	}
	switch _, err := d.ReadToken(); {
	case err == io.EOF:
	case err != nil:
		return nil, jsonError(err)
	default:
		return nil, badRequest(problem.MalformedJSON, "", "the request body has data after the JSON object")
	}
	if err := st.build(); err != nil {
		return nil, err
	}
	return &st.req, nil
}

// unquote returns the name a raw JSON string denotes, in st.scratch when
// it has escapes.
func (st *decodeState) unquote(raw []byte) ([]byte, error) {
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw[1 : len(raw)-1], nil
	}
	var err error
	if st.scratch, err = jsontext.AppendUnquote(st.scratch[:0], raw); err != nil {
		return nil, badRequest(problem.MalformedJSON, "", "a key is not a valid JSON string")
	}
	return st.scratch, nil
}

// strictError finds the first fault of the body with a strict decoder, for
// what the lenient one let through.
func (st *decodeState) strictError() error {
	d := jsontext.NewDecoder(bytes.NewReader(st.data))
	for {
		if _, err := d.ReadToken(); err != nil {
			if err == io.EOF {
				return badRequest(problem.MalformedJSON, "", "the request body is not valid JSON")
			}
			return jsonError(err)
		}
	}
}

// rows decodes the "data" array, the decoder standing before it.
func (st *decodeState) rows(lim Limits) error {
	d := &st.dec
	switch d.PeekKind() {
	case '[':
	case 0:
		_, err := d.ReadToken()
		return jsonError(err)
	default:
		return badRequest(problem.InvalidRequest, "/data", `"data" must be an array of row objects`)
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
			return badRequest(problem.InvalidRequest, rowPointer(row), "every element of \"data\" must be a row object")
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
func (st *decodeState) peek(comma bool) byte {
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
func (st *decodeState) row1(row int, lim Limits) error {
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
			return badRequest(problem.DuplicateKey, pointer(row, info.name), "the key %q appears twice in one object", info.name)
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
		kind := registry.Text
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
				return badRequest(problem.MalformedJSON, pointer(row, info.name), "the value is not a valid JSON string")
			}
			cl.val = uint64(a)<<32 | uint64(uint32(len(st.arena)))
		case '{', '[':
			return badRequest(problem.InvalidValue, pointer(row, info.name),
				"the value of %q is an object or array; values must be numbers, text, booleans or null", info.name)
		default:
			f, _, ok := scanNumber(v, 0)
			if !ok { // the decoder has checked its grammar
				return badRequest(problem.InvalidValue, pointer(row, info.name), "the number %.40s is out of range", v)
			}
			cl.kind = cellNumber
			cl.val = math.Float64bits(f)
			kind = registry.Number
		}
		if cl.kind != cellNull && !info.add(kind, row) {
			return badRequest(problem.MixedTypes, pointer(row, info.name),
				"the column %q holds both numbers and text", info.name)
		}
		st.cells = append(st.cells, cl)
	}
}

// column returns the column of the k-th key of row row, whose raw JSON text
// is key (at raw in the body), adding a column for a new name.
func (st *decodeState) column(k int, key []byte, raw span, row int, lim Limits) (uint32, error) {
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
			return 0, badRequest(problem.InvalidRequest, pointer(row, ""), "a key of a row is empty; columns need a name")
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
func (st *decodeState) build() error {
	rows := len(st.rowEnd)
	var nNum, nText, nMissing int
	for i := range st.cols {
		c := &st.cols[i]
		if c.kind == 0 {
			c.kind = registry.Text
		}
		if c.kind == registry.Number {
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
	cols := make([]registry.Column, len(st.cols))
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
		if c.kind == registry.Number {
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
	t, err := registry.NewTable(rows, cols...)
	if err != nil {
		return fmt.Errorf("scoring: build table: %w", err)
	}
	st.req = Request{Table: t, st: st}
	return nil
}

// fill writes the values of rows lo to hi into cols.
func (st *decodeState) fill(cols []registry.Column, arena string, lo, hi int) {
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
		return badRequest(problem.DuplicateKey, string(se.JSONPointer),
			"the key %q appears twice in one object", se.JSONPointer.LastToken())
	case errors.As(err, &se) && errors.Is(se.Err, io.ErrUnexpectedEOF):
		return badRequest(problem.MalformedJSON, string(se.JSONPointer), "the request body ends before its JSON is complete")
	case errors.As(err, &se):
		return badRequest(problem.MalformedJSON, string(se.JSONPointer),
			"the request body is not valid JSON: %s after byte %d", se.Err, se.ByteOffset).Wrap(err)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return badRequest(problem.MalformedJSON, "", "the request body ends before its JSON is complete")
	}
	return badRequest(problem.MalformedJSON, "", "the request body is not valid JSON").Wrap(err)
}
