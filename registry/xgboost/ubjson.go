package xgboost

import (
	"encoding/binary"
	"math"
	"strconv"
)

// ubjReader reads Universal Binary JSON (UBJSON, ubjson.org, draft 12), the
// binary format XGBoost writes to .ubj files: markers Z N T F i U I l L d D
// C S H [ { and the optimized containers ($ type, # count), numbers
// big-endian. Every declared count is checked against the bytes left before
// anything is sized by it, and containers nest at most maxNesting deep.
type ubjReader struct {
	b     []byte
	pos   int
	stack []ubjFrame
	// marker is the marker of the next value once read (or implied by a
	// typed container), 0 before.
	marker byte
}

// ubjFrame is one open container.
type ubjFrame struct {
	object bool
	typ    byte  // the $ marker every element has; 0 when each has its own
	n      int64 // elements (object entries) left; -1 when not declared
}

func newUBJReader(b []byte) *ubjReader { return &ubjReader{b: b} }

func (r *ubjReader) offset() int { return r.pos }

func (r *ubjReader) fail(msg string) error {
	return &syntaxError{format: "UBJSON", off: r.pos, msg: msg}
}

func (r *ubjReader) byte() (byte, error) {
	if r.pos >= len(r.b) {
		return 0, r.fail("unexpected end of file")
	}
	c := r.b[r.pos]
	r.pos++
	return c, nil
}

// next returns the marker of the next value without consuming the value.
func (r *ubjReader) next() (byte, error) {
	if r.marker != 0 {
		return r.marker, nil
	}
	if n := len(r.stack); n > 0 && r.stack[n-1].typ != 0 {
		r.marker = r.stack[n-1].typ
		return r.marker, nil
	}
	for {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		if c != 'N' {
			r.marker = c
			return c, nil
		}
	}
}

// take consumes the marker next returned.
func (r *ubjReader) take() (byte, error) {
	c, err := r.next()
	r.marker = 0
	return c, err
}

func (r *ubjReader) peek() (kind, error) {
	c, err := r.next()
	if err != nil {
		return 0, err
	}
	switch c {
	case 'Z':
		return kindNull, nil
	case 'T', 'F':
		return kindBool, nil
	case 'i', 'U', 'I', 'l', 'L', 'd', 'D', 'H':
		return kindNumber, nil
	case 'C', 'S':
		return kindString, nil
	case '[':
		return kindArray, nil
	case '{':
		return kindObject, nil
	}
	return 0, r.fail("unknown marker " + strconv.QuoteRune(rune(c)))
}

// size is the bytes one value of a fixed-size marker takes after it, or -1.
func size(marker byte) int {
	switch marker {
	case 'Z', 'T', 'F':
		return 0
	case 'i', 'U', 'C':
		return 1
	case 'I':
		return 2
	case 'l', 'd':
		return 4
	case 'L', 'D':
		return 8
	}
	return -1
}

// integer reads the payload of an integer marker.
func (r *ubjReader) integer(marker byte) (int64, error) {
	n := size(marker)
	if n <= 0 || marker == 'd' || marker == 'D' || marker == 'C' {
		return 0, r.fail("expected an integer marker, found " + strconv.QuoteRune(rune(marker)))
	}
	if len(r.b)-r.pos < n {
		return 0, r.fail("unexpected end of file")
	}
	p := r.b[r.pos : r.pos+n]
	r.pos += n
	switch marker {
	case 'i':
		return int64(int8(p[0])), nil
	case 'U':
		return int64(p[0]), nil
	case 'I':
		return int64(int16(binary.BigEndian.Uint16(p))), nil
	case 'l':
		return int64(int32(binary.BigEndian.Uint32(p))), nil
	}
	return int64(binary.BigEndian.Uint64(p)), nil
}

// length reads a length or count: an integer marker and a non-negative
// value no larger than the bytes left.
func (r *ubjReader) length() (int, error) {
	c, err := r.byte()
	if err != nil {
		return 0, err
	}
	n, err := r.integer(c)
	if err != nil {
		return 0, err
	}
	if n < 0 || n > int64(len(r.b)-r.pos) {
		return 0, r.fail("length " + strconv.FormatInt(n, 10) + " is negative or longer than the rest of the file")
	}
	return int(n), nil
}

