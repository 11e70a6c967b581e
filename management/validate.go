package management

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/go-playground/validator/v10"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
)

// The media types of request bodies.
const (
	mediaJSON       = "application/json"
	mediaMergePatch = "application/merge-patch+json"
)

// readBody checks that r's body is declared as mediaType (a charset
// parameter must name UTF-8) and reads it. The body is bounded by the
// BodyLimit in front of every write, whose error httperr answers with 413.
func readBody(r *http.Request, mediaType string) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); !isMediaType(ct, mediaType) {
		e := httperr.New(problem.UnsupportedMediaType,
			httperr.MediaTypeMessage("the request body must be sent as Content-Type: "+mediaType, ct))
		if r.Method == http.MethodPatch {
			e.AcceptPatch = mediaMergePatch // RFC 5789 §2.2
		}
		return nil, e
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) || httperr.From(err).Status == http.StatusRequestTimeout {
			return nil, err // 413, or 408 for the server's read timeout
		}
		return nil, httperr.New(problem.InvalidRequest, "the request body could not be read").Wrap(err)
	}
	return data, nil
}

// isMediaType reports whether a Content-Type header names want, with any
// parameters, a charset one naming UTF-8.
func isMediaType(header, want string) bool {
	if header == want {
		return true
	}
	mt, params, err := mime.ParseMediaType(header)
	if err != nil || mt != want {
		return false
	}
	cs, ok := params["charset"]
	return !ok || strings.EqualFold(cs, "utf-8") || strings.EqualFold(cs, "utf8")
}

// decodeStrict decodes data into v. JSON must be strict: valid UTF-8, no
// name twice in one object, nothing after the value, object member names
// matched exactly. Members v does not know are collected by its
// `json:",unknown"` fields and reported with the validation. A syntax
// error is malformed_json; a value of the wrong type is validation_failed
// naming its place.
func decodeStrict(data []byte, v any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return httperr.New(problem.MalformedJSON, "the request body is empty; send a JSON object")
	}
	err := json.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	var syn *jsontext.SyntacticError
	var sem *json.SemanticError
	if errors.As(err, &sem) {
		// Unmarshal reports a value it cannot hold before a syntax error
		// after it; a body that is not JSON is malformed_json all the same.
		var raw jsontext.Value
		if serr := json.Unmarshal(data, &raw); serr != nil {
			err = serr
		}
	}
	switch {
	case errors.As(err, &syn):
		if errors.Is(syn.Err, jsontext.ErrDuplicateName) {
			return httperr.Newf(problem.MalformedJSON, "the member %q appears twice in one object",
				syn.JSONPointer.LastToken()).At(string(syn.JSONPointer)).Wrap(err)
		}
		return httperr.Newf(problem.MalformedJSON, "the request body is not valid JSON (at byte %d)",
			syn.ByteOffset).At(string(syn.JSONPointer)).Wrap(err)
	case errors.As(err, &sem):
		return validationFailed([]problem.FieldError{{Pointer: string(sem.JSONPointer), Message: typeMessage(sem)}}).Wrap(err)
	}
	return httperr.New(problem.MalformedJSON, "the request body is not valid JSON").Wrap(err)
}

// typeMessage says what a value of the wrong type should have been.
func typeMessage(e *json.SemanticError) string {
	if e.GoType == nil {
		return "has a value of the wrong type"
	}
	t := e.GoType
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "must be a string"
	case reflect.Bool:
		return "must be true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "must be an integer within range"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "must be a non-negative integer within range"
	case reflect.Float32, reflect.Float64:
		return "must be a number within range"
	case reflect.Slice, reflect.Array:
		return "must be an array"
	case reflect.Struct, reflect.Map:
		return "must be an object"
	}
	return "has a value of the wrong type"
}

// unknownMembers are the members a `json:",unknown"` field collected,
// reported under the object at pointer base.
func unknownMembers(base string, m map[string]jsontext.Value) []problem.FieldError {
	if len(m) == 0 {
		return nil
	}
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	out := make([]problem.FieldError, len(names))
	for i, name := range names {
		out[i] = problem.FieldError{Pointer: base + "/" + escapePointer(name), Message: "is not a member of this object"}
	}
	return out
}

