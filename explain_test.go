package scorehub

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/registry/registrytest"
)

// TestExplainedEndpoint: an endpoint with explanations on answers each
// row's contributions after its results, adding up to the model's margin
// (the log-odds of the second class), with Top keeping the largest; the
// endpoint without them answers as before; and a job on it carries them.
// An endpoint of a process, an unknown method or a model that cannot
// explain itself is refused at deploy.
func TestExplainedEndpoint(t *testing.T) {
	h := newService(t, Config{AdminPassword: adminPassword, Formats: append(DefaultFormats(), &registrytest.LinearFormat{})}).Handler()
	admin := signIn(t, h, "admin", adminPassword)
	artifact := string(registrytest.LinearArtifact(0.5, []string{"age", "income"}, []float64{2, -1}))
	if code, body := admin.send("POST", "/api/v1/models/churn/versions?classes=no,yes", "application/octet-stream", artifact); code != http.StatusCreated {
		t.Fatalf("upload: %d %s", code, body)
	}
	admin.must("PUT", "/api/v1/deployments/DEFAULT/churn", `{"enabled":true,"endpoints":[
		{"alias":"plain","model":"churn@1"},
		{"alias":"why","model":"churn@1","explain":{"method":"treeshap"}},
		{"alias":"top","model":"churn@1","explain":{"method":"treeshap","top":1}}]}`, http.StatusCreated, nil)

	if _, body := admin.do("GET", "/api/v1/deployments/DEFAULT/churn", ""); !strings.Contains(body, `"explain":{"method":"treeshap","top":1,"class":"predicted"}`) {
		t.Errorf("the deployment shows %s, want its endpoints' explanations", body)
	}
	anon := client{t: t, h: h}
	score := func(alias string) map[string]any {
		t.Helper()
		var out struct{ Data []map[string]any }
		anon.must("POST", "/webapi/DEFAULT/api/v1/services/churn/"+alias, `{"data":[{"age":3,"income":2}]}`, http.StatusOK, &out)
		return out.Data[0]
	}
	plain, why, top := score("plain"), score("why"), score("top")
	for k := range plain {
		if strings.HasPrefix(k, "contribution(") {
			t.Errorf("the endpoint without explanations answers %s", k)
		}
	}
	want := map[string]float64{"contribution(age)": 6, "contribution(income)": -2, "contribution(bias)": 0.5}
	for k, v := range want {
		if got, ok := why[k].(float64); !ok || math.Abs(got-v) > 1e-12 {
			t.Errorf("%s = %v, want %v", k, why[k], v)
		}
	}
	margin := why["contribution(age)"].(float64) + why["contribution(income)"].(float64) + why["contribution(bias)"].(float64)
	if p := why["confidence(yes)"].(float64); math.Abs(1/(1+math.Exp(-margin))-p) > 1e-12 {
		t.Errorf("bias + contributions = %v, whose logistic is not confidence(yes) %v", margin, p)
	}
	if top["contribution(age)"] != 6.0 || top["contribution(income)"] != nil || top["contribution(bias)"] != 0.5 {
		t.Errorf("top 1 answered age %v, income %v, bias %v; want 6, null, 0.5", top["contribution(age)"], top["contribution(income)"], top["contribution(bias)"])
	}

	var p struct{ Output []struct{ Name string } }
	anon.must("GET", "/api/v1/endpoints/DEFAULT/churn/why/process", "", http.StatusOK, &p)
	var outs []string
	for _, o := range p.Output {
		outs = append(outs, o.Name)
	}
	if got := strings.Join(outs, " "); !strings.HasSuffix(got, "contribution(age) contribution(income) contribution(bias)") {
		t.Errorf("the explained endpoint's outputs are %s, want the contributions last", got)
	}

	var job struct{ ID string }
	admin.must("POST", "/executions/jobs", `{"endpoint":{"group":"DEFAULT","path":"churn","alias":"why"},"data":[{"age":1,"income":1}]}`, http.StatusCreated, &job)
	var result struct{ Data []map[string]any }
	testutil.Eventually(t, 10*time.Second, "the job's result", func() bool {
		code, body := admin.do("GET", "/executions/jobs/"+job.ID+"/result", "")
		return code == http.StatusOK && json.Unmarshal([]byte(body), &result) == nil
	})
	if got := result.Data[0]["contribution(age)"]; got != 2.0 {
		t.Errorf("the job's contribution(age) = %v, want 2", got)
	}

	pmml := readFixture(t, "registry/pmml/testdata/iris_forest.pmml", "registry/pmml/testdata/iris_forest.rows.json")
	admin.upload("forest", pmml.file, pmml.Meta)
	linear := readFixture(t, "registry/lightgbm/testdata/linear.txt", "registry/lightgbm/testdata/linear.rows.json")
	admin.upload("linear", linear.file, linear.Meta)
	for _, c := range []struct{ name, endpoint, pointer, why string }{
		{"a process", `{"alias":"x","process":"nope","explain":{"method":"treeshap"}}`, "/endpoints/0/explain", ""},
		{"an unknown method", `{"alias":"x","model":"churn@1","explain":{"method":"kernel"}}`, "/endpoints/0/explain/method", ""},
		{"an unknown class", `{"alias":"x","model":"churn@1","explain":{"method":"treeshap","class":"yes"}}`, "/endpoints/0/explain/class", ""},
		{"a model that cannot explain itself", `{"alias":"x","model":"forest@1","explain":{"method":"treeshap"}}`, "/endpoints/0/explain",
			"this pmml model cannot explain them: only a regression TreeModel"},
		{"a model whose file keeps it from explaining", `{"alias":"x","model":"linear@1","explain":{"method":"treeshap"}}`, "/endpoints/0/explain",
			"linear trees"},
	} {
		code, body := admin.do("PUT", "/api/v1/deployments/DEFAULT/refused", `{"endpoints":[`+c.endpoint+`]}`)
		if code/100 != 4 || !strings.Contains(body, `"`+c.pointer+`"`) || !strings.Contains(body, c.why) {
			t.Errorf("%s: %d %s, want a refusal at %s saying %q", c.name, code, body, c.pointer, c.why)
		}
	}
}

