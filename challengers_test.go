package scorehub

import (
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/registry/registrytest"
	"github.com/scorehub/scorehub/scoring"
)

// challengerService is a service holding model churn: version 1 (the
// score x) and version 2 (the score x-1), classifiers of no and yes, so
// that they disagree where 0 < x < 1; and version 3, a regressor.
func challengerService(t *testing.T) client {
	t.Helper()
	h := newService(t, Config{AdminPassword: adminPassword, Formats: []process.ModelFormat{&registrytest.LinearFormat{}}}).Handler()
	admin := signIn(t, h, "admin", adminPassword)
	for _, v := range []struct {
		bias  float64
		query string
	}{{0, "?classes=no,yes"}, {-1, "?classes=no,yes"}, {0, ""}} {
		artifact := string(registrytest.LinearArtifact(v.bias, []string{"x"}, []float64{1}))
		if code, body := admin.send("POST", "/api/v1/models/churn/versions"+v.query, "application/octet-stream", artifact); code != http.StatusCreated {
			t.Fatalf("upload: %d %s", code, body)
		}
	}
	admin.must("PUT", "/api/v1/models/churn/aliases/production", `{"version":1}`, http.StatusCreated, nil)
	return admin
}

// comparison is a challenger as GET …/challengers shows it.
type comparison struct {
	Model, Mode, Version, Error string
	AgreementRate               *float64
	Compared, Agreed, Answered  uint64
	Errors, Unavailable         uint64
	Delta                       scoring.Histogram
	ChallengerLatency           scoring.Histogram
}

type challengersAnswer struct {
	Champion struct {
		Model, Version, AliasETag string
	}
	Challengers []comparison
}

// TestShadowChallenger: a shadow challenger leaves the champion's answer
// as it is, and the comparison route shows, soon after, the rows both
// answered, how often they agreed and the distribution of the difference
// of the confidence of the champion's class; with the ETag that moving
// the champion's alias needs.
func TestShadowChallenger(t *testing.T) {
	admin := challengerService(t)
	admin.must("PUT", "/api/v1/deployments/DEFAULT/churn", `{"enabled":true,"endpoints":[
		{"alias":"plain","model":"churn@production"},
		{"alias":"score","model":"churn@production","challengers":[{"model":"churn@2","mode":"shadow"}]}]}`, http.StatusCreated, nil)
	body := `{"data":[{"x":-2},{"x":-0.5},{"x":0.5},{"x":2}]}`
	_, plain := admin.do("POST", "/webapi/DEFAULT/api/v1/services/churn/plain", body)
	code, shadowed := admin.do("POST", "/webapi/DEFAULT/api/v1/services/churn/score", body)
	if code != http.StatusOK || shadowed != plain {
		t.Fatalf("with a shadow: %d %s\nwithout: %s\nwant the same answer", code, shadowed, plain)
	}
	var got challengersAnswer
	testutil.Eventually(t, 10*time.Second, "the shadow's comparison", func() bool {
		admin.must("GET", "/api/v1/endpoints/DEFAULT/churn/score/challengers", "", http.StatusOK, &got)
		return len(got.Challengers) == 1 && got.Challengers[0].Compared == 4
	})
	c := got.Challengers[0]
	if got.Champion.Model != "churn@production" || got.Champion.Version != "churn@1" || got.Champion.AliasETag == "" {
		t.Errorf("champion %+v, want churn@production at churn@1 with the alias's ETag", got.Champion)
	}
	if c.Model != "churn@2" || c.Mode != "shadow" || c.Version != "churn@2" || c.Agreed != 3 || c.AgreementRate == nil || *c.AgreementRate != 0.75 {
		t.Errorf("comparison %+v, want churn@2 agreeing on 3 of 4 rows", c)
	}
	// |Δ confidence| of the champion's class: |σ(x) - σ(x-1)| at each x.
	sigma := func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
	sum := 0.0
	for _, x := range []float64{-2, -0.5, 0.5, 2} {
		sum += math.Abs(sigma(x) - sigma(x-1))
	}
	if c.Delta.Count != 4 || math.Abs(c.Delta.Sum-sum) > 1e-12 {
		t.Errorf("delta %+v, want 4 values summing to %v", c.Delta, sum)
	}
	if c.ChallengerLatency.Count != 1 || c.Errors != 0 {
		t.Errorf("the challenger ran %d times with %d errors, want once without", c.ChallengerLatency.Count, c.Errors)
	}
	_, metrics := admin.do("GET", "/metrics", "")
	for _, want := range []string{
		`scorehub_challenger_rows_compared_total{alias="score",challenger="churn@2",champion="churn@1",group="DEFAULT",mode="shadow",path="churn"} 4`,
		`scorehub_challenger_rows_agreed_total{alias="score",challenger="churn@2",champion="churn@1",group="DEFAULT",mode="shadow",path="churn"} 3`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("the metrics lack %s", want)
		}
	}
	// Moving the alias with that ETag promotes the challenger.
	r := httptest.NewRequest("PUT", "/api/v1/models/churn/aliases/production", strings.NewReader(`{"version":2}`))
	r.Header.Set("Authorization", admin.auth)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("If-Match", got.Champion.AliasETag)
	w := httptest.NewRecorder()
	admin.h.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		t.Fatalf("promoting with the comparison's ETag: %d %s", w.Code, w.Body)
	}
	admin.must("GET", "/api/v1/endpoints/DEFAULT/churn/score/challengers", "", http.StatusOK, &got)
	if got.Champion.Version != "churn@2" {
		t.Errorf("after the move the champion is %s, want churn@2", got.Champion.Version)
	}
	// The pair of churn@1 is no longer deployed: its series are gone.
	if _, metrics := admin.do("GET", "/metrics", ""); strings.Contains(metrics, `champion="churn@1"`) {
		t.Errorf("the metrics keep the series of a pair no longer deployed")
	}
}

