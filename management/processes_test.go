package management_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestProcessCatalog(t *testing.T) {
	f := newFixture(t)
	r := f.do(t, request{method: "GET", path: "/api/v1/processes", token: f.reader})
	r.want(t, 200, "")
	var names []string
	for _, p := range r.list {
		names = append(names, p.(map[string]any)["name"].(string))
	}
	if d := cmp.Diff([]string{"double", "iris"}, names); d != "" {
		t.Errorf("names (-want +got):\n%s", d)
	}

	r = f.do(t, request{method: "GET", path: "/api/v1/processes/double", token: f.reader})
	r.want(t, 200, "")
	want := map[string]any{
		"name": "double", "description": "Doubles x.",
		"input":  []any{map[string]any{"name": "x", "kind": "number", "required": true}},
		"output": []any{map[string]any{"name": "double", "kind": "number", "required": false}},
	}
	if d := cmp.Diff(want, r.json); d != "" {
		t.Errorf("double, which has no sample (-want +got):\n%s", d)
	}

	r = f.do(t, request{method: "GET", path: "/api/v1/processes/iris", token: f.reader})
	r.want(t, 200, "")
	var iris struct {
		Input []struct {
			Name     string
			Kind     string
			Required bool
		}
		Output []struct{ Name string }
		Sample []map[string]any
	}
	if err := json.Unmarshal(r.body, &iris); err != nil {
		t.Fatal(err)
	}
	if len(iris.Input) != 4 || !iris.Input[0].Required || iris.Input[0].Kind != "number" {
		t.Errorf("iris input %+v, want four required numbers", iris.Input)
	}
	if len(iris.Output) != 4 || iris.Output[0].Name != "prediction(species)" {
		t.Errorf("iris output %+v, want the prediction and three confidences", iris.Output)
	}
	if len(iris.Sample) == 0 || iris.Sample[0]["sepal_length"] == nil {
		t.Errorf("iris sample %v, want rows a client can post", iris.Sample)
	}

	f.do(t, request{method: "GET", path: "/api/v1/processes/nope", token: f.reader}).want(t, 404, "not_found")
}