// TestExplanationsMustAddUp: an endpoint is refused explanations, with a
// 422 at its explain saying which sample row fails, when its model's
// contributions do not add up to the margin the model computes; the same
// model is deployed without them.
func TestExplanationsMustAddUp(t *testing.T) {
	h := newService(t, Config{AdminPassword: adminPassword, Formats: append(DefaultFormats(), misattributing{})}).Handler()
	admin := signIn(t, h, "admin", adminPassword)
	artifact := misattributingMagic + string(registrytest.LinearArtifact(0.5, []string{"age"}, []float64{2}))
	if code, body := admin.send("POST", "/api/v1/models/churn/versions?classes=no,yes", "application/octet-stream", artifact); code != http.StatusCreated {
		t.Fatalf("upload: %d %s", code, body)
	}
	code, body := admin.do("PUT", "/api/v1/deployments/DEFAULT/churn", `{"endpoints":[{"alias":"why","model":"churn@1","explain":{"method":"treeshap"}}]}`)
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, `"/endpoints/0/explain"`) ||
		!strings.Contains(body, "do not add up to its predictions: for row 1 of its sample") {
		t.Errorf("explanations that miss the margin: %d %s, want a 422 at /endpoints/0/explain naming the row", code, body)
	}
	admin.must("PUT", "/api/v1/deployments/DEFAULT/churn", `{"endpoints":[{"alias":"plain","model":"churn@1"}]}`, http.StatusCreated, nil)
}

// misattributingMagic starts a file of misattributing.
const misattributingMagic = "misattributing\n"

// misattributing reads a LinearFormat file after its magic as
// LinearFormat does, but explains each row with one more in its bias than
// the model's margin has.
type misattributing struct{}

func (misattributing) Name() string { return "misattributing" }

func (misattributing) Detect(b []byte) bool { return strings.HasPrefix(string(b), misattributingMagic) }

func (misattributing) Load(b []byte, meta process.ModelMetadata) (*process.LoadedModel, error) {
	lm, err := new(registrytest.LinearFormat).Load(b[len(misattributingMagic):], meta)
	if err != nil {
		return nil, err
	}
	lm.Process = offByOne{lm.Process}
	return lm, nil
}

type offByOne struct{ process.Process }

func (p offByOne) Explain(ctx context.Context, in process.Input) (*process.Explanation, error) {
	e, err := p.Process.(process.Explainer).Explain(ctx, in)
	if err != nil {
		return nil, err
	}
	n := len(e.Features) + 1
	for r := range e.Rows() {
		e.Values[0][r*n+n-1]++
	}
	return e, nil
}
