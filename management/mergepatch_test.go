package management

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
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
