package management

import (
	"fmt"
	"math"

	"github.com/go-json-experiment/json"
	"github.com/scorehub/scorehub/problem"
)

// decodePatch reads a merge patch document: strict JSON, and an object, the
// only kind of patch that leaves a record a record.
func decodePatch(data []byte) (map[string]any, error) {
	var v any
	if err := decodeStrict(data, &v); err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, validationFailed([]problem.FieldError{{Pointer: "", Message: "must be a JSON object"}})
	}
	return m, nil
}

// patchRevision returns the revision a patch names, 0 when it names none.
func patchRevision(patch map[string]any) (uint64, error) {
	v, ok := patch["revision"]
	if !ok || v == nil {
		return 0, nil
	}
	f, ok := v.(float64)
	if !ok || f < 0 || f != math.Trunc(f) || f > 1<<53 {
		return 0, validationFailed([]problem.FieldError{{Pointer: "/revision", Message: "must be a non-negative integer within range"}})
	}
	return uint64(f), nil
}

// mergeDocument applies patch to the JSON document doc and returns the
// result as JSON.
func mergeDocument(doc []byte, patch map[string]any) ([]byte, error) {
	var target any
	if err := json.Unmarshal(doc, &target); err != nil {
		return nil, fmt.Errorf("management: read document to patch: %w", err)
	}
	out, err := json.Marshal(mergePatch(target, patch), json.Deterministic(true))
	if err != nil {
		return nil, fmt.Errorf("management: encode patched document: %w", err)
	}
	return out, nil
}

// mergePatch applies a JSON merge patch (RFC 7396) to target, both as
// decoded into any, and returns the result. A member the patch sets to null
// is removed; an object merges member by member; anything else, arrays
// included, replaces what was there. Neither target nor patch is changed:
// each object the patch reaches is copied, so the same patch can be applied
// again to a fresh read when a concurrent write made the first one stale.
// The result shares what the patch leaves alone with target and what the
// patch sets with patch, so it must not be changed either.
func mergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, _ := target.(map[string]any)
	out := make(map[string]any, len(t)+len(p))
	for name, v := range t {
		out[name] = v
	}
	for name, v := range p {
		if v == nil {
			delete(out, name)
			continue
		}
		out[name] = mergePatch(out[name], v)
	}
	return out
}