// escapePointer escapes a name as a JSON pointer token (RFC 6901).
func escapePointer(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// input is a request body type: it reports the members it did not know.
type input interface {
	unknown() []problem.FieldError
}

// check validates in and returns the 400 listing every field at fault,
// followed by extra, or nil.
func (h *Handler) check(in input, extra ...problem.FieldError) error {
	fields, err := h.wireFaults(in)
	if err != nil {
		return err
	}
	return failed(append(append(fields, in.unknown()...), extra...))
}

// checkRecord is check for the body of a registry record, whose tags say
// only what the wire requires: the record's own rules are the registry's,
// which found the faults fields (of single fields) and joint (of fields
// taken together). They are listed with the wire's as one validator would
// list them: in the order of in's fields, a field at fault hiding what is
// under it, then the joint faults, the unknown members and extra.
func (h *Handler) checkRecord(in input, fields, joint []*registry.InvalidError, extra ...problem.FieldError) error {
	wire, err := h.wireFaults(in)
	if err != nil {
		return err
	}
	at := make(map[string]string, len(wire)+len(fields))
	var order []string
	add := func(pointer, msg string) {
		if _, ok := at[pointer]; !ok { // the wire's fault first, as its tag comes first
			at[pointer] = msg
			order = append(order, pointer)
		}
	}
	for _, f := range wire {
		add(f.Pointer, f.Message)
	}
	for _, f := range fields {
		add(f.Pointer, f.Message)
	}
	var out []problem.FieldError
	walkFields(reflect.ValueOf(in), "", func(pointer string) bool {
		msg, ok := at[pointer]
		if ok {
			out = append(out, problem.FieldError{Pointer: pointer, Message: msg})
			delete(at, pointer)
		}
		return !ok
	})
	for _, p := range order {
		if msg, ok := at[p]; ok && !under(p, out) { // not a field of in: kept rather than lost
			out = append(out, problem.FieldError{Pointer: p, Message: msg})
		}
	}
	for _, f := range joint {
		out = append(out, problem.FieldError{Pointer: f.Pointer, Message: f.Message})
	}
	return failed(append(append(out, in.unknown()...), extra...))
}

// under reports whether pointer is below the place of one of fields.
func under(pointer string, fields []problem.FieldError) bool {
	for _, f := range fields {
		if strings.HasPrefix(pointer, f.Pointer+"/") {
			return true
		}
	}
	return false
}

// failed is the 400 listing fields, or nil when there are none.
func failed(fields []problem.FieldError) error {
	if len(fields) > 0 {
		return validationFailed(fields)
	}
	return nil
}

// wireFaults are the fields of in that break its validate tags, in the
// order of the fields.
func (h *Handler) wireFaults(in input) ([]problem.FieldError, error) {
	err := h.validate.Struct(in)
	var verrs validator.ValidationErrors
	switch {
	case errors.As(err, &verrs):
		fields := make([]problem.FieldError, len(verrs))
		for i, fe := range verrs {
			fields[i] = problem.FieldError{Pointer: namespacePointer(fe.Namespace()), Message: ruleMessage(fe)}
		}
		return fields, nil
	case err != nil:
		return nil, fmt.Errorf("management: validate %T: %w", in, err)
	}
	return nil, nil
}

// walkFields calls visit with the JSON pointer of every field under v, in
// the order the validator checks them: a struct's fields as declared, a
// list before its items. It goes under a field only when visit returns
// true. Fields tagged validate:"-" are passed over.
func walkFields(v reflect.Value, pointer string, visit func(pointer string) bool) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" || f.Tag.Get("validate") == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			p := pointer + "/" + escapePointer(name)
			if visit(p) {
				walkFields(v.Field(i), p, visit)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			p := pointer + "/" + strconv.Itoa(i)
			if visit(p) {
				walkFields(v.Index(i), p, visit)
			}
		}
	}
}

// newValidator returns the validator of request bodies: field names are
// their JSON names, and these rules are added: name (registry.ValidName),
// nocontrol (no control characters), username (validUserName), password
// (at most the 72 bytes bcrypt reads) and timestamp (RFC 3339).
func newValidator() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			return ""
		}
		if name == "" {
			return f.Name
		}
		return name
	})
	// Registering rules under fixed, unused names cannot fail.
	_ = v.RegisterValidation("name", func(fl validator.FieldLevel) bool {
		return registry.ValidName(fl.Field().String())
	})
	_ = v.RegisterValidation("nocontrol", func(fl validator.FieldLevel) bool {
		return strings.IndexFunc(fl.Field().String(), unicode.IsControl) < 0
	})
	_ = v.RegisterValidation("username", func(fl validator.FieldLevel) bool {
		return validUserName(fl.Field().String())
	})
	_ = v.RegisterValidation("password", func(fl validator.FieldLevel) bool {
		return len(fl.Field().String()) <= maxPasswordBytes
	})
	_ = v.RegisterValidation("timestamp", func(fl validator.FieldLevel) bool {
		_, err := time.Parse(time.RFC3339, fl.Field().String())
		return err == nil
	})
	return v
}

// namespacePointer turns a validator namespace with JSON names
// ("deploymentInput.endpoints[2].alias") into a JSON pointer
// ("/endpoints/2/alias"). The first element is the Go type's name.
func namespacePointer(ns string) string {
	_, rest, ok := strings.Cut(ns, ".")
	if !ok {
		return ""
	}
	var b strings.Builder
	for _, part := range strings.Split(rest, ".") {
		name, index, indexed := strings.Cut(part, "[")
		b.WriteByte('/')
		b.WriteString(escapePointer(name))
		if indexed {
			b.WriteByte('/')
			b.WriteString(strings.TrimSuffix(index, "]"))
		}
	}
	return b.String()
}

// ruleMessage says in a phrase which rule a field breaks.
func ruleMessage(fe validator.FieldError) string {
	p := fe.Param()
	switch fe.Tag() {
	case "required":
		return "is required"
	case "name":
		return "must be a name: 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit"
	case "nocontrol":
		return "must not contain control characters"
	case "username":
		return "must be a user name: at most 256 bytes, no colon and no control characters"
	case "password":
		return fmt.Sprintf("must be at most %d bytes long: bcrypt reads no more", maxPasswordBytes)
	case "timestamp":
		return "must be a date and time in RFC 3339, such as 2030-01-31T00:00:00Z"
	case "unique":
		return "appears more than once"
	case "min", "max":
		bound := "at least"
		if fe.Tag() == "max" {
			bound = "at most"
		}
		switch fe.Kind() {
		case reflect.String:
			return fmt.Sprintf("must be %s %s characters long", bound, p)
		case reflect.Slice, reflect.Array, reflect.Map:
			return fmt.Sprintf("must have %s %s items", bound, p)
		}
		return fmt.Sprintf("must be %s %s", bound, p)
	}
	return "is not valid (" + fe.Tag() + ")"
}
