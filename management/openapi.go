package management

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/scorehub/scorehub/internal/urlpath"
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

// renderOpenAPI returns the document with the scoring route under prefix,
// when base is not empty base as its server, and without the paths of
// unserved: the patterns of optional routes the Handler does not serve, so
// that the document describes what this server answers.
func renderOpenAPI(prefix, base string, unserved []string) ([]byte, error) {
	doc := openapiJSON
	if len(unserved) > 0 {
		drop := map[string]bool{}
		for _, p := range unserved {
			drop[p] = true
		}
		var err error
		if doc, err = withoutPaths(doc, drop); err != nil {
			return nil, fmt.Errorf("management: the embedded OpenAPI document: %w", err)
		}
	}
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

// withoutPaths returns the OpenAPI document doc without the path items
// named in drop, everything else in its order, indented as the file is.
func withoutPaths(doc []byte, drop map[string]bool) ([]byte, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(doc))
	var out bytes.Buffer
	enc := jsontext.NewEncoder(&out, jsontext.Multiline(true), jsontext.WithIndent("  "))
	copyToken := func() (jsontext.Token, error) {
		tok, err := dec.ReadToken()
		if err != nil {
			return tok, err
		}
		return tok, enc.WriteToken(tok)
	}
	copyValue := func() error {
		v, err := dec.ReadValue()
		if err != nil {
			return err
		}
		return enc.WriteValue(v)
	}
	if _, err := copyToken(); err != nil { // {
		return nil, err
	}
	for dec.PeekKind() == '"' {
		name, err := copyToken()
		if err != nil {
			return nil, err
		}
		if name.String() != "paths" {
			if err := copyValue(); err != nil {
				return nil, err
			}
			continue
		}
		if _, err := copyToken(); err != nil { // {
			return nil, err
		}
		for dec.PeekKind() == '"' {
			path, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			if drop[path.String()] {
				if err := dec.SkipValue(); err != nil {
					return nil, err
				}
				continue
			}
			if err := enc.WriteToken(path); err != nil {
				return nil, err
			}
			if err := copyValue(); err != nil {
				return nil, err
			}
		}
		if _, err := copyToken(); err != nil { // }
			return nil, err
		}
	}
	if _, err := copyToken(); err != nil { // }
		return nil, err
	}
	return out.Bytes(), nil
}

// jsonString encodes s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s) // a string: cannot fail
	return string(b)
}

// serveOpenAPI is GET /api/v1/openapi.json.
func (h *Handler) serveOpenAPI(w http.ResponseWriter, r *http.Request) error {
	doc, err := h.openAPIFor(r)
	if err != nil {
		return err
	}
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("Content-Length", strconv.Itoa(len(doc)))
	w.WriteHeader(http.StatusOK)
	w.Write(doc)
	return nil
}

// mountedDoc is the OpenAPI document as served under one mount prefix.
type mountedDoc struct {
	mount string
	doc   []byte
}

// openAPIFor returns the document for r: the one rendered at New, or, for
// a Handler mounted under a prefix (http.StripPrefix) without a BaseURL,
// one whose server is that prefix, so that the routes it lists resolve
// where they are served. The last such document is kept: a host mounts a
// handler at one place, and what a client sends cannot grow the cache.
func (h *Handler) openAPIFor(r *http.Request) ([]byte, error) {
	if h.baseURL != "" {
		return h.openapi, nil
	}
	mount := urlpath.Mount(r)
	if mount == "" {
		return h.openapi, nil
	}
	if m := h.mounted.Load(); m != nil && m.mount == mount {
		return m.doc, nil
	}
	doc, err := renderOpenAPI(h.prefix, mount, h.unserved)
	if err != nil {
		return nil, err
	}
	h.mounted.Store(&mountedDoc{mount: mount, doc: doc})
	return doc, nil
}