// open reads the optional $ type and # count of a container just begun.
func (r *ubjReader) open(object bool) (int, error) {
	if len(r.stack) >= maxNesting {
		return 0, r.fail(errTooDeep.Error())
	}
	f := ubjFrame{object: object, n: -1}
	if r.pos < len(r.b) && r.b[r.pos] == '$' {
		r.pos++
		t, err := r.byte()
		if err != nil {
			return 0, err
		}
		if t == 'N' || (size(t) < 0 && t != 'S' && t != 'H' && t != '[' && t != '{') {
			return 0, r.fail("invalid container type " + strconv.QuoteRune(rune(t)))
		}
		f.typ = t
		if r.pos >= len(r.b) || r.b[r.pos] != '#' {
			return 0, r.fail("a typed container must declare its count")
		}
	}
	if r.pos < len(r.b) && r.b[r.pos] == '#' {
		r.pos++
		n, err := r.length()
		if err != nil {
			return 0, err
		}
		// Every element takes at least one byte (its marker, or an object
		// key's length), and a typed one exactly its payload.
		per := 1
		if object {
			per = 2
		}
		if s := size(f.typ); f.typ != 0 && s >= 0 {
			per = s
			if object {
				per += 2
			}
		}
		if per > 0 && n > (len(r.b)-r.pos)/per {
			return 0, r.fail("container declares " + strconv.Itoa(n) + " elements, more than the rest of the file holds")
		}
		if per == 0 && n > len(r.b)-r.pos {
			return 0, r.fail("container declares " + strconv.Itoa(n) + " elements, more than the file could reasonably hold")
		}
		f.n = int64(n)
	}
	r.stack = append(r.stack, f)
	return int(f.n), nil
}

func (r *ubjReader) beginObject() error {
	c, err := r.take()
	if err != nil {
		return err
	}
	if c != '{' {
		return r.fail("expected an object, found " + strconv.QuoteRune(rune(c)))
	}
	_, err = r.open(true)
	return err
}

func (r *ubjReader) beginArray() (int, error) {
	c, err := r.take()
	if err != nil {
		return 0, err
	}
	if c != '[' {
		return 0, r.fail("expected an array, found " + strconv.QuoteRune(rune(c)))
	}
	return r.open(false)
}

// close reports whether the open container has ended, consuming its end.
func (r *ubjReader) close(object bool) (bool, error) {
	if r.marker != 0 {
		return false, r.fail("a value was left unread")
	}
	n := len(r.stack)
	if n == 0 || r.stack[n-1].object != object {
		return false, r.fail("no container of that kind is open")
	}
	f := &r.stack[n-1]
	if f.n >= 0 {
		if f.n == 0 {
			r.stack = r.stack[:n-1]
			return true, nil
		}
		f.n--
		return false, nil
	}
	end := byte(']')
	if object {
		end = '}'
	}
	for r.pos < len(r.b) && r.b[r.pos] == 'N' {
		r.pos++
	}
	if r.pos < len(r.b) && r.b[r.pos] == end {
		r.pos++
		r.stack = r.stack[:n-1]
		return true, nil
	}
	return false, nil
}

func (r *ubjReader) key() ([]byte, bool, error) {
	done, err := r.close(true)
	if err != nil || done {
		return nil, false, err
	}
	n, err := r.length()
	if err != nil {
		return nil, false, err
	}
	k := r.b[r.pos : r.pos+n]
	r.pos += n
	return k, true, nil
}

func (r *ubjReader) more() (bool, error) {
	done, err := r.close(false)
	return !done && err == nil, err
}

func (r *ubjReader) float64() (float64, error) {
	c, err := r.take()
	if err != nil {
		return 0, err
	}
	switch c {
	case 'd':
		if len(r.b)-r.pos < 4 {
			return 0, r.fail("unexpected end of file")
		}
		v := math.Float32frombits(binary.BigEndian.Uint32(r.b[r.pos:]))
		r.pos += 4
		return float64(v), nil
	case 'D':
		if len(r.b)-r.pos < 8 {
			return 0, r.fail("unexpected end of file")
		}
		v := math.Float64frombits(binary.BigEndian.Uint64(r.b[r.pos:]))
		r.pos += 8
		return v, nil
	case 'H':
		s, err := r.payload()
		if err != nil {
			return 0, err
		}
		v, err := strconv.ParseFloat(string(s), 64)
		if err != nil || !isJSONNumber(s) {
			return 0, r.fail("invalid high-precision number")
		}
		return v, nil
	case 'i', 'U', 'I', 'l', 'L':
		v, err := r.integer(c)
		return float64(v), err
	}
	return 0, r.fail("expected a number, found " + strconv.QuoteRune(rune(c)))
}

