package management

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// openapiJSON is the OpenAPI 3.0.3 document of the management routes, the
// token routes and the scoring route, as the standalone server lays them
// out: the scoring route under DefaultScoringPrefix, everything relative to
// the server the document is read from.
//
//go:embed openapi.json
var openapiJSON []byte

// What renderOpenAPI replaces in openapiJSON; each occurs exactly once.
const (
	openapiScoringPath = `"/webapi/{group}/api/v1/services/{path}/{alias}":`
	openapiServerURL   = `"url": "/"`
)

// renderOpenAPI returns the document with the scoring route under prefix
// and, when base is not empty, base as its server.
func renderOpenAPI(prefix, base string) ([]byte, error) {
	doc := openapiJSON
	for _, r := range []struct{ old, new string }{
		{openapiScoringPath, jsonString(prefix+"/{group}/api/v1/services/{path}/{alias}") + ":"},
		{openapiServerURL, `"url": ` + jsonString(base)},
	} {
		if r.old == openapiServerURL && base == "" {
			continue
		}
		if n := bytes.Count(doc, []byte(r.old)); n != 1 {
			return nil, fmt.Errorf("management: the embedded OpenAPI document has %s %d times, not once", r.old, n)
		}
		doc = bytes.Replace(doc, []byte(r.old), []byte(r.new), 1)
	}
	if !json.Valid(doc) {
		return nil, fmt.Errorf("management: the OpenAPI document is not valid JSON")
	}
	return append([]byte(nil), doc...), nil
}

// jsonString encodes s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s) // a string: cannot fail
	return string(b)
}

// serveOpenAPI is GET /api/v1/openapi.json.
func (h *Handler) serveOpenAPI(w http.ResponseWriter, r *http.Request) error {
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("Content-Length", strconv.Itoa(len(h.openapi)))
	w.WriteHeader(http.StatusOK)
	w.Write(h.openapi)
	return nil
}
