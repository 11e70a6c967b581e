package management_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/registry/pmml"
)

// TestModelUploadWarnings: a file its format read leniently is uploaded,
// and the answer and the version's view say what was read so; a file read
// as it is written has no warnings.
func TestModelUploadWarnings(t *testing.T) {
	f := newFixture(t, withModelFormat(pmml.Format{}))
	art, err := os.ReadFile(filepath.Join("..", "registry", "pmml", "testdata", "r", "iris_rpart.pmml"))
	if err != nil {
		t.Fatal(err)
	}
	want := []any{`the SimpleSetPredicate on "Species": an Array says it holds 3 values but holds 2; the 2 it holds were read`}
	r := f.upload(t, "petals", "", string(art))
	r.want(t, 201, "")
	if d := cmp.Diff(want, r.json["warnings"]); d != "" {
		t.Errorf("the upload's answer: warnings (-want +got):\n%s", d)
	}
	r = f.do(t, request{method: "GET", path: "/api/v1/models/petals/versions/1", token: f.reader})
	r.want(t, 200, "")
	if d := cmp.Diff(want, r.json["warnings"]); d != "" {
		t.Errorf("the version: warnings (-want +got):\n%s", d)
	}

	r = f.upload(t, "linear", "", linear(1))
	r.want(t, 201, "")
	if w, ok := r.json["warnings"]; ok {
		t.Errorf("a file read as written: warnings %v, want none", w)
	}
}
