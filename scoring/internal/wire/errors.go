package wire

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/scorehub/scorehub/problem"
)

// The answers the codec gives a request it refuses: the HTTP edge sends
// them as they are.

// BadRequest is a 400 of code typ, with its message made from format and
// args, pointing at pointer ("" for none).
func BadRequest(typ problem.Code, pointer, format string, args ...any) *problem.Error {
	return &problem.Error{Status: http.StatusBadRequest, Code: typ, Message: fmt.Sprintf(format, args...), Pointer: pointer}
}

func tooLarge(typ problem.Code, format string, args ...any) *problem.Error {
	return &problem.Error{Status: http.StatusRequestEntityTooLarge, Code: typ, Message: fmt.Sprintf(format, args...)}
}

func errBodyTooLarge(max int64) *problem.Error {
	return tooLarge(problem.BodyTooLarge, "the request body is larger than %d bytes", max)
}

// pointer returns the JSON Pointer (RFC 6901) of key in row row of "data".
func pointer(row int, key string) string {
	var b strings.Builder
	b.Grow(len("/data/") + 8 + len(key))
	b.WriteString("/data/")
	b.WriteString(strconv.Itoa(row))
	b.WriteByte('/')
	b.WriteString(escapePointer(key))
	return b.String()
}

// escapePointer escapes a key as a JSON Pointer token: ~ as ~0, / as ~1.
func escapePointer(key string) string {
	if !strings.ContainsAny(key, "~/") {
		return key
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
}

func rowPointer(row int) string { return "/data/" + strconv.Itoa(row) }
