package management_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/management"
	"github.com/scorehub/scorehub/registry/payloads"
	"github.com/scorehub/scorehub/tokens"
)

// The OpenAPI document is checked here for what the standard library can
// read: which operations it lists and what their error answers refer to.
// Its validity as OpenAPI 3.0 and every answer of the real server against
// it are checked in the e2e module, whose dependencies the library does not
// take on.

// apiDoc is the part of an OpenAPI document these tests read.
type apiDoc struct {
	OpenAPI string `json:"openapi"`
	Servers []struct {
		URL string `json:"url"`
	} `json:"servers"`
	// Paths maps a path to its members: operations by lower-case method,
	// and the path's common parameters.
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Responses map[string]apiResponse `json:"responses"`
	} `json:"components"`
}

// apiOperation is an operation's answers by status.
type apiOperation struct {
	Responses map[string]apiResponse `json:"responses"`
}

// apiResponse is one answer, or a reference to one in the components.
type apiResponse struct {
	Ref     string `json:"$ref"`
	Content map[string]struct {
		Schema struct {
			Ref string `json:"$ref"`
		} `json:"schema"`
	} `json:"content"`
}

// apiMethods are the members of a path item that are operations.
var apiMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

func parseDoc(t *testing.T, spec []byte) *apiDoc {
	t.Helper()
	var doc apiDoc
	if err := json.Unmarshal(spec, &doc); err != nil {
		t.Fatalf("the OpenAPI document is not JSON of the expected shape: %v", err)
	}
	return &doc
}

// operations returns the document's operations by mux pattern.
func (d *apiDoc) operations(t *testing.T) map[string]apiOperation {
	t.Helper()
	out := map[string]apiOperation{}
	for path, item := range d.Paths {
		for _, m := range apiMethods {
			raw, ok := item[m]
			if !ok {
				continue
			}
			var op apiOperation
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatalf("%s %s: %v", m, path, err)
			}
			out[strings.ToUpper(m)+" "+path] = op
		}
	}
	return out
}

// documented lists the document's operations as mux patterns.
func (d *apiDoc) documented(t *testing.T) []string {
	t.Helper()
	var out []string
	for op := range d.operations(t) {
		out = append(out, op)
	}
	sort.Strings(out)
	return out
}

// resolve returns r, or the component response it refers to.
func (d *apiDoc) resolve(t *testing.T, r apiResponse) apiResponse {
	t.Helper()
	if r.Ref == "" {
		return r
	}
	name, ok := strings.CutPrefix(r.Ref, "#/components/responses/")
	c, found := d.Components.Responses[name]
	if !ok || !found {
		t.Fatalf("response reference %q resolves to nothing", r.Ref)
	}
	return c
}

// scoringRoute is the route of the document that the scoring handler
// serves.
var scoringRoute = "POST " + management.DefaultScoringPrefix + "/{group}/api/v1/services/{path}/{alias}"

// TestOpenAPIDescribesExactlyTheRoutesServed compares the document with the
// routes in both directions: every route the management mux serves, the
// token routes of Config.TokenRoutes and the scoring route are documented,
// and nothing else is, whichever optional routes the configuration leaves
// out.
func TestOpenAPIDescribesExactlyTheRoutesServed(t *testing.T) {
	allTokens := []string{"GET " + tokens.PathTokenService, "GET " + tokens.PathRenew, "GET " + tokens.PathExchange, "GET " + tokens.PathJWKS}
	var full *fixture // every route
	for _, tt := range []struct {
		name     string
		tokens   []string // Config.TokenRoutes; nil: the fixture's token service's
		payloads bool     // set Config.Payloads
		opts     []func(*fixtureOptions)
	}{
		{"every route", allTokens, true, []func(*fixtureOptions){withAccounts()}},
		{"without accounts or a payload log", nil, false, nil},
		{"without jobs", nil, false, []func(*fixtureOptions){withoutJobs()}},
		{"without token routes", []string{}, false, nil},
	} {
		opts := tt.opts
		if tt.tokens != nil || tt.payloads {
			cfg := management.Config{TokenRoutes: tt.tokens}
			if tt.payloads {
				cfg.Payloads = payloadLog(t)
			}
			opts = append(opts, withConfig(cfg))
		}
		f := newFixture(t, opts...)
		if full == nil {
			full = f
		}
		t.Run(tt.name, func(t *testing.T) {
			doc := parseDoc(t, f.handler.OpenAPI())
			tokenRoutes := tt.tokens
			if tokenRoutes == nil {
				// Without an OpenID Connect provider, the exchange is
				// neither served nor documented.
				tokenRoutes = []string{"GET " + tokens.PathTokenService, "GET " + tokens.PathRenew, "GET " + tokens.PathJWKS}
			}
			served := append(f.handler.Routes(), tokenRoutes...)
			served = append(served, scoringRoute)
			sort.Strings(served)
			if d := cmp.Diff(served, doc.documented(t)); d != "" {
				t.Errorf("routes served (-) and documented (+):\n%s", d)
			}
		})
	}

	doc := parseDoc(t, full.handler.OpenAPI())
	if doc.OpenAPI != "3.0.3" {
		t.Errorf("openapi %q, want 3.0.3", doc.OpenAPI)
	}

	// Every operation says what it answers on error, in the one error shape.
	for name, op := range doc.operations(t) {
		if _, ok := op.Responses["500"]; !ok {
			t.Errorf("%s documents no 500", name)
		}
		for code, r := range op.Responses {
			if code[0] < '4' {
				continue
			}
			if s, ok := doc.resolve(t, r).Content["application/json"]; !ok || s.Schema.Ref != "#/components/schemas/Error" {
				t.Errorf("%s %s is not documented as the Error schema", name, code)
			}
		}
	}
}

// payloadLog is a payload log in memory, for a Handler that serves the
// payload log's route.
func payloadLog(t *testing.T) *payloads.MemStore {
	t.Helper()
	log := payloads.NewMemStore(payloads.Options{})
	t.Cleanup(func() { log.Close() })
	return log
}

func TestOpenAPIServedWithConfiguredPrefixAndServer(t *testing.T) {
	tests := []struct {
		name        string
		cfg         management.Config
		scoringPath string
		server      string
	}{
		{"defaults", management.Config{}, "/webapi/{group}/api/v1/services/{path}/{alias}", "/"},
		{"prefix and base URL", management.Config{ScoringPrefix: "/score/v2", BaseURL: "https://public.example/hub"},
			"/score/v2/{group}/api/v1/services/{path}/{alias}", "https://public.example/hub"},
		{"root prefix", management.Config{ScoringPrefix: "/"}, "/{group}/api/v1/services/{path}/{alias}", "/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, withConfig(tt.cfg))
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodGet, "/api/v1/openapi.json", nil)
			f.handler.ServeHTTP(rec, req)
			if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" {
				t.Fatalf("answered %d %s", rec.Code, rec.Header().Get("Content-Type"))
			}
			if !bytes.Equal(rec.Body.Bytes(), f.handler.OpenAPI()) {
				t.Error("the document served is not Handler.OpenAPI()")
			}
			doc := parseDoc(t, rec.Body.Bytes())
			if _, ok := doc.operations(t)["POST "+tt.scoringPath]; !ok {
				t.Errorf("no POST %s in %v", tt.scoringPath, doc.documented(t))
			}
			if len(doc.Servers) != 1 || doc.Servers[0].URL != tt.server {
				t.Errorf("servers %v, want %s", doc.Servers, tt.server)
			}
		})
	}
}
