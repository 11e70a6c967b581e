package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// Conformance checks answers against an OpenAPI document: the status,
// headers and body of the operation a request routes to, or, where no
// operation matches (an unknown path, a method a path does not take), a
// JSON 404 or 405 in the Error schema. It is safe for concurrent use.
type Conformance struct {
	doc    *openapi3.T
	router routers.Router
}

// MediaJSONLines is the media type of JSON Lines, one JSON value a line,
// which the payload log's export (GET …/payloads?format=jsonl) answers.
const MediaJSONLines = "application/x-ndjson"

// registerDecoders registers the validator's decoders of XML and JSON
// Lines, once: its decoders are the validator package's, shared by every
// Conformance.
var registerDecoders sync.Once

// LoadConformance parses spec, fails unless it is a valid OpenAPI 3.0
// document, and routes request paths alone: the document's servers section
// names where it was read from or the public base URL, which the
// management package's own tests check.
func LoadConformance(spec []byte) (*Conformance, error) {
	registerDecoders.Do(func() {
		// The validator decodes a body by its media type and knows no
		// XML: a PMML artifact is checked as the string its schema says.
		openapi3filter.RegisterBodyDecoder("application/xml", openapi3filter.PlainBodyDecoder)
		openapi3filter.RegisterBodyDecoder("text/xml", openapi3filter.PlainBodyDecoder)
		// Nor JSON Lines: the payload log's export is checked as the
		// array of its lines, which is how the document gives its schema.
		openapi3filter.RegisterBodyDecoder(MediaJSONLines, decodeJSONLines)
	})
	doc, err := openapi3.NewLoader().LoadFromData(spec)
	if err != nil {
		return nil, fmt.Errorf("harness: load the OpenAPI document: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("harness: the OpenAPI document is not valid: %w", err)
	}
	strictNullable(doc)
	doc.Servers = nil
	router, err := legacy.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("harness: route the OpenAPI document: %w", err)
	}
	return &Conformance{doc: doc, router: router}, nil
}

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
			return nil, fmt.Errorf("harness: JSON Lines: line %d does not end with a newline", n)
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber() // as the validator's JSON decoder
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("harness: JSON Lines: line %d: %w", n, err)
		}
		if dec.More() {
			return nil, fmt.Errorf("harness: JSON Lines: line %d holds more than one value", n)
		}
		values = append(values, v)
		b = rest
	}
	return values, nil
}

// strictNullable makes the validator read nullable as OpenAPI 3.0.3 does.
// There nullable adds null to the type of its own schema only: null must
// still pass that schema's enum, allOf, anyOf and oneOf, and nullable
// without a type admits nothing. The validator admits null wherever
// nullable is set, so that {"nullable": true, "allOf": [{"$ref": …}]}
// would pass a null a generated client rejects; here such a schema loses
// its nullable.
func strictNullable(doc *openapi3.T) {
	seen := map[*openapi3.Schema]bool{}
	var visit func(ref *openapi3.SchemaRef)
	visit = func(ref *openapi3.SchemaRef) {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return
		}
		s := ref.Value
		seen[s] = true
		for _, r := range append(append(append(openapi3.SchemaRefs{s.Items, s.Not}, s.AllOf...), s.AnyOf...), s.OneOf...) {
			visit(r)
		}
		for _, r := range s.Properties {
			visit(r)
		}
		visit(s.AdditionalProperties.Schema)
		if s.Nullable {
			s.Nullable = admitsNull(s)
		}
	}
	visitContent := func(c openapi3.Content) {
		for _, mt := range c {
			visit(mt.Schema)
		}
	}
	visitParameters := func(ps openapi3.Parameters) {
		for _, p := range ps {
			if p.Value != nil {
				visit(p.Value.Schema)
				visitContent(p.Value.Content)
			}
		}
	}
	visitResponses := func(rs map[string]*openapi3.ResponseRef) {
		for _, r := range rs {
			if r.Value == nil {
				continue
			}
			visitContent(r.Value.Content)
			for _, h := range r.Value.Headers {
				if h.Value != nil {
					visit(h.Value.Schema)
				}
			}
		}
	}
	if c := doc.Components; c != nil {
		for _, s := range c.Schemas {
			visit(s)
		}
		for _, p := range c.Parameters {
			visitParameters(openapi3.Parameters{p})
		}
		for _, b := range c.RequestBodies {
			if b.Value != nil {
				visitContent(b.Value.Content)
			}
		}
		visitResponses(c.Responses)
	}
	for _, item := range doc.Paths.Map() {
		visitParameters(item.Parameters)
		for _, op := range item.Operations() {
			visitParameters(op.Parameters)
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				visitContent(op.RequestBody.Value.Content)
			}
			if op.Responses != nil {
				visitResponses(op.Responses.Map())
			}
		}
	}
}

