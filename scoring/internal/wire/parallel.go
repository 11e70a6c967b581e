package wire

import (
	"bytes"
	"runtime"
	"slices"
	"sync"
)

// A body large enough is decoded in parts on several goroutines; below
// these sizes the hand-offs would cost more than they save, and the body
// is decoded on its request's goroutine alone.
const (
	// parallelBodyBytes is the smallest body decoded in parts.
	parallelBodyBytes = 128 << 10
	// minPartBytes is the least of the body each decoding part gets.
	minPartBytes = 32 << 10
	// maxParallelism bounds the goroutines one request uses.
	maxParallelism = 8
)

// Parallelism is how many goroutines may work on one request, in its
// decoding here as in its scoring and encoding in parts: the processors
// Go runs on, at most maxParallelism.
func Parallelism() int { return min(runtime.GOMAXPROCS(0), maxParallelism) }

// decodeParallel decodes st.body in parts, each on a goroutine of its
// own, and returns the request, or nil when the body does not have the
// usual shape or any part finds a fault; the caller then decodes it in
// one pass, which answers the fault exactly as it always does. The
// result of a body decoded in parts is the one-pass result.
//
// Why that holds: the "data" array is cut after a comma that a '}' and a
// '{' surround, near each of n even stretches of the body. Each part
// scans the rows of its stretch where they lie, with the scanner and rules
// of the one-pass decoding (see scan.go), and must reach exactly its end,
// the comma after its last row, and the last part the ']' that closes
// "data". The first part starts where the one-pass decoding reads the
// first row; the scanner accepts a stretch only if it ends between two
// rows, so each next part starts where the one-pass decoding reads its
// next row. A stretch the scanner does not take, the strict decoder would
// refuse too (it is a fault of the rows, or the cut fell inside a string),
// so that the body goes back to the one-pass decoding. The document
// around "data" (its other keys, duplicates, the end) is decoded as a
// whole with "data" empty. Limits, and a column of mixed kinds across
// parts, are checked on the merged columns; any fault sends the body back
// to the one-pass decoding.
func (st *State) decodeParallel(lim Limits, n, minPart int) *Request {
	data := st.body.Bytes()
	open := dataArray(data)
	if open < 0 {
		return nil
	}
	n = min(n*2, (len(data)-open)/minPart) // more parts than goroutines even out their speeds
	if n < 2 {
		return nil
	}
	cuts := make([]int, 0, n+1) // where each part's rows start; then the body's end
	cuts = append(cuts, open+1)
	for k := 1; k < n; k++ {
		c := cutAfter(data, max(open+(len(data)-open)*k/n, cuts[len(cuts)-1]))
		if c < 0 {
			break
		}
		cuts = append(cuts, c)
	}
	if len(cuts) < 2 {
		return nil
	}
	cuts = append(cuts, len(data))
	for len(st.parts) < len(cuts)-1 {
		st.parts = append(st.parts, &State{})
	}
	parts := st.parts[:len(cuts)-1]
	failed := make([]bool, len(parts))
	closing := -1 // the offset of the ']' that closes "data", which the last part finds
	decodePart := func(k int) {
		stop := cuts[k+1] - 1 // the comma before the next part's rows
		if k == len(parts)-1 {
			stop = -1
		}
		p := parts[k]
		p.reset()
		p.begin()
		p.data = data
		end, ok := p.scanStretch(data, skipSpace(data, cuts[k]), stop, lim)
		if failed[k] = !ok; ok && stop < 0 {
			closing = end - 1
		}
	}
	var wg sync.WaitGroup
	for k := 1; k < len(parts); k++ {
		wg.Go(func() { decodePart(k) })
	}
	decodePart(0)
	wg.Wait()
	if slices.Contains(failed, true) {
		return nil
	}
	if closing < 0 || data[closing] != ']' {
		return nil
	}
	st.begin()
	st.data = data
	if !st.merge(parts, lim) {
		return nil
	}
	// The document around the rows, "data" as []: its other keys, their
	// duplicates and what follows it are checked as the one-pass decoding
	// checks them.
	outer := parts[0]
	outer.reset()
	outer.body.Write(data[:open+1])
	outer.body.Write(data[closing:])
	if req, err := outer.decodeDoc(lim); err != nil || req.Table.Rows() != 0 {
		return nil
	}
	if err := st.build(); err != nil {
		return nil
	}
	return &st.req
}

// dataArray returns the offset of the '[' that opens the value of the
// top-level key "data", written without escapes, when the key is found
// before any other that cannot be told apart from it cheaply; otherwise,
// or when the body is not an object, -1. It only tracks strings and
// nesting: the strict decoding of the document around "data" checks the
// rest.
func dataArray(b []byte) int {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return -1
	}
	depth := 0
	for i < len(b) {
		switch c := b[i]; c {
		case '{', '[':
			depth++
			i++
		case '}', ']':
			depth--
			i++
		case '"':
			end, _, _ := stringEnd(b, i)
			if end < 0 {
				return -1
			}
			if depth == 1 && bytes.Equal(b[i:end], []byte(`"data"`)) {
				j := skipSpace(b, end)
				if j < len(b) && b[j] == ':' {
					if j = skipSpace(b, j+1); j < len(b) && b[j] == '[' {
						return j
					}
				}
				return -1
			}
			i = end
		default:
			i++
		}
		if depth <= 0 {
			return -1
		}
	}
	return -1
}

