package wire

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/scorehub/scorehub/registry/process"
)

// The scanner below decodes the documents clients send, {"data":[{…},…]}
// with values that are numbers, text, booleans or null, in one pass over
// the bytes, several times faster than a general JSON tokenizer. It takes
// no decision of its own on a fault: on anything else than a well-formed
// document of that shape within the limits (a top-level key with escapes,
// a nested value in a row, a duplicate key, a column of mixed kinds, a
// limit passed, a number out of range, any syntax error) it gives up, and
// the strict decoder decodes the body from the start, so that every fault
// is answered as it always is. What it accepts, it decodes to exactly the
// table and echo of the strict decoder (FuzzScan holds it to that).

// scanDoc decodes st.body when it has the usual shape, and reports
// whether it did; when it did not, st's decoding must be started again.
// Top-level keys other than "data", such as the "schema" pandas sends,
// are skipped when they hold valid JSON, as the strict decoder skips them.
func (st *State) scanDoc(lim Limits) bool {
	st.begin()
	st.data = st.body.Bytes()
	b := st.data
	i := skipSpace(b, 0)
	if i == len(b) || b[i] != '{' {
		return false
	}
	sawData := false
	var names [][]byte // the other top-level keys, seldom more than one
	for i = skipSpace(b, i+1); ; {
		if i == len(b) || b[i] != '"' {
			return false
		}
		end, esc, high := stringEnd(b, i)
		if end < 0 || esc || high && !utf8.Valid(b[i+1:end-1]) {
			return false // a key with escapes is left to the strict decoder
		}
		name := b[i+1 : end-1]
		i = skipSpace(b, end)
		if i == len(b) || b[i] != ':' {
			return false
		}
		i = skipSpace(b, i+1)
		if string(name) == "data" {
			if sawData {
				return false
			}
			sawData = true
			var ok bool
			if i, ok = st.scanRows(b, i, lim); !ok {
				return false
			}
		} else {
			for _, n := range names {
				if bytes.Equal(n, name) {
					return false
				}
			}
			names = append(names, name)
			end := valueEnd(b, i)
			if end < 0 || !jsontext.Value(b[i:end]).IsValid() {
				return false
			}
			i = end
		}
		i = skipSpace(b, i)
		if i == len(b) {
			return false
		}
		if b[i] == '}' {
			break
		}
		if b[i] != ',' {
			return false
		}
		i = skipSpace(b, i+1)
	}
	if !sawData || skipSpace(b, i+1) != len(b) {
		return false
	}
	return st.build() == nil
}

// valueEnd returns where the JSON value that starts at b[i] ends, or -1.
// It only tracks strings and nesting; the value must still be validated.
func valueEnd(b []byte, i int) int {
	if i == len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		end, _, _ := stringEnd(b, i)
		return end
	case '{', '[':
	default:
		for j := i; j < len(b); j++ {
			switch b[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return j
			}
		}
		return len(b)
	}
	depth := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return j + 1
			}
		case '"':
			end, _, _ := stringEnd(b, j)
			if end < 0 {
				return -1
			}
			j = end - 1
		}
	}
	return -1
}