// admitsNull reports whether s, whose subschemas strictNullable has
// visited, admits null under OpenAPI 3.0.3.
func admitsNull(s *openapi3.Schema) bool {
	if !s.Nullable || s.Type == nil || len(*s.Type) == 0 {
		return false
	}
	if len(s.Enum) > 0 && !slices.Contains(s.Enum, any(nil)) {
		return false
	}
	count := func(refs openapi3.SchemaRefs) int {
		n := 0
		for _, r := range refs {
			if r.Value != nil && r.Value.VisitJSON(nil) == nil {
				n++
			}
		}
		return n
	}
	return count(s.AllOf) == len(s.AllOf) &&
		(len(s.AnyOf) == 0 || count(s.AnyOf) > 0) &&
		(len(s.OneOf) == 0 || count(s.OneOf) == 1) &&
		(s.Not == nil || s.Not.Value == nil || s.Not.Value.VisitJSON(nil) != nil)
}

// Version returns the document's openapi member.
func (c *Conformance) Version() string { return c.doc.OpenAPI }

// Operations lists the document's operations as mux patterns
// ("GET /api/v1/queues/{name}"), sorted.
func (c *Conformance) Operations() []string {
	var out []string
	for path, item := range c.doc.Paths.Map() {
		for method := range item.Operations() {
			out = append(out, method+" "+path)
		}
	}
	sort.Strings(out)
	return out
}

// Responses lists the answers the document's operations say they give,
// as the operation and the status ("GET /api/v1/queues/{name} 404"),
// sorted. A range (4XX) or default is not listed.
func (c *Conformance) Responses() []string {
	var out []string
	for path, item := range c.doc.Paths.Map() {
		for method, op := range item.Operations() {
			for status := range op.Responses.Map() {
				if _, err := strconv.Atoi(status); err == nil {
					out = append(out, method+" "+path+" "+status)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// Check checks one answer, whose body was read into body, to req. It
// returns the operation req routes to ("" for none) and what the document
// does not allow in the answer.
func (c *Conformance) Check(req *http.Request, res *http.Response, body []byte) (string, error) {
	if req.Method == http.MethodHead {
		return "", nil
	}
	// Route on the escaped path, as the mux does: a%2Fb is one segment.
	routed := req.Clone(req.Context())
	routed.URL.Path, routed.URL.RawPath = req.URL.EscapedPath(), ""
	route, params, err := c.router.FindRoute(routed)
	for _, v := range params {
		if v == "" && err == nil {
			// The legacy router lets a path variable match nothing
			// (/api/v1/queues for /api/v1/queues/{name}); the mux does not.
			err = routers.ErrPathNotFound
		}
	}
	if err != nil {
		// No operation: the answer must be a JSON 404 or 405.
		if res.StatusCode != http.StatusNotFound && res.StatusCode != http.StatusMethodNotAllowed {
			return "", fmt.Errorf("the document has no operation for the request (%v)", err)
		}
		if ct := res.Header.Get("Content-Type"); ct != "application/json" {
			return "", fmt.Errorf("Content-Type %s, want application/json", ct)
		}
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			return "", err
		}
		return "", c.doc.Components.Schemas["Error"].Value.VisitJSON(v)
	}
	op := route.Method + " " + route.Path
	return op, openapi3filter.ValidateResponse(req.Context(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: routed, PathParams: params, Route: route},
		Status:                 res.StatusCode,
		Header:                 res.Header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	})
}

// Transport returns an http.RoundTripper that sends requests through next
// and checks every answer, failing t for one the document does not allow.
func (c *Conformance) Transport(t testing.TB, next http.RoundTripper) *CheckingTransport {
	return &CheckingTransport{t: t, c: c, next: next, seen: map[string]bool{}, responses: map[string]bool{}}
}

// CheckingTransport is the http.RoundTripper of [Conformance.Transport]. It
// is safe for concurrent use.
type CheckingTransport struct {
	t    testing.TB
	c    *Conformance
	next http.RoundTripper

	mu        sync.Mutex
	seen      map[string]bool // operations answered
	responses map[string]bool // operations answered, with the status
}

// RoundTrip sends req and checks the answer. The answer's body is read
// whole and handed on.
func (ct *CheckingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := ct.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	op, err := ct.c.Check(req, res, body)
	if err != nil {
		ct.t.Errorf("%s %s answered %d, which the OpenAPI document does not allow: %v\nbody: %.2000s", req.Method, req.URL.Path, res.StatusCode, err, body)
	}
	if op != "" {
		ct.mu.Lock()
		ct.seen[op] = true
		ct.responses[op+" "+strconv.Itoa(res.StatusCode)] = true
		ct.mu.Unlock()
	}
	return res, nil
}

// Seen lists the operations whose answers went through the transport,
// sorted.
func (ct *CheckingTransport) Seen() []string {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	out := make([]string, 0, len(ct.seen))
	for op := range ct.seen {
		out = append(out, op)
	}
	sort.Strings(out)
	return out
}

// SeenResponses lists the operations whose answers went through the
// transport, each with the status it answered, as [Conformance.Responses]
// does.
func (ct *CheckingTransport) SeenResponses() []string {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	out := make([]string, 0, len(ct.responses))
	for r := range ct.responses {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}
