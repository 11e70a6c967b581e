package xgboost

import (
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonReader reads the JSON XGBoost writes: strict RFC 8259 JSON, plus the
// tokens NaN, Infinity and -Infinity XGBoost writes for such floats (a
// categorical split's threshold is NaN).
type jsonReader struct {
	b     []byte
	pos   int
	stack []jsonFrame
	buf   []byte // an unescaped key
}

// jsonFrame is one open container.
type jsonFrame struct {
	object bool
	first  bool // no element read yet
}

func newJSONReader(b []byte) *jsonReader { return &jsonReader{b: b} }

func (r *jsonReader) offset() int { return r.pos }

func (r *jsonReader) fail(msg string) error {
	return &syntaxError{format: "JSON", off: r.pos, msg: msg}
}

func (r *jsonReader) space() {
	for r.pos < len(r.b) {
		switch r.b[r.pos] {
		case ' ', '\t', '\n', '\r':
			r.pos++
		default:
			return
		}
	}
}

func (r *jsonReader) peek() (kind, error) {
	r.space()
	if r.pos >= len(r.b) {
		return 0, r.fail("unexpected end of file")
	}
	switch c := r.b[r.pos]; {
	case c == '{':
		return kindObject, nil
	case c == '[':
		return kindArray, nil
	case c == '"':
		return kindString, nil
	case c == 't' || c == 'f':
		return kindBool, nil
	case c == 'n':
		return kindNull, nil
	case c == '-' || c == 'N' || c == 'I' || (c >= '0' && c <= '9'):
		return kindNumber, nil
	default:
		return 0, r.fail("unexpected character " + strconv.QuoteRune(rune(c)))
	}
}

func (r *jsonReader) open(object bool, c byte) error {
	r.space()
	if r.pos >= len(r.b) || r.b[r.pos] != c {
		return r.fail("expected " + strconv.QuoteRune(rune(c)))
	}
	if len(r.stack) >= maxNesting {
		return r.fail(errTooDeep.Error())
	}
	r.pos++
	r.stack = append(r.stack, jsonFrame{object: object, first: true})
	return nil
}

func (r *jsonReader) beginObject() error { return r.open(true, '{') }

func (r *jsonReader) beginArray() (int, error) { return -1, r.open(false, '[') }

// close reports whether the open container ends here, consuming its end or
// the comma before the next element.
func (r *jsonReader) close(object bool) (bool, error) {
	n := len(r.stack)
	if n == 0 || r.stack[n-1].object != object {
		return false, r.fail("no container of that kind is open")
	}
	end := byte(']')
	if object {
		end = '}'
	}
	r.space()
	if r.pos >= len(r.b) {
		return false, r.fail("unexpected end of file")
	}
	f := &r.stack[n-1]
	if r.b[r.pos] == end {
		r.pos++
		r.stack = r.stack[:n-1]
		return true, nil
	}
	if !f.first {
		if r.b[r.pos] != ',' {
			return false, r.fail("expected ',' or " + strconv.QuoteRune(rune(end)))
		}
		r.pos++
		r.space()
		if r.pos < len(r.b) && r.b[r.pos] == end {
			return false, r.fail("trailing comma")
		}
	}
	f.first = false
	return false, nil
}

func (r *jsonReader) key() ([]byte, bool, error) {
	done, err := r.close(true)
	if err != nil || done {
		return nil, false, err
	}
	k, err := r.stringBytes()
	if err != nil {
		return nil, false, err
	}
	r.space()
	if r.pos >= len(r.b) || r.b[r.pos] != ':' {
		return nil, false, r.fail("expected ':'")
	}
	r.pos++
	return k, true, nil
}

func (r *jsonReader) more() (bool, error) {
	done, err := r.close(false)
	return !done && err == nil, err
}

// stringBytes reads a string; the bytes are the input's own unless the
// string has escapes, and valid until the next call.
func (r *jsonReader) stringBytes() ([]byte, error) {
	r.space()
	if r.pos >= len(r.b) || r.b[r.pos] != '"' {
		return nil, r.fail("expected a string")
	}
	r.pos++
	start := r.pos
	for r.pos < len(r.b) {
		c := r.b[r.pos]
		switch {
		case c == '"':
			s := r.b[start:r.pos]
			r.pos++
			if !utf8.Valid(s) {
				return nil, r.fail("string is not valid UTF-8")
			}
			return s, nil
		case c == '\\':
			return r.unescape(start)
		case c < 0x20:
			return nil, r.fail("control character in string")
		}
		r.pos++
	}
	return nil, r.fail("unterminated string")
}

// unescape reads the rest of a string that has escapes, from start.
func (r *jsonReader) unescape(start int) ([]byte, error) {
	out := append(r.buf[:0], r.b[start:r.pos]...)
	for r.pos < len(r.b) {
		c := r.b[r.pos]
		switch {
		case c == '"':
			r.pos++
			r.buf = out
			if !utf8.Valid(out) {
				return nil, r.fail("string is not valid UTF-8")
			}
			return out, nil
		case c < 0x20:
			return nil, r.fail("control character in string")
		case c != '\\':
			out = append(out, c)
			r.pos++
			continue
		}
		if r.pos+1 >= len(r.b) {
			return nil, r.fail("unterminated string")
		}
		e := r.b[r.pos+1]
		r.pos += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			u, ok := r.hex4()
			if !ok {
				return nil, r.fail("invalid \\u escape")
			}
			if utf16.IsSurrogate(u) {
				if r.pos+1 < len(r.b) && r.b[r.pos] == '\\' && r.b[r.pos+1] == 'u' {
					r.pos += 2
					u2, ok := r.hex4()
					if !ok {
						return nil, r.fail("invalid \\u escape")
					}
					u = utf16.DecodeRune(u, u2)
				} else {
					u = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, u)
		default:
			return nil, r.fail("invalid escape")
		}
	}
	return nil, r.fail("unterminated string")
}

func (r *jsonReader) hex4() (rune, bool) {
	if len(r.b)-r.pos < 4 {
		return 0, false
	}
	v, err := strconv.ParseUint(string(r.b[r.pos:r.pos+4]), 16, 16)
	if err != nil {
		return 0, false
	}
	r.pos += 4
	return rune(v), true
}

// number returns the next number token.
func (r *jsonReader) number() ([]byte, error) {
	r.space()
	start := r.pos
	for _, w := range [...]string{"NaN", "Infinity", "-Infinity"} {
		if len(r.b)-r.pos >= len(w) && string(r.b[r.pos:r.pos+len(w)]) == w {
			r.pos += len(w)
			return r.b[start:r.pos], nil
		}
	}
	for r.pos < len(r.b) {
		c := r.b[r.pos]
		if (c < '0' || c > '9') && c != '-' && c != '+' && c != '.' && c != 'e' && c != 'E' {
			break
		}
		r.pos++
	}
	tok := r.b[start:r.pos]
	if !isJSONNumber(tok) {
		r.pos = start
		return nil, r.fail("expected a number")
	}
	return tok, nil
}

// isJSONNumber reports whether s is a number as RFC 8259 spells one.
func isJSONNumber(s []byte) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(s) && s[i] == '0' {
		i++
	} else if digits() == 0 {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

func (r *jsonReader) parse(bits int) (float64, error) {
	tok, err := r.number()
	if err != nil {
		return 0, err
	}
	switch string(tok) {
	case "NaN":
		return math.NaN(), nil
	case "Infinity":
		return math.Inf(1), nil
	case "-Infinity":
		return math.Inf(-1), nil
	}
	v, err := strconv.ParseFloat(string(tok), bits)
	if err != nil {
		// Out of range: the value is ±Inf, as XGBoost's reader makes it.
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return 0, r.fail("invalid number")
		}
	}
	return v, nil
}

func (r *jsonReader) float64() (float64, error) { return r.parse(64) }

func (r *jsonReader) float32() (float32, error) {
	v, err := r.parse(32)
	return float32(v), err
}

func (r *jsonReader) int() (int64, error) {
	r.space()
	start := r.pos
	tok, err := r.number()
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(string(tok), 10, 64)
	if err == nil {
		return v, nil
	}
	// XGBoost writes integers plainly; 1E0 or 1.0 is still an integer.
	f, ferr := strconv.ParseFloat(string(tok), 64)
	if ferr != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		r.pos = start
		return 0, r.fail("expected an integer, found " + string(tok))
	}
	return int64(f), nil
}

