package management

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/scorehub/scorehub/problem"
)

// TestMergePatchRFC7396 runs the examples of RFC 7396, Appendix A.
func TestMergePatchRFC7396(t *testing.T) {
	tests := []struct{ target, patch, want string }{
		{`{"a":"b"}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"b"}`, `{"b":"c"}`, `{"a":"b","b":"c"}`},
		{`{"a":"b"}`, `{"a":null}`, `{}`},
		{`{"a":"b","b":"c"}`, `{"a":null}`, `{"b":"c"}`},
		{`{"a":["b"]}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"c"}`, `{"a":["b"]}`, `{"a":["b"]}`},
		{`{"a":{"b":"c"}}`, `{"a":{"b":"d","c":null}}`, `{"a":{"b":"d"}}`},
		{`{"a":[{"b":"c"}]}`, `{"a":[1]}`, `{"a":[1]}`},
		{`["a","b"]`, `["c","d"]`, `["c","d"]`},
		{`{"a":"b"}`, `["c"]`, `["c"]`},
		{`{"a":"foo"}`, `null`, `null`},
		{`{"a":"foo"}`, `"bar"`, `"bar"`},
		{`{"e":null}`, `{"a":1}`, `{"e":null,"a":1}`},
		{`[1,2]`, `{"a":"b","c":null}`, `{"a":"b"}`},
		{`{}`, `{"a":{"bb":{"ccc":null}}}`, `{"a":{"bb":{}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.target+" + "+tt.patch, func(t *testing.T) {
			var target, patch, want any
			for _, p := range []struct {
				s string
				v *any
			}{{tt.target, &target}, {tt.patch, &patch}, {tt.want, &want}} {
				if err := json.Unmarshal([]byte(p.s), p.v); err != nil {
					t.Fatal(err)
				}
			}
			if d := cmp.Diff(want, mergePatch(target, patch)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// A patch applied once is not changed by it, so a retried PATCH applies the
// same patch again.
func TestMergePatchLeavesThePatchAlone(t *testing.T) {
	patch := map[string]any{"a": map[string]any{"b": nil, "c": []any{1.0}}, "d": nil}
	before, _ := json.Marshal(patch)
	mergePatch(map[string]any{"a": map[string]any{"b": 1.0}}, patch)
	mergePatch(map[string]any{}, patch)
	after, _ := json.Marshal(patch)
	if string(before) != string(after) {
		t.Errorf("patch became %s, was %s", after, before)
	}
}

// Patches nested as deep as the decoder reads merge; one level deeper is
// malformed JSON, in the patch or in the document. The fuzz corpus keeps
// to shallower documents, which it runs thousands of times a second.
func TestMergePatchNestingLimit(t *testing.T) {
	deep := func(n int) []byte {
		return []byte(strings.Repeat(`{"a":`, n-1) + `{"b":null}` + strings.Repeat(`}`, n-1))
	}
	for _, tt := range []struct {
		name           string
		target, patch  []byte
		patchMalformed bool
	}{
		{"patch at the limit", []byte(`{"a":1}`), deep(maxNesting), false},
		{"both at the limit", deep(maxNesting), deep(maxNesting), false},
		{"patch over the limit", []byte(`{}`), deep(maxNesting + 1), true},
		{"target over the limit", deep(maxNesting + 1), []byte(`{"a":1}`), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodePatch(tt.patch)
			if got := err != nil; got != tt.patchMalformed {
				t.Fatalf("decodePatch: %v, want an error: %t", err, tt.patchMalformed)
			}
			checkMergePatch(t, tt.target, tt.patch)
		})
	}
}

// decodePatch answers a patch that is not a JSON object with the 400 the
// PATCH route sends.
func TestDecodePatchRefuses(t *testing.T) {
	for _, tt := range []struct {
		name, patch string
		want        problem.Error
	}{
		{"empty", " ", problem.Error{Status: 400, Code: problem.MalformedJSON, Message: "the request body is empty; send a JSON object"}},
		{"an array", `[{"a":1}]`, problem.Error{Status: 400, Code: problem.ValidationFailed, Message: "the body must be a JSON object",
			Fields: []problem.FieldError{{Pointer: "", Message: "must be a JSON object"}}}},
		{"a name twice", `{"a":1,"\u0061":2}`, problem.Error{Status: 400, Code: problem.MalformedJSON, Message: `the member "a" appears twice in one object`, Pointer: "/a"}},
		// Found while writing FuzzMergePatch: the message said "has a value
		// of the wrong type".
		{"a number out of range", `{"a":{"b":1e400}}`, problem.Error{Status: 400, Code: problem.ValidationFailed, Message: "/a/b must be a number within range", Pointer: "/a/b",
			Fields: []problem.FieldError{{Pointer: "/a/b", Message: "must be a number within range"}}}},
		// Found by FuzzMergePatch: a number out of range followed by bytes
		// that are not JSON was validation_failed, as if the body were JSON.
		{"a number out of range, then garbage", `2e700A`, problem.Error{Status: 400, Code: problem.MalformedJSON, Message: "the request body is not valid JSON (at byte 5)"}},
		{"an object out of range, then a second value", `{"a":1e400}{}`, problem.Error{Status: 400, Code: problem.MalformedJSON, Message: "the request body is not valid JSON (at byte 11)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodePatch([]byte(tt.patch))
			var got *problem.Error
			if !errors.As(err, &got) {
				t.Fatalf("decodePatch: %v (%T), want a *problem.Error", err, err)
			}
			if d := cmp.Diff(tt.want, *got, cmpopts.IgnoreFields(problem.Error{}, "Err")); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
