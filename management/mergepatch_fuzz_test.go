package management

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/scorehub/scorehub/problem"
)

// maxNesting is the deepest nesting of arrays and objects the JSON decoder
// reads; a document nested deeper is malformed_json.
const maxNesting = 10000

// FuzzMergePatch checks decodePatch, mergeDocument and mergePatch, the
// steps of a PATCH, against refMergePatch over documents read by
// encoding/json: an input that is not strict JSON is an error and never a
// result, a result is the reference's, a patch applied twice changes
// nothing the first application did not, and neither the target nor the
// patch is changed.
func FuzzMergePatch(f *testing.F) {
	f.Add([]byte(`{"a":"b"}`), []byte(`{"a":"c"}`))
	f.Add([]byte(`{"a":{"b":"c"}}`), []byte(`{"a":{"b":"d","c":null}}`))
	f.Add([]byte(`[1,2]`), []byte(`{"a":"b","c":null}`))
	f.Fuzz(checkMergePatch)
}

// checkMergePatch checks the properties FuzzMergePatch states for one
// target and patch.
func checkMergePatch(t *testing.T, target, patch []byte) {
	t.Helper()
	targetCopy, patchCopy := bytes.Clone(target), bytes.Clone(patch)
	wantTarget, targetFault := refDecode(target)
	wantPatch, patchFault := refDecode(patch)

	p, err := decodePatch(patch)
	switch {
	case patchFault != "":
		checkPatchError(t, err, patchFault)
		return
	case !isObject(wantPatch):
		checkPatchError(t, err, problem.ValidationFailed)
		return
	case err != nil:
		t.Fatalf("decodePatch(%q): %v, want the patch", patch, err)
	}
	if d := diff(wantPatch, p); d != "" {
		t.Fatalf("decodePatch(%q) (-want +got):\n%s", patch, d)
	}

	out, err := mergeDocument(target, p)
	if !bytes.Equal(target, targetCopy) || !bytes.Equal(patch, patchCopy) {
		t.Fatal("mergeDocument changed its input bytes")
	}
	if targetFault != "" {
		if err == nil || out != nil {
			t.Fatalf("mergeDocument(%q) = %q, %v; want only an error for a target that is not strict JSON", target, out, err)
		}
		if !strings.HasPrefix(err.Error(), "management: ") {
			t.Errorf("error %q lacks the package prefix", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("mergeDocument(%q, %q): %v", target, patch, err)
	}
	got, fault := refDecode(out)
	if fault != "" {
		t.Fatalf("mergeDocument wrote %q, which is not strict JSON (%s)", out, fault)
	}
	if d := diff(refMergePatch(wantTarget, wantPatch), got); d != "" {
		t.Fatalf("merge %q into %q (-reference +got):\n%s", patch, target, d)
	}
	if d := diff(wantPatch, p); d != "" {
		t.Fatalf("mergeDocument changed the patch (-was +now):\n%s", d)
	}

	again, err := mergeDocument(out, p)
	if err != nil {
		t.Fatalf("patch the patched document again: %v", err)
	}
	if !bytes.Equal(again, out) {
		t.Fatalf("patch applied twice gave %q, once %q", again, out)
	}

	// The merge itself leaves its target alone.
	var decoded any
	if err := decodeStrict(target, &decoded); err != nil {
		t.Fatal(err)
	}
	mergePatch(decoded, p)
	if d := diff(wantTarget, decoded); d != "" {
		t.Fatalf("mergePatch changed its target (-was +now):\n%s", d)
	}
}

// checkPatchError checks that decodePatch answered a bad patch with the 400
// of type typ that the PATCH route sends.
func checkPatchError(t *testing.T, err error, typ problem.Code) {
	t.Helper()
	var he *problem.Error
	if !errors.As(err, &he) {
		t.Fatalf("decodePatch: error %v (%T), want a %s *problem.Error", err, err, typ)
	}
	if he.Status != http.StatusBadRequest || he.Code != typ {
		t.Fatalf("decodePatch: %d %s (%v), want 400 %s", he.Status, he.Code, err, typ)
	}
}

// diff is cmp.Diff for decoded JSON, called only when the values differ:
// cmp takes time quadratic in the depth of TestMergePatchNestingLimit's
// 10,000-deep documents.
func diff(want, got any) string {
	if reflect.DeepEqual(want, got) {
		return ""
	}
	return cmp.Diff(want, got)
}

func isObject(v any) bool {
	_, ok := v.(map[string]any)
	return ok
}

// refMergePatch is RFC 7396's MergePatch function as its section 2 writes
// it, over fresh maps.
func refMergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	out := map[string]any{}
	if t, ok := target.(map[string]any); ok {
		for name, v := range t {
			out[name] = v
		}
	}
	for name, v := range p {
		if v == nil {
			delete(out, name)
		} else {
			out[name] = refMergePatch(out[name], v)
		}
	}
	return out
}

// refDecode reads data with encoding/json as the strict JSON the package
// takes: valid UTF-8 and no lone surrogate escapes, no member name twice in
// one object (compared once unescaped), nesting at most maxNesting deep.
// Numbers are float64, as the package reads them; one out of float64's
// range is an error. On error it returns the error type the package answers
// with: malformed_json for a syntax fault, validation_failed for a number
// out of range.
func refDecode(data []byte) (any, problem.Code) {
	if !json.Valid(data) || !utf8.Valid(data) || hasLoneSurrogate(data) || !namesAndDepthOK(data) {
		return nil, problem.MalformedJSON
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, problem.MalformedJSON
	}
	v, ok := toFloats(v)
	if !ok {
		return nil, problem.ValidationFailed
	}
	return v, ""
}

// toFloats replaces every json.Number in v by its float64, and reports
// false when one is out of range.
func toFloats(v any) (any, bool) {
	switch v := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		return f, err == nil
	case map[string]any:
		for name, e := range v {
			f, ok := toFloats(e)
			if !ok {
				return nil, false
			}
			v[name] = f
		}
	case []any:
		for i, e := range v {
			f, ok := toFloats(e)
			if !ok {
				return nil, false
			}
			v[i] = f
		}
	}
	return v, true
}