func (r *ubjReader) float32() (float32, error) {
	c, err := r.next()
	if err != nil {
		return 0, err
	}
	switch c {
	case 'd':
		r.marker = 0
		if len(r.b)-r.pos < 4 {
			return 0, r.fail("unexpected end of file")
		}
		v := math.Float32frombits(binary.BigEndian.Uint32(r.b[r.pos:]))
		r.pos += 4
		return v, nil
	case 'H':
		r.marker = 0
		s, err := r.payload()
		if err != nil {
			return 0, err
		}
		v, err := strconv.ParseFloat(string(s), 32)
		if err != nil || !isJSONNumber(s) {
			return 0, r.fail("invalid high-precision number")
		}
		return float32(v), nil
	}
	v, err := r.float64()
	return float32(v), err
}

func (r *ubjReader) int() (int64, error) {
	c, err := r.next()
	if err != nil {
		return 0, err
	}
	switch c {
	case 'i', 'U', 'I', 'l', 'L':
		r.marker = 0
		return r.integer(c)
	}
	v, err := r.float64()
	if err != nil {
		return 0, err
	}
	if v != math.Trunc(v) || math.Abs(v) > 1<<53 {
		return 0, r.fail("expected an integer, found " + strconv.FormatFloat(v, 'g', -1, 64))
	}
	return int64(v), nil
}

// payload reads the length and bytes of a string or high-precision number.
func (r *ubjReader) payload() ([]byte, error) {
	n, err := r.length()
	if err != nil {
		return nil, err
	}
	s := r.b[r.pos : r.pos+n]
	r.pos += n
	return s, nil
}

func (r *ubjReader) str() (string, error) {
	c, err := r.take()
	if err != nil {
		return "", err
	}
	switch c {
	case 'C':
		b, err := r.byte()
		return string(rune(b)), err
	case 'S':
		s, err := r.payload()
		return string(s), err
	}
	return "", r.fail("expected a string, found " + strconv.QuoteRune(rune(c)))
}

func (r *ubjReader) bool() (bool, error) {
	c, err := r.take()
	if err != nil {
		return false, err
	}
	switch c {
	case 'T':
		return true, nil
	case 'F':
		return false, nil
	}
	return false, r.fail("expected a boolean, found " + strconv.QuoteRune(rune(c)))
}

func (r *ubjReader) skip() error {
	c, err := r.next()
	if err != nil {
		return err
	}
	switch c {
	case '[':
		if _, err := r.beginArray(); err != nil {
			return err
		}
		f := r.stack[len(r.stack)-1]
		if s := size(f.typ); s >= 0 && f.n >= 0 {
			// A typed array of fixed-size values: its length is checked.
			r.pos += int(f.n) * s
			r.stack = r.stack[:len(r.stack)-1]
			return nil
		}
		for {
			ok, err := r.more()
			if err != nil || !ok {
				return err
			}
			if err := r.skip(); err != nil {
				return err
			}
		}
	case '{':
		if err := r.beginObject(); err != nil {
			return err
		}
		for {
			_, ok, err := r.key()
			if err != nil || !ok {
				return err
			}
			if err := r.skip(); err != nil {
				return err
			}
		}
	case 'S', 'H':
		r.marker = 0
		_, err := r.payload()
		return err
	case 'Z', 'T', 'F':
		r.marker = 0
		return nil
	}
	if n := size(c); n > 0 {
		r.marker = 0
		if len(r.b)-r.pos < n {
			return r.fail("unexpected end of file")
		}
		r.pos += n
		return nil
	}
	return r.fail("unknown marker " + strconv.QuoteRune(rune(c)))
}

func (r *ubjReader) end() error {
	if len(r.stack) > 0 || r.marker != 0 {
		return r.fail("the document is not complete")
	}
	if r.pos != len(r.b) {
		return r.fail("bytes follow the document")
	}
	return nil
}