// scanRows decodes the array of rows that starts at b[i], a '[', and
// returns the offset just after its ']', and whether it could.
func (st *State) scanRows(b []byte, i int, lim Limits) (int, bool) {
	if i >= len(b) || b[i] != '[' {
		return 0, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	return st.scanStretch(b, i, -1, lim)
}

// scanStretch decodes rows from the one that starts at b[i], up to the
// ']' that closes their array, and returns the offset just after it; or,
// when stop is not negative, up to the comma at b[stop] after a row, and
// returns stop.
func (st *State) scanStretch(b []byte, i, stop int, lim Limits) (int, bool) {
	for row := 0; ; row++ {
		if row == lim.MaxRows || i >= len(b) || b[i] != '{' {
			return 0, false
		}
		var ok bool
		if i, ok = st.scanRow(b, i+1, row, lim); !ok {
			return 0, false
		}
		if n := len(st.cols); n > 0 && row+1 > lim.MaxCells/n {
			return 0, false
		}
		i = skipSpace(b, i)
		switch {
		case i == stop:
			return i, true
		case i == len(b), stop >= 0 && i > stop:
			return 0, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case ']':
			if stop >= 0 {
				return 0, false
			}
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// scanRow decodes the members of row row, b[i] being just after its '{',
// and returns the offset just after its '}'.
func (st *State) scanRow(b []byte, i, row int, lim Limits) (int, bool) {
	start := len(st.cells)
	open := i - 1
	// The row is its own echo when it is as long as the echo would be
	// and its keys are the columns' first ones, in column order.
	echo, verbatim := 2, true
	i = skipSpace(b, i)
	if i < len(b) && b[i] == '}' {
		st.endRow(open, i, echo, verbatim)
		return i + 1, true
	}
	sorted := true
	last := -1
	for k := 0; ; k++ {
		// The k-th key of the row before and its colon, written as
		// where the column first appeared, are found here without a
		// call; any other key by scanKey.
		var c uint32
		var next int // just after the key, or after its colon if colon
		colon := false
		if k < len(st.order) && i+16 <= len(b) {
			c = st.order[k]
			if w := &st.cols[c].words; w.n > 0 && w.at(b, i) {
				next, colon = i+int(w.n), true
			}
		}
		if !colon {
			var same, ok bool
			if c, next, same, ok = st.scanKey(b, i, k, row, lim); !ok {
				return 0, false
			}
			verbatim = verbatim && same
			echo++ // the colon
		}
		echo += next - i
		info := &st.cols[c]
		if info.seen == int32(row)+1 {
			return 0, false // a duplicate key
		}
		info.seen = int32(row) + 1
		if int(c) < last {
			sorted = false
		}
		last = int(c)
		if !colon {
			i = skipSpace(b, next)
			if i == len(b) || b[i] != ':' {
				return 0, false
			}
			next = i + 1
		}
		i = skipSpace(b, next)
		if i == len(b) {
			return 0, false
		}
		cl := cell{col: c}
		kind := process.Text
		v := i
		switch b[i] {
		case '"':
			end, esc, high := stringEnd(b, i)
			if end < 0 {
				return 0, false
			}
			a := uint32(len(st.arena))
			switch {
			case esc:
				var err error
				if st.arena, err = jsontext.AppendUnquote(st.arena, b[i:end]); err != nil {
					return 0, false
				}
			case high && !utf8.Valid(b[i+1:end-1]):
				return 0, false
			default:
				st.arena = append(st.arena, b[i+1:end-1]...)
			}
			cl.kind = cellText
			cl.val = uint64(a)<<32 | uint64(uint32(len(st.arena)))
			i = end
		case 't':
			if !bytes.HasPrefix(b[i:], []byte("true")) {
				return 0, false
			}
			cl.kind = cellTrue
			i += len("true")
		case 'f':
			if !bytes.HasPrefix(b[i:], []byte("false")) {
				return 0, false
			}
			cl.kind = cellFalse
			i += len("false")
		case 'n':
			if !bytes.HasPrefix(b[i:], []byte("null")) {
				return 0, false
			}
			cl.kind = cellNull
			i += len("null")
		default:
			// A number of at most 15 digits, with a fraction or
			// without, as most are, is read here, as scanNumber would
			// read it; any other by scanNumber.
			j := i
			if b[j] == '-' {
				j++
			}
			first := j
			var mant uint64
			for j < len(b) && b[j]-'0' < 10 {
				mant = mant*10 + uint64(b[j]-'0')
				j++
			}
			whole, frac := j-first, 0
			if j < len(b) && b[j] == '.' {
				j++
				for j < len(b) && b[j]-'0' < 10 {
					mant = mant*10 + uint64(b[j]-'0')
					j++
					frac++
				}
			}
			var f float64
			if whole == 0 || whole > 1 && b[first] == '0' || b[j-1] == '.' || whole+frac > 15 || j < len(b) && b[j]|0x20 == 'e' {
				var ok bool
				if f, j, ok = scanNumber(b, i); !ok {
					return 0, false
				}
			} else {
				f = float64(mant) / exactPow10[frac]
				if b[i] == '-' {
					f = -f
				}
			}
			cl.kind = cellNumber
			cl.val = math.Float64bits(f)
			kind = process.Number
			i = j
		}
		cl.raw = span{uint32(v), uint32(i)}
		echo += i - v
		if cl.kind != cellNull && !info.add(kind, row) {
			return 0, false // a column of mixed kinds
		}
		st.cells = append(st.cells, cl)
		i = skipSpace(b, i)
		if i == len(b) {
			return 0, false
		}
		switch b[i] {
		case ',':
			echo++
			i = skipSpace(b, i+1)
			continue
		case '}':
		default:
			return 0, false
		}
		if !sorted {
			slices.SortFunc(st.cells[start:], func(a, b cell) int { return int(a.col) - int(b.col) })
		}
		st.endRow(open, i, echo, verbatim && sorted)
		return i + 1, true
	}
}

// endRow ends the row whose text runs from b[open], its '{', to b[close],
// its '}', and which would be echoed in echo bytes.
func (st *State) endRow(open, close, echo int, verbatim bool) {
	st.rowEnd = append(st.rowEnd, uint32(len(st.cells)))
	text := span{}
	if verbatim && close+1-open == echo {
		text = span{uint32(open), uint32(close + 1)}
	}
	st.rowText = append(st.rowText, text)
}

// scanKey returns the column of the k-th key of row row, which starts at
// b[i], the offset just after the key, and whether the key is written as
// where the column first appeared. A row tends to have the keys of the
// row before in the same order, and then the key's bytes are those of the
// column's first key, compared at once; any other is read and looked up.
func (st *State) scanKey(b []byte, i, k, row int, lim Limits) (c uint32, end int, same, ok bool) {
	if k < len(st.order) {
		c := st.order[k]
		if key := st.cols[c].key.of(st.data); bytes.HasPrefix(b[i:], key) {
			return c, i + len(key), true, true
		}
	}
	if i == len(b) || b[i] != '"' {
		return 0, 0, false, false
	}
	end, _, high := stringEnd(b, i)
	if end < 0 || high && !utf8.Valid(b[i+1:end-1]) {
		return 0, 0, false, false
	}
	c, err := st.column(k, b[i:end], span{uint32(i), uint32(end)}, row, lim)
	if err != nil {
		return 0, 0, false, false
	}
	return c, end, bytes.Equal(st.cols[c].key.of(st.data), b[i:end]), true
}

// keyWords is a key's raw text and a colon, at most 16 bytes, as two
// words, which take two comparisons to find in the body where a call to
// compare bytes costs more: the first eight bytes and the last eight
// (fewer, the rest of the word masked off, when the text is shorter).
type keyWords struct {
	head, tail, mask uint64
	off              int32 // where tail starts in the text
	n                int32 // the text's length; 0 for a longer key
}

func keyWordsOf(key []byte) keyWords {
	var text [16]byte
	n := copy(text[:], key)
	if n == 0 || n != len(key) || n == len(text) {
		return keyWords{}
	}
	text[n] = ':'
	n++
	if n >= 8 {
		return keyWords{head: binary.LittleEndian.Uint64(text[:]), tail: binary.LittleEndian.Uint64(text[n-8:]),
			mask: ^uint64(0), off: int32(n - 8), n: int32(n)}
	}
	h := binary.LittleEndian.Uint64(text[:]) // the bytes past n are 0
	return keyWords{head: h, tail: h, mask: 1<<(8*n) - 1, n: int32(n)}
}

// at reports whether b holds the key and its colon at i; b must have 16
// bytes from i.
func (w *keyWords) at(b []byte, i int) bool {
	b = b[i : i+16]
	return binary.LittleEndian.Uint64(b)&w.mask == w.head &&
		binary.LittleEndian.Uint64(b[w.off:])&w.mask == w.tail
}

// stringEnd returns the offset just after the JSON string that starts at
// b[i], a '"', whether it has escapes, and whether it has bytes beyond
// ASCII; -1 when it does not end or holds a control character. Escapes
// are checked only where they are unquoted.
func stringEnd(b []byte, i int) (end int, esc, high bool) {
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return j + 1, esc, high
		case c == '\\':
			esc = true
			j++
		case c < 0x20:
			return -1, false, false
		case c >= utf8.RuneSelf:
			high = true
		}
	}
	return -1, false, false
}
