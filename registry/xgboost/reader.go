package xgboost

import (
	"errors"
	"fmt"
)

// kind is the type of the next value a [reader] holds.
type kind uint8

const (
	kindNull kind = iota + 1
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

func (k kind) String() string {
	switch k {
	case kindNull:
		return "null"
	case kindBool:
		return "a boolean"
	case kindNumber:
		return "a number"
	case kindString:
		return "a string"
	case kindArray:
		return "an array"
	case kindObject:
		return "an object"
	}
	return "nothing"
}

// reader pulls the values of one JSON or UBJSON document in order, so that
// one walker builds the typed model from either format without holding a
// generic tree of the whole file. Every method reads the next value (or
// key) of the container it is in; a value must be read or skipped before
// the next one.
type reader interface {
	// peek returns the kind of the next value without consuming it.
	peek() (kind, error)
	// beginObject consumes the start of an object.
	beginObject() error
	// key returns the next key of the open object, or ok false after
	// consuming the object's end. The key is valid until the next call.
	key() (k []byte, ok bool, err error)
	// beginArray consumes the start of an array and returns how many
	// elements it declares, or -1 when the format does not say.
	beginArray() (n int, err error)
	// more reports whether the open array has another element, consuming
	// the array's end when not.
	more() (bool, error)
	// float64 reads a number.
	float64() (float64, error)
	// float32 reads a number rounded once to float32, as XGBoost parses it.
	float32() (float32, error)
	// int reads a number that must be an integer.
	int() (int64, error)
	// str reads a string.
	str() (string, error)
	// bool reads a boolean.
	bool() (bool, error)
	// skip consumes the next value, whatever it is.
	skip() error
	// end checks that nothing but whitespace follows the document.
	end() error
	// offset is the position in the input, for error messages.
	offset() int
}

// maxNesting bounds how deep containers nest in a model file. XGBoost
// nests six deep; the bound keeps a hostile file from growing the stack.
const maxNesting = 64

// syntaxError is a malformed document: what was wrong and where.
type syntaxError struct {
	format string // "JSON" or "UBJSON"
	off    int
	msg    string
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("the file is not valid %s at byte %d: %s", e.format, e.off, e.msg)
}

var errTooDeep = errors.New("containers nest more than 64 deep")