// TestSplitChallenger: a split challenger answers the rows whose key's
// place (scoring.SplitPlace) falls in its share, the same rows every
// time, and answeredBy names the version that answered each row; without
// a key, a request goes to one model whole.
func TestSplitChallenger(t *testing.T) {
	admin := challengerService(t)
	admin.must("PUT", "/api/v1/deployments/DEFAULT/churn", `{"enabled":true,"endpoints":[
		{"alias":"keyed","model":"churn@1","splitKey":"id","answeredBy":true,
		 "challengers":[{"model":"churn@2","mode":"split","percent":50}]},
		{"alias":"all","model":"churn@1","answeredBy":true,"challengers":[{"model":"churn@2","mode":"split","percent":100}]},
		{"alias":"none","model":"churn@1","challengers":[{"model":"churn@2","mode":"split","percent":0}]}]}`, http.StatusCreated, nil)
	var rows []string
	for i := range 40 {
		rows = append(rows, fmt.Sprintf(`{"id":"c%d","x":0.5}`, i))
	}
	body := `{"data":[` + strings.Join(rows, ",") + `]}`
	var first, second struct{ Data []map[string]any }
	admin.must("POST", "/webapi/DEFAULT/api/v1/services/churn/keyed", body, http.StatusOK, &first)
	admin.must("POST", "/webapi/DEFAULT/api/v1/services/churn/keyed", body, http.StatusOK, &second)
	byChallenger := 0
	for i, row := range first.Data {
		want := "churn@1"
		if scoring.SplitPlace(fmt.Sprintf("c%d", i)) < 50 {
			want = "churn@2"
			byChallenger++
		}
		// At x = 0.5 version 1 says yes and version 2 no.
		label := map[string]string{"churn@1": "yes", "churn@2": "no"}[want]
		if row["answeredBy"] != want || row["prediction(label)"] != label {
			t.Errorf("row %d answered by %v with %v, want %s with %s", i, row["answeredBy"], row["prediction(label)"], want, label)
		}
		if second.Data[i]["answeredBy"] != row["answeredBy"] {
			t.Errorf("row %d: answered by %v, then by %v", i, row["answeredBy"], second.Data[i]["answeredBy"])
		}
	}
	if byChallenger == 0 || byChallenger == len(first.Data) {
		t.Fatalf("%d of %d rows went to the challenger: the test's keys should split", byChallenger, len(first.Data))
	}
	var got challengersAnswer
	admin.must("GET", "/api/v1/endpoints/DEFAULT/churn/keyed/challengers", "", http.StatusOK, &got)
	if c := got.Challengers[0]; c.Answered != uint64(2*byChallenger) || c.Compared != 0 {
		t.Errorf("the split challenger answered %d rows and compared %d, want %d and 0", c.Answered, c.Compared, 2*byChallenger)
	}

	var all, none struct{ Data []map[string]any }
	admin.must("POST", "/webapi/DEFAULT/api/v1/services/churn/all", `{"data":[{"x":0.5},{"x":0.5}]}`, http.StatusOK, &all)
	admin.must("POST", "/webapi/DEFAULT/api/v1/services/churn/none", `{"data":[{"x":0.5}]}`, http.StatusOK, &none)
	for _, row := range all.Data {
		if row["answeredBy"] != "churn@2" {
			t.Errorf("a challenger of 100 percent: row answered by %v", row["answeredBy"])
		}
	}
	if _, ok := none.Data[0]["answeredBy"]; ok || none.Data[0]["prediction(label)"] != "yes" {
		t.Errorf("a challenger of 0 percent without answeredBy: %v, want the champion's answer alone", none.Data[0])
	}
}

