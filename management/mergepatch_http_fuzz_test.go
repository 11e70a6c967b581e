package management_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/registry"
)

// FuzzPatchDeployment sends arbitrary bodies to PATCH
// /api/v1/deployments/{group}/{path}, the route FuzzMergePatch's functions
// serve. Every answer is one the route documents for a body alone (200,
// 400, 412, 422; never a 5xx) with the matching error type, a refused patch
// leaves the deployment as it was, an accepted one is what GET shows after,
// and the same patch sent again changes nothing more.
func FuzzPatchDeployment(f *testing.F) {
	for _, body := range []string{
		`{"enabled":false}`,
		`{"description":"Churn","endpoints":null}`,
		`{"endpoints":[{"alias":"b","process":"iris","timeoutMs":250}]}`,
		`{"endpoints":[{"alias":"b","process":"missing"}]}`,
		`{"revision":1,"description":null}`,
		`{"revision":2}`,
		`{"group":"other"}`,
		`{"createdAt":"2001-02-03T04:05:06Z","updatedAt":null}`,
		`[]`,
		`null`,
		`{"enabled":1e400}`,
		`{"a":1,"a":2}`,
		"{\"description\":\"\xff\"}",
	} {
		f.Add([]byte(body))
	}
	fx := newFixture(f, withoutJobs())
	const path = "/api/v1/deployments/DEFAULT/churn"
	original := registry.Deployment{Group: "DEFAULT", Path: "churn", Description: "doubles", Enabled: true,
		Endpoints: []registry.Endpoint{{Alias: "predict", Process: "double", Timeout: 1500 * time.Millisecond}}}

	f.Fuzz(func(t *testing.T, body []byte) {
		// A new record each time, at revision 1, so an input's answer does
		// not depend on the inputs before it.
		if err := fx.reg.DeleteDeployment(context.Background(), "DEFAULT", "churn", registry.AnyRevision); err != nil && !errors.Is(err, registry.ErrNotFound) {
			t.Fatal(err)
		}
		if d := fx.putDeployment(t, original); d.Revision != 1 {
			t.Fatalf("a recreated deployment is at revision %d, want 1", d.Revision)
		}
		before := fx.do(t, request{method: http.MethodGet, path: path, token: fx.admin})
		before.want(t, http.StatusOK, "")

		patch := func() response {
			return fx.do(t, request{method: http.MethodPatch, path: path, token: fx.admin, contentType: mergePatch, body: string(body)})
		}
		r := patch()
		wantTypes := map[int][]string{
			http.StatusOK:                  {""},
			http.StatusBadRequest:          {"malformed_json", "validation_failed"},
			http.StatusPreconditionFailed:  {"precondition_failed"},
			http.StatusUnprocessableEntity: {"invalid_reference"},
		}
		types, ok := wantTypes[r.status]
		if !ok || !slices.Contains(types, r.errorType()) {
			t.Fatalf("PATCH %q answered %d %q; body: %s", body, r.status, r.errorType(), r.body)
		}
		if !json.Valid(body) && r.errorType() != "malformed_json" {
			t.Fatalf("PATCH %q, not JSON, answered %d %q", body, r.status, r.errorType())
		}
		after := fx.do(t, request{method: http.MethodGet, path: path, token: fx.admin})
		after.want(t, http.StatusOK, "")
		if r.status != http.StatusOK {
			if !bytes.Equal(before.body, after.body) {
				t.Fatalf("PATCH %q answered %d but changed the deployment from %s to %s", body, r.status, before.body, after.body)
			}
			return
		}
		if d := cmp.Diff(after.json, r.json); d != "" {
			t.Fatalf("PATCH %q answered a deployment GET does not show (-GET +PATCH):\n%s", body, d)
		}
		var members map[string]any
		if json.Unmarshal(body, &members) == nil {
			if _, ok := members["revision"]; ok {
				return // a precondition the first PATCH used up
			}
		}
		again := patch()
		again.want(t, http.StatusOK, "")
		for _, m := range []map[string]any{r.json, again.json} {
			delete(m, "revision")
			delete(m, "updatedAt")
		}
		if d := cmp.Diff(r.json, again.json); d != "" {
			t.Fatalf("PATCH %q sent twice changed more than once (-once +twice):\n%s", body, d)
		}
	})
}