func (r *jsonReader) str() (string, error) {
	s, err := r.stringBytes()
	return string(s), err
}

func (r *jsonReader) literal(w string) bool {
	if len(r.b)-r.pos >= len(w) && string(r.b[r.pos:r.pos+len(w)]) == w {
		r.pos += len(w)
		return true
	}
	return false
}

func (r *jsonReader) bool() (bool, error) {
	r.space()
	switch {
	case r.literal("true"):
		return true, nil
	case r.literal("false"):
		return false, nil
	}
	return false, r.fail("expected a boolean")
}

func (r *jsonReader) skip() error {
	k, err := r.peek()
	if err != nil {
		return err
	}
	switch k {
	case kindObject:
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
	case kindArray:
		if _, err := r.beginArray(); err != nil {
			return err
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
	case kindString:
		_, err := r.stringBytes()
		return err
	case kindNumber:
		_, err := r.number()
		return err
	case kindBool:
		_, err := r.bool()
		return err
	}
	if !r.literal("null") {
		return r.fail("expected null")
	}
	return nil
}

func (r *jsonReader) end() error {
	if len(r.stack) > 0 {
		return r.fail("the document is not complete")
	}
	r.space()
	if r.pos != len(r.b) {
		return r.fail("bytes follow the document")
	}
	return nil
}