// hasLoneSurrogate reports whether syntactically valid JSON data escapes a
// UTF-16 surrogate that is not half of a pair. A backslash in valid JSON is
// always inside a string.
func hasLoneSurrogate(data []byte) bool {
	for i := 0; i < len(data); i++ {
		if data[i] != '\\' {
			continue
		}
		i++
		if data[i] != 'u' {
			continue
		}
		r, _ := strconv.ParseUint(string(data[i+1:i+5]), 16, 16)
		i += 4
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return true
		case r >= 0xD800 && r <= 0xDBFF:
			if i+6 >= len(data) || data[i+1] != '\\' || data[i+2] != 'u' {
				return true
			}
			lo, _ := strconv.ParseUint(string(data[i+3:i+7]), 16, 16)
			if lo < 0xDC00 || lo > 0xDFFF {
				return true
			}
			i += 6
		}
	}
	return false
}

// namesAndDepthOK reports whether valid JSON data names no member twice in
// one object and nests no deeper than maxNesting.
func namesAndDepthOK(data []byte) bool {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	type level struct {
		object   bool
		names    map[string]bool
		wantName bool
	}
	var stack []level
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return true
		}
		if err != nil {
			return false
		}
		var top *level
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
		}
		if top != nil && top.object && top.wantName {
			if name, ok := tok.(string); ok {
				if top.names[name] {
					return false
				}
				top.names[name] = true
				top.wantName = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			if top != nil && top.object {
				top.wantName = true
			}
			if len(stack) == maxNesting {
				return false
			}
			stack = append(stack, level{object: tok == json.Delim('{'), names: map[string]bool{}, wantName: tok == json.Delim('{')})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		default:
			if top != nil && top.object {
				top.wantName = true
			}
		}
	}
}
