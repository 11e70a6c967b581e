// Package openapi checks the reference server's OpenAPI document against
// the server: the document is valid OpenAPI 3.0, and real answers of every
// operation it lists, successes and errors, are answers it allows. The
// harness checks the answers of every other suite against it too.
package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/scorehub/scorehub/e2e/internal/harness"
)

func TestMain(m *testing.M) {
	// The validator decodes a body by its media type and knows no JSON
	// Lines: the payload log's export is checked as the array of its
	// lines, which is how the document gives its schema.
	openapi3filter.RegisterBodyDecoder(mediaJSONLines, decodeJSONLines)
	os.Exit(harness.Main(m))
}

// mediaJSONLines is the media type of the payload log's export.
const mediaJSONLines = "application/x-ndjson"

// decodeJSONLines decodes a JSON Lines body into the array of its
// values: one JSON value a line, every line ended by a newline, none
// empty; an empty body is no value.
func decodeJSONLines(body io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
	b, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	values := []any{}
	for n := 1; len(b) > 0; n++ {
		line, rest, ok := bytes.Cut(b, []byte("\n"))
		if !ok {
			return nil, fmt.Errorf("JSON Lines: line %d does not end with a newline", n)
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber() // as the validator's JSON decoder
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("JSON Lines: line %d: %w", n, err)
		}
		if dec.More() {
			return nil, fmt.Errorf("JSON Lines: line %d holds more than one value", n)
		}
		values = append(values, v)
		b = rest
	}
	return values, nil
}
