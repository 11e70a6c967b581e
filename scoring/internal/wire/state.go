package wire

import (
	"bytes"
	"io"
	"sync"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/scorehub/scorehub/registry/process"
)

// State holds a request's body, everything decoded from it and the
// encoder of its answer, so that one request's buffers serve the next:
// the handler reuses states through a [Pool]; [Decode] makes a fresh one.
// A State is used by one request at a time.
type State struct {
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
	parts   []*State         // the parts of a large body, kept for reuse
	remap   []uint32         // of a part: the request's column of each of its columns
	split   []int            // of a body decoded in parts: the first row of each, then the row count
	req     Request
	enc     Encoder
}

// row returns the cells of row i.
func (st *State) row(i int) []cell {
	start := uint32(0)
	if i > 0 {
		start = st.rowEnd[i-1]
	}
	return st.cells[start:st.rowEnd[i]]
}

// reset empties st for another request, keeping its buffers.
func (st *State) reset() {
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

// Pool recycles states, with their buffers, between requests. It is safe
// for concurrent use; its zero value is ready.
type Pool struct{ p sync.Pool }

// The largest buffers kept for reuse: a rare huge request should not pin
// its memory.
const (
	maxPooledBody  = 8 << 20
	maxPooledCells = 1 << 20
	maxPooledParts = 4 << 20
)

// Get returns a state with an empty body.
func (p *Pool) Get() *State {
	if st, ok := p.p.Get().(*State); ok {
		return st
	}
	return &State{}
}

// Put takes st back once its request is answered; nothing read from st,
// its Request's table aside, may be used after.
func (p *Pool) Put(st *State) {
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
func (st *State) lookup(name string) (uint32, bool) {
	ref := st.index[name]
	if ref == nil || ref.gen != st.gen {
		return 0, false
	}
	return ref.col, true
}

// colInfo is what decoding learns about a column.
type colInfo struct {
	name   string
	key    span         // the key's raw JSON text where it first appeared
	words  keyWords     // the key's text and a colon as words, for the scanner
	kind   process.Kind // 0 while the column has only nulls
	values int          // rows with a non-null value
	first  int32        // row of the first non-null value
	seen   int32        // 1 + the last row that had the key
}

// add counts a value of kind kind in row row, and reports false when the
// column holds values of the other kind.
func (c *colInfo) add(kind process.Kind, row int) bool {
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
