package management

import (
	"encoding/json"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/registry"
)

// TestOpenAPIPatternsAreTheServersRules checks the patterns the document
// gives names, user names, If-Match and a job's process against the rules
// the server applies, so that a client generated from the document refuses
// what the server refuses and no more.
func TestOpenAPIPatternsAreTheServersRules(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Pattern    string `json:"pattern"`
				Properties map[string]struct {
					Pattern string `json:"pattern"`
				} `json:"properties"`
			} `json:"schemas"`
			Parameters map[string]struct {
				Schema struct {
					Pattern string `json:"pattern"`
				} `json:"schema"`
			} `json:"parameters"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openapiJSON, &doc); err != nil {
		t.Fatal(err)
	}
	compile := func(what, pattern string) *regexp.Regexp {
		t.Helper()
		if pattern == "" {
			t.Fatalf("the document gives %s no pattern", what)
		}
		re, err := regexp.Compile(pattern)
		if err != nil {
			t.Fatalf("the pattern of %s: %v", what, err)
		}
		return re
	}
	s := doc.Components.Schemas
	name := compile("Name", s["Name"].Pattern)
	userName := compile("UserName", s["UserName"].Pattern)
	ifMatch := compile("the If-Match parameter", doc.Components.Parameters["IfMatch"].Schema.Pattern)
	jobProcess := compile("Job.process", s["Job"].Properties["process"].Pattern)

	names := []string{"iris", "a", "A.b_c-d", "0", "", ".x", "-x", "_x", "bad name", "a/b", "a@1", "é",
		strings.Repeat("a", 128), strings.Repeat("a", 129)}
	for _, n := range names {
		if got, want := name.MatchString(n), registry.ValidName(n); got != want {
			t.Errorf("Name %q: the document says %v, the server %v", n, got, want)
		}
	}
	// A user name's length is in bytes, which a pattern does not count,
	// and its presence is the schema's minLength.
	for _, n := range []string{"ann", "Ann Lee", "ünï", "a:b", ":", "tab\tx", "nul\x00", "del\x7f", "c1\u0085", "nbsp\u00a0", "日本"} {
		if got, want := userName.MatchString(n), validUserName(n); got != want {
			t.Errorf("UserName %q: the document says %v, the server %v", n, got, want)
		}
	}
	for _, h := range []string{`"3"`, `*`, `W/"3"`, `"1", "2"`, ` "1" ,, "2" `, `*, "2"`, `""`, `"x-y"`,
		`3`, `"a"b"`, `"`, `,`, ` `, `W/3`, `"1" "2"`} {
		r := httptest.NewRequest("PUT", "/", nil)
		r.Header.Set("If-Match", h)
		_, err := parsePrecondition(r, 0, "")
		if got, want := ifMatch.MatchString(h), err == nil; got != want {
			t.Errorf("If-Match %q: the document says %v, the server %v", h, got, want)
		}
	}
	for _, p := range []struct {
		process string
		ok      bool
	}{{"iris", true}, {"iris@2", true}, {"churn.v2@13", true}, {"iris@production", false}, {"iris@0", false}, {"@2", false}, {"iris@", false}} {
		if got := jobProcess.MatchString(p.process); got != p.ok {
			t.Errorf("Job.process %q: the document says %v, want %v", p.process, got, p.ok)
		}
	}
}