// TestChallengerThatCannotScore: a challenger whose alias moves to a
// version of other columns is skipped, the champion answering as before,
// and the comparison says why.
func TestChallengerThatCannotScore(t *testing.T) {
	admin := challengerService(t)
	admin.must("PUT", "/api/v1/models/churn/aliases/candidate", `{"version":2}`, http.StatusCreated, nil)
	admin.must("PUT", "/api/v1/deployments/DEFAULT/churn", `{"enabled":true,"endpoints":[
		{"alias":"score","model":"churn@1","answeredBy":true,"challengers":[{"model":"churn@candidate","mode":"split","percent":100}]}]}`, http.StatusCreated, nil)
	var cur struct{ Revision uint64 }
	admin.must("GET", "/api/v1/models/churn/aliases/candidate", "", http.StatusOK, &cur)
	code, body := admin.send("PUT", "/api/v1/models/churn/aliases/candidate", "application/json", `{"version":3}`)
	if code/100 != 2 {
		t.Fatalf("moving the alias: %d %s", code, body)
	}
	var out struct{ Data []map[string]any }
	admin.must("POST", "/webapi/DEFAULT/api/v1/services/churn/score", `{"data":[{"x":0.5}]}`, http.StatusOK, &out)
	if out.Data[0]["answeredBy"] != "churn@1" || out.Data[0]["prediction(label)"] != "yes" {
		t.Errorf("the champion should answer for a challenger that cannot: %v", out.Data[0])
	}
	var got challengersAnswer
	admin.must("GET", "/api/v1/endpoints/DEFAULT/churn/score/challengers", "", http.StatusOK, &got)
	if c := got.Challengers[0]; !strings.Contains(c.Error, "other columns") || c.Version != "churn@3" {
		t.Errorf("comparison %+v, want the challenger at churn@3 with why it cannot score", c)
	}
}

// TestChallengersAreChecked: the rules of challengers, and challengers
// that answer other columns than the champion, are refused at their
// place.
func TestChallengersAreChecked(t *testing.T) {
	admin := challengerService(t)
	for _, c := range []struct{ name, endpoint, pointer string }{
		{"a process endpoint", `{"alias":"x","process":"p","challengers":[{"model":"churn@2","mode":"shadow"}]}`, "/endpoints/0/challengers"},
		{"an unknown mode", `{"alias":"x","model":"churn@1","challengers":[{"model":"churn@2","mode":"mirror"}]}`, "/endpoints/0/challengers/0/mode"},
		{"a share of a shadow", `{"alias":"x","model":"churn@1","challengers":[{"model":"churn@2","mode":"shadow","percent":5}]}`, "/endpoints/0/challengers/0/percent"},
		{"a share past 100", `{"alias":"x","model":"churn@1","challengers":[{"model":"churn@2","mode":"split","percent":101}]}`, "/endpoints/0/challengers/0/percent"},
		{"shares past 100 together", `{"alias":"x","model":"churn@1","challengers":[{"model":"churn@2","mode":"split","percent":60},{"model":"churn@production","mode":"split","percent":60}]}`, "/endpoints/0/challengers"},
		{"the champion again", `{"alias":"x","model":"churn@1","challengers":[{"model":"churn@1","mode":"shadow"}]}`, "/endpoints/0/challengers/0/model"},
		{"a key without a split", `{"alias":"x","model":"churn@1","splitKey":"id","challengers":[{"model":"churn@2","mode":"shadow"}]}`, "/endpoints/0/splitKey"},
		{"a model that is not there", `{"alias":"x","model":"churn@1","challengers":[{"model":"churn@9","mode":"shadow"}]}`, "/endpoints/0/challengers/0/model"},
		{"other columns", `{"alias":"x","model":"churn@1","challengers":[{"model":"churn@3","mode":"shadow"}]}`, "/endpoints/0/challengers/0/model"},
		{"an unknown member", `{"alias":"x","model":"churn@1","challengers":[{"model":"churn@2","mode":"shadow","share":1}]}`, "/endpoints/0/challengers/0/share"},
		{"answeredBy of a process", `{"alias":"x","process":"p","answeredBy":true}`, "/endpoints/0/answeredBy"},
	} {
		code, body := admin.do("PUT", "/api/v1/deployments/DEFAULT/refused", `{"endpoints":[`+c.endpoint+`]}`)
		if code/100 != 4 || !strings.Contains(body, `"`+c.pointer+`"`) {
			t.Errorf("%s: %d %s, want a refusal at %s", c.name, code, body, c.pointer)
		}
	}
	if code, _ := (client{t: admin.t, h: admin.h}).do("GET", "/api/v1/endpoints/DEFAULT/churn/score/challengers", ""); code != http.StatusUnauthorized {
		t.Errorf("the comparison without a token: %d, want 401", code)
	}
}
