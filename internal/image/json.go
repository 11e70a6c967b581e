package image

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// EncodeJSON is the content of a state file of JSON: indented with tabs
// and without HTML escaping, as the file is for people to read, not for a
// browser.
func EncodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "\t")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// DecodeJSON reads the state file b into v, a pointer to the file's
// struct, refusing a member v does not know and anything after the
// document, and returns the file's format version, its member "format",
// which must be one of known. The version is read first, so that a file
// of another format is reported as such, not as a member this build does
// not know.
func DecodeJSON(b []byte, v any, known ...int) (int, error) {
	var f struct {
		Format *int `json:"format"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return 0, err
	}
	if f.Format == nil {
		return 0, errors.New("no format version")
	}
	if !slices.Contains(known, *f.Format) {
		names := make([]string, len(known))
		for i, k := range known {
			names[i] = strconv.Itoa(k)
		}
		return 0, fmt.Errorf("format version %d is not supported (this build reads %s)", *f.Format, strings.Join(names, " and "))
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return *f.Format, dec.Decode(v)
}