// cutAfter returns where the row after the first comma at or after i
// that a '}' and a '{' surround (whitespace aside) starts, or -1.
func cutAfter(b []byte, i int) int {
	for {
		k := bytes.IndexByte(b[i:], ',')
		if k < 0 {
			return -1
		}
		c := i + k
		p := c - 1
		for p >= 0 && isSpace(b[p]) {
			p--
		}
		q := skipSpace(b, c+1)
		if p >= 0 && b[p] == '}' && q < len(b) && b[q] == '{' {
			return c + 1
		}
		i = c + 1
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && b[i] <= ' ' && isSpace(b[i]) {
		i++
	}
	return i
}

// merge makes st's columns and cells those of parts one after the
// other. It returns false when the merged rows pass a
// limit or a column holds numbers in one part and text in another, for
// the one-pass decoding to answer.
func (st *State) merge(parts []*State, lim Limits) bool {
	rows, nCells, nArena := 0, 0, 0
	st.split = st.split[:0]
	// The rows' texts are their echo only if every part's are, and the
	// parts' columns keep their order and first keys.
	verbatim := true
	for _, p := range parts {
		p.remap = p.remap[:0]
		verbatim = verbatim && len(p.rowText) == len(p.rowEnd)
		for i := range p.cols {
			pc := &p.cols[i]
			ref := st.index[pc.name]
			if ref == nil || ref.gen != st.gen {
				if len(st.cols) == lim.MaxColumns {
					return false
				}
				if ref == nil {
					ref = &colRef{name: pc.name}
					st.index[ref.name] = ref
				}
				ref.col, ref.gen = uint32(len(st.cols)), st.gen
				c := *pc
				c.first += int32(rows)
				st.cols = append(st.cols, c)
			} else if pc.kind != 0 {
				c := &st.cols[ref.col]
				switch c.kind {
				case 0:
					c.kind, c.first = pc.kind, pc.first+int32(rows)
				case pc.kind:
				default:
					return false
				}
				c.values += pc.values
			}
			verbatim = verbatim && (i == 0 || ref.col > p.remap[i-1]) && bytes.Equal(st.cols[ref.col].key.of(st.data), pc.key.of(p.data))
			p.remap = append(p.remap, ref.col)
		}
		st.split = append(st.split, rows)
		rows += len(p.rowEnd)
		nCells += len(p.cells)
		nArena += len(p.arena)
	}
	st.split = append(st.split, rows)
	if rows > lim.MaxRows || (len(st.cols) > 0 && rows > lim.MaxCells/len(st.cols)) {
		return false
	}
	st.cells = slices.Grow(st.cells[:0], nCells)[:nCells]
	st.rowEnd = slices.Grow(st.rowEnd[:0], rows)[:rows]
	st.arena = slices.Grow(st.arena[:0], nArena)[:nArena]
	st.rowText = st.rowText[:0]
	if verbatim {
		st.rowText = slices.Grow(st.rowText, rows)[:rows]
	}
	var wg sync.WaitGroup
	cellAt, arenaAt := 0, 0
	for k, p := range parts {
		cellOff, arenaOff, rowOff := cellAt, arenaAt, st.split[k]
		wg.Go(func() { st.place(p, cellOff, arenaOff, rowOff) })
		cellAt += len(p.cells)
		arenaAt += len(p.arena)
	}
	wg.Wait()
	return true
}

// place copies part p's cells, row ends and text into st at the given
// offsets, its columns renumbered as st's.
func (st *State) place(p *State, cellOff, arenaOff, rowOff int) {
	copy(st.arena[arenaOff:], p.arena)
	cells := st.cells[cellOff : cellOff+len(p.cells)]
	ordered, identity := true, true
	for i, c := range p.remap {
		ordered = ordered && (i == 0 || c > p.remap[i-1])
		identity = identity && c == uint32(i)
	}
	if identity && arenaOff == 0 {
		// The part numbers its columns as st does and no other part's
		// text comes before its own: its cells are st's as they are.
		copy(cells, p.cells)
	} else {
		shift := uint64(arenaOff)<<32 | uint64(arenaOff)
		for i, cl := range p.cells {
			cl.col = p.remap[cl.col]
			if cl.kind == cellText {
				cl.val += shift
			}
			cells[i] = cl
		}
	}
	if len(st.rowText) > 0 {
		copy(st.rowText[rowOff:], p.rowText)
	}
	start := uint32(0)
	for i, end := range p.rowEnd {
		st.rowEnd[rowOff+i] = uint32(cellOff) + end
		if !ordered {
			slices.SortFunc(cells[start:end], func(a, b cell) int { return int(a.col) - int(b.col) })
		}
		start = end
	}
}
