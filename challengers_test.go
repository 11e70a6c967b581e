package scorehub

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/jobs"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/registry/registrytest"
	"github.com/scorehub/scorehub/scoring"
	"github.com/scorehub/scorehub/tokens/accounts"
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
	Model, Mode, Version, Error  string
	AgreementRate                *float64
	Compared, Agreed, Answered   uint64
	Errors, Unavailable, Skipped uint64
	Delta                        scoring.Histogram
	ChallengerLatency            scoring.Histogram
}

type challengersAnswer struct {
	Champion struct {
		Model, Version, AliasETag, ETag string
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

// performanceAnswer is GET …/performance as a test reads it.
type performanceAnswer struct {
	Task                string
	RowsWithFeedback    int
	RowsWithoutFeedback int
	Models              []struct {
		Model, Role        string
		Window, Total      figures
		ChampionOnSameRows *figures
	}
}

type figures struct {
	Rows              int
	Accuracy, LogLoss *float64
	Brier, AUC        *float64
}

// TestFeedbackAndPerformance: an endpoint that names a row-ID column
// keeps the champion's and the shadow's predictions; outcomes fed back
// for them are counted (unknown IDs listed, a repeat a duplicate), a
// batch with a bad outcome changes nothing, and the performance route
// measures each model on them, the shadow beside the champion on the
// same rows.
func TestFeedbackAndPerformance(t *testing.T) {
	admin := challengerService(t)
	admin.must("PUT", "/api/v1/deployments/DEFAULT/churn", `{"enabled":true,"endpoints":[
		{"alias":"score","model":"churn@production","rowId":"id","challengers":[{"model":"churn@2","mode":"shadow"}]}]}`, http.StatusCreated, nil)
	admin.must("POST", "/webapi/DEFAULT/api/v1/services/churn/score",
		`{"data":[{"id":"r0","x":-2},{"id":"r1","x":-0.5},{"id":"r2","x":0.5},{"id":"r3","x":2},{"x":9}]}`, http.StatusOK, nil)
	var perf performanceAnswer
	testutil.Eventually(t, 10*time.Second, "the predictions kept", func() bool {
		admin.must("GET", "/api/v1/endpoints/DEFAULT/churn/score/performance", "", http.StatusOK, &perf)
		return perf.RowsWithoutFeedback == 4
	})
	testutil.Eventually(t, 10*time.Second, "the shadow's comparison", func() bool {
		var got challengersAnswer
		admin.must("GET", "/api/v1/endpoints/DEFAULT/churn/score/challengers", "", http.StatusOK, &got)
		return len(got.Challengers) == 1 && got.Challengers[0].Compared == 5
	})

	feedback := "/api/v1/endpoints/DEFAULT/churn/score/feedback"
	for _, c := range []struct{ name, body, pointer string }{
		{"a number for a classifier", `{"data":[{"id":"r0","actual":3}]}`, "/data/0/actual"},
		{"a class the model does not have", `{"data":[{"id":"r0","actual":"maybe"}]}`, "/data/0/actual"},
		{"no actual", `{"data":[{"id":"r0"}]}`, "/data/0"},
		{"no ID", `{"data":[{"actual":"no"}]}`, "/data/0"},
		{"another member", `{"data":[{"id":"r0","actual":"no","why":"late"}]}`, "/data/0/why"},
		{"a good row beside a bad one", `{"data":[{"id":"r0","actual":"no"},{"id":"r1","actual":[1]}]}`, "/data/1/actual"},
	} {
		code, body := admin.do("POST", feedback, c.body)
		if code != http.StatusBadRequest || !strings.Contains(body, `"`+c.pointer+`"`) {
			t.Errorf("%s: %d %s, want a 400 at %s", c.name, code, body, c.pointer)
		}
	}
	var applied struct {
		Matched, Unknown, Duplicates int
		UnknownIDs                   []string `json:"unknownIds"`
	}
	batch := `{"data":[{"id":"r0","actual":"no"},{"id":"r1","actual":"yes"},{"id":"r2","actual":"yes"},{"id":"r3","actual":"yes"},{"id":"zz","actual":"no"}]}`
	admin.must("POST", feedback, batch, http.StatusOK, &applied)
	if applied.Matched != 4 || applied.Unknown != 1 || applied.Duplicates != 0 || len(applied.UnknownIDs) != 1 || applied.UnknownIDs[0] != "zz" {
		t.Errorf("feedback applied %+v, want 4 matched and zz unknown: the refused batches changed nothing", applied)
	}
	admin.must("POST", feedback, batch, http.StatusOK, &applied)
	if applied.Matched != 0 || applied.Duplicates != 4 {
		t.Errorf("the same batch again applied %+v, want 4 duplicates and nothing matched", applied)
	}

	testutil.Eventually(t, 10*time.Second, "both models measured", func() bool {
		admin.must("GET", "/api/v1/endpoints/DEFAULT/churn/score/performance", "", http.StatusOK, &perf)
		return len(perf.Models) == 2 && perf.Models[1].Total.Rows == 4
	})
	if perf.Task != "classification" || perf.RowsWithFeedback != 4 || perf.RowsWithoutFeedback != 0 {
		t.Errorf("performance %+v, want 4 rows with feedback and none without", perf)
	}
	// Version 1 predicts no, no, yes, yes; version 2 no, no, no, yes; the
	// outcomes are no, yes, yes, yes.
	champ, shadow := perf.Models[0], perf.Models[1]
	if champ.Model != "churn@1" || champ.Role != "champion" || champ.Total.Rows != 4 || *champ.Total.Accuracy != 0.75 || champ.Window.Rows != 4 {
		t.Errorf("the champion's figures %+v, want churn@1 right on 3 of 4 rows, in the window too", champ)
	}
	if shadow.Model != "churn@2" || shadow.Role != "shadow" || *shadow.Total.Accuracy != 0.5 ||
		shadow.ChampionOnSameRows == nil || *shadow.ChampionOnSameRows.Accuracy != 0.75 {
		t.Errorf("the shadow's figures %+v, want churn@2 right on 2 of 4, beside the champion's 3 on the same rows", shadow)
	}
	if champ.Total.AUC == nil || champ.Total.Brier == nil || champ.Total.LogLoss == nil {
		t.Errorf("a binary classifier's figures lack AUC, Brier or log loss: %+v", champ.Total)
	}
	_, metrics := admin.do("GET", "/metrics", "")
	for _, want := range []string{
		`scorehub_model_live_accuracy{alias="score",group="DEFAULT",model="churn@1",path="churn",role="champion"} 0.75`,
		`scorehub_model_live_accuracy{alias="score",group="DEFAULT",model="churn@2",path="churn",role="shadow"} 0.5`,
		`scorehub_model_feedback_rows{alias="score",group="DEFAULT",model="churn@1",path="churn",role="champion"} 4`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("the metrics lack %s", want)
		}
	}
	if code, _ := admin.do("GET", "/api/v1/endpoints/DEFAULT/churn/score/performance?window=soon", ""); code != http.StatusBadRequest {
		t.Errorf("a window that is no duration: %d, want 400", code)
	}
}

// TestPromote: promoting a challenger trades its place with the
// champion's in one write guarded by the comparison's ETag: two aliases
// of the model swap versions, or the endpoint and the challenger trade
// references; an alias champion beside a version challenger cannot.
func TestPromote(t *testing.T) {
	admin := challengerService(t)
	admin.must("PUT", "/api/v1/models/churn/aliases/candidate", `{"version":2}`, http.StatusCreated, nil)
	admin.must("PUT", "/api/v1/deployments/DEFAULT/churn", `{"enabled":true,"endpoints":[
		{"alias":"score","model":"churn@production","challengers":[{"model":"churn@candidate","mode":"split","percent":10}]},
		{"alias":"pinned","model":"churn@1","challengers":[{"model":"churn@2","mode":"shadow"}]},
		{"alias":"mixed","model":"churn@production","challengers":[{"model":"churn@2","mode":"shadow"}]}]}`, http.StatusCreated, nil)
	promote := func(endpoint, etag, body string) (int, string) {
		r := httptest.NewRequest("POST", "/api/v1/endpoints/DEFAULT/churn/"+endpoint+"/promote", strings.NewReader(body))
		r.Header.Set("Authorization", admin.auth)
		r.Header.Set("Content-Type", "application/json")
		if etag != "" {
			r.Header.Set("If-Match", etag)
		}
		w := httptest.NewRecorder()
		admin.h.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}
	comparison := func(endpoint string) challengersAnswer {
		var got challengersAnswer
		admin.must("GET", "/api/v1/endpoints/DEFAULT/churn/"+endpoint+"/challengers", "", http.StatusOK, &got)
		return got
	}
	got := comparison("score")
	if code, body := promote("score", `"999"`, `{"challenger":"churn@candidate"}`); code != http.StatusPreconditionFailed {
		t.Errorf("promoting with a stale ETag: %d %s, want 412", code, body)
	}
	if code, body := promote("score", got.Champion.ETag, `{"challenger":"churn@7"}`); code != http.StatusUnprocessableEntity {
		t.Errorf("promoting no challenger of the endpoint: %d %s, want 422", code, body)
	}
	if code, body := promote("score", got.Champion.ETag, `{"challenger":"churn@candidate"}`); code != http.StatusOK {
		t.Fatalf("promoting: %d %s", code, body)
	}
	if got := comparison("score"); got.Champion.Version != "churn@2" || got.Challengers[0].Version != "churn@1" {
		t.Errorf("after the aliases swapped: champion %+v, challenger %+v; want churn@2 and churn@1", got.Champion, got.Challengers[0])
	}

	got = comparison("pinned")
	if code, body := promote("pinned", got.Champion.ETag, `{"challenger":"churn@2"}`); code != http.StatusOK ||
		!strings.Contains(body, `"alias":"pinned","process":"","model":"churn@2"`) || !strings.Contains(body, `"challengers":[{"model":"churn@1","mode":"shadow"}]`) {
		t.Errorf("promoting a version: %d %s, want the endpoint on churn@2 and churn@1 its shadow", code, body)
	}
	if code, body := promote("mixed", "", `{"challenger":"churn@2"}`); code != http.StatusConflict {
		t.Errorf("promoting a version beside an alias champion: %d %s, want 409", code, body)
	}
	const bob = "Bob-promote-8Xr-password"
	admin.must("POST", "/api/v1/users", `{"name":"bob","password":"`+bob+`"}`, http.StatusCreated, nil)
	if code, _ := signIn(t, admin.h, "bob", bob).do("POST", "/api/v1/endpoints/DEFAULT/churn/score/promote", `{"challenger":"churn@candidate"}`); code != http.StatusForbidden {
		t.Errorf("a user who is no admin promoting: %d, want 403", code)
	}
}

// TestOutcomesOfAProtectedGroup: feedback to a protected group's
// endpoint takes the group's scoring credential, and its performance is
// for administrators.
func TestOutcomesOfAProtectedGroup(t *testing.T) {
	admin := challengerService(t)
	admin.must("POST", "/api/v1/webapigroups", `{"name":"secret","auth":{"mode":"token","groups":["staff"]}}`, http.StatusCreated, nil)
	admin.must("PUT", "/api/v1/deployments/secret/churn", `{"enabled":true,"endpoints":[{"alias":"score","model":"churn@1","rowId":"id"}]}`, http.StatusCreated, nil)
	const samPassword, bobPassword = "Sam-outcome-4Tg-password", "Bob-outcome-7Hn-password"
	admin.must("POST", "/api/v1/users", `{"name":"sam","password":"`+samPassword+`","groups":["staff"]}`, http.StatusCreated, nil)
	admin.must("POST", "/api/v1/users", `{"name":"bob","password":"`+bobPassword+`"}`, http.StatusCreated, nil)
	basic := func(user, password string) client {
		return client{t: t, h: admin.h, auth: "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))}
	}
	feedback, performance := "/api/v1/endpoints/secret/churn/score/feedback", "/api/v1/endpoints/secret/churn/score/performance"
	body := `{"data":[{"id":"r0","actual":"no"}]}`
	for _, c := range []struct {
		who  string
		as   client
		want int
	}{
		{"anyone", client{t: t, h: admin.h}, http.StatusUnauthorized},
		{"a user the group keeps out", basic("bob", bobPassword), http.StatusNotFound},
		{"a member, with the group's credential", basic("sam", samPassword), http.StatusOK},
	} {
		if code, got := c.as.do("POST", feedback, body); code != c.want {
			t.Errorf("%s feeding back: %d %s, want %d", c.who, code, got, c.want)
		}
	}
	if code, _ := signIn(t, admin.h, "sam", samPassword).do("GET", performance, ""); code != http.StatusForbidden {
		t.Errorf("a member reading the performance: %d, want 403", code)
	}
	admin.must("GET", performance, "", http.StatusOK, nil)
}

// TestSlowAndFailingChallengers: a shadow that has not answered yet does
// not hold the champion's answer back, and a split challenger that fails
// has its rows answered by the champion; the comparison counts both.
func TestSlowAndFailingChallengers(t *testing.T) {
	release := make(chan struct{})
	h := newService(t, Config{AdminPassword: adminPassword,
		Formats: []process.ModelFormat{&registrytest.LinearFormat{}, wrapped{release: release}}}).Handler()
	admin := signIn(t, h, "admin", adminPassword)
	linear := string(registrytest.LinearArtifact(0, []string{"x"}, []float64{1}))
	for _, artifact := range []string{linear, "blocking\n" + linear, "failing\n" + linear} {
		if code, body := admin.send("POST", "/api/v1/models/churn/versions?classes=no,yes", "application/octet-stream", artifact); code != http.StatusCreated {
			t.Fatalf("upload: %d %s", code, body)
		}
	}
	admin.must("PUT", "/api/v1/deployments/DEFAULT/churn", `{"enabled":true,"endpoints":[{"alias":"score","model":"churn@1","answeredBy":true,
		"challengers":[{"model":"churn@2","mode":"shadow"},{"model":"churn@3","mode":"split","percent":100}]}]}`, http.StatusCreated, nil)
	var out struct{ Data []map[string]any }
	// The shadow blocks until release closes: the answer comes first.
	admin.must("POST", "/webapi/DEFAULT/api/v1/services/churn/score", `{"data":[{"x":1},{"x":-1}]}`, http.StatusOK, &out)
	for i, row := range out.Data {
		if row["answeredBy"] != "churn@1" {
			t.Errorf("row %d answered by %v, want the champion, as the split challenger failed", i, row["answeredBy"])
		}
	}
	var got challengersAnswer
	admin.must("GET", "/api/v1/endpoints/DEFAULT/churn/score/challengers", "", http.StatusOK, &got)
	if shadow := got.Challengers[0]; shadow.Compared != 0 || shadow.ChallengerLatency.Count != 0 {
		t.Errorf("the blocked shadow shows %+v before it answered", shadow)
	}
	if split := got.Challengers[1]; split.Errors != 1 || split.Answered != 0 {
		t.Errorf("the failing split challenger shows %d errors and %d rows answered, want 1 and 0", split.Errors, split.Answered)
	}
	close(release)
	testutil.Eventually(t, 10*time.Second, "the shadow's answer compared", func() bool {
		admin.must("GET", "/api/v1/endpoints/DEFAULT/churn/score/challengers", "", http.StatusOK, &got)
		return got.Challengers[0].Compared == 2
	})
}

// wrapped reads a LinearFormat file after a first line of "blocking" or
// "failing": a blocking model scores once release closes, a failing one
// never.
type wrapped struct{ release chan struct{} }

func (wrapped) Name() string { return "wrapped" }

func (wrapped) Detect(b []byte) bool {
	return strings.HasPrefix(string(b), "blocking\n") || strings.HasPrefix(string(b), "failing\n")
}

func (w wrapped) Load(b []byte, meta process.ModelMetadata) (*process.LoadedModel, error) {
	kind, rest, _ := strings.Cut(string(b), "\n")
	lm, err := new(registrytest.LinearFormat).Load([]byte(rest), meta)
	if err != nil {
		return nil, err
	}
	inner := lm.Process
	lm.Process = process.ProcessFunc(func(ctx context.Context, in process.Input) (*process.Table, error) {
		if kind == "failing" {
			return nil, errors.New("this model fails")
		}
		select {
		case <-w.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return inner.Score(ctx, in)
	})
	return lm, nil
}

// TestComparisonsSumAcrossReplicas: two replicas over shared stores each
// score through a shadow, and the comparison route of either sums both.
func TestComparisonsSumAcrossReplicas(t *testing.T) {
	records := registry.NewMemStore(registry.StoreOptions{})
	shared := &Stores{Records: records, Jobs: jobs.NewMemStore(registry.StoreOptions{}), Accounts: accounts.NewMemoryStore(),
		Keys: &memKeys{}, Comparisons: &scoring.MemComparisons{}}
	replica := func(name string) client {
		svc := newService(t, Config{Stores: shared, Replica: name, AdminPassword: adminPassword, Formats: []process.ModelFormat{&registrytest.LinearFormat{}}})
		return signIn(t, svc.Handler(), "admin", adminPassword)
	}
	a := replica("a")
	for _, bias := range []float64{0, -1} {
		artifact := string(registrytest.LinearArtifact(bias, []string{"x"}, []float64{1}))
		if code, body := a.send("POST", "/api/v1/models/churn/versions?classes=no,yes", "application/octet-stream", artifact); code != http.StatusCreated {
			t.Fatalf("upload: %d %s", code, body)
		}
	}
	a.must("PUT", "/api/v1/deployments/DEFAULT/churn", `{"enabled":true,"endpoints":[{"alias":"score","model":"churn@1","challengers":[{"model":"churn@2","mode":"shadow"}]}]}`, http.StatusCreated, nil)
	b := replica("b") // started after the writes: the memory store tells no other registry of them
	a.must("POST", "/webapi/DEFAULT/api/v1/services/churn/score", `{"data":[{"x":1.5},{"x":2}]}`, http.StatusOK, nil)
	b.must("POST", "/webapi/DEFAULT/api/v1/services/churn/score", `{"data":[{"x":0.5},{"x":3},{"x":-3}]}`, http.StatusOK, nil)
	for name, c := range map[string]client{"a": a, "b": b} {
		testutil.Eventually(t, 10*time.Second, "replica "+name+" summing both replicas' comparisons", func() bool {
			var got challengersAnswer
			c.must("GET", "/api/v1/endpoints/DEFAULT/churn/score/challengers", "", http.StatusOK, &got)
			return len(got.Challengers) == 1 && got.Challengers[0].Compared == 5 && got.Challengers[0].Agreed == 4 && got.Challengers[0].Delta.Count == 5
		})
	}
}

// TestShadowBatchesWaitingRows: while a shadow challenger is busy, the
// rows of the requests answered meanwhile wait in one batch, which it
// scores in one execution once a worker is free: every row is compared,
// once, in at most one execution a worker and one more, however many
// requests came.
func TestShadowBatchesWaitingRows(t *testing.T) {
	release := make(chan struct{})
	h := newService(t, Config{AdminPassword: adminPassword,
		Formats: []process.ModelFormat{&registrytest.LinearFormat{}, wrapped{release: release}}}).Handler()
	admin := signIn(t, h, "admin", adminPassword)
	linear := string(registrytest.LinearArtifact(0, []string{"x"}, []float64{1}))
	for _, artifact := range []string{linear, "blocking\n" + linear} {
		if code, body := admin.send("POST", "/api/v1/models/churn/versions?classes=no,yes", "application/octet-stream", artifact); code != http.StatusCreated {
			t.Fatalf("upload: %d %s", code, body)
		}
	}
	admin.must("PUT", "/api/v1/deployments/DEFAULT/churn", `{"enabled":true,"endpoints":[{"alias":"score","model":"churn@1",
		"challengers":[{"model":"churn@2","mode":"shadow"}]}]}`, http.StatusCreated, nil)
	const requests = 40
	for i := range requests {
		// Rows of one column or two: a batch holds the inputs the challenger reads.
		body := fmt.Sprintf(`{"data":[{"x":%d},{"x":-1,"note":"n"}]}`, i)
		admin.must("POST", "/webapi/DEFAULT/api/v1/services/churn/score", body, http.StatusOK, nil)
	}
	close(release)
	var got challengersAnswer
	testutil.Eventually(t, 10*time.Second, "every row of every request compared", func() bool {
		admin.must("GET", "/api/v1/endpoints/DEFAULT/churn/score/challengers", "", http.StatusOK, &got)
		return got.Challengers[0].Compared == 2*requests
	})
	shadow := got.Challengers[0]
	if workers := runtime.GOMAXPROCS(0); shadow.ChallengerLatency.Count > uint64(workers+1) || shadow.Agreed != 2*requests || shadow.Skipped != 0 {
		t.Errorf("the shadow compared %d rows, agreed on %d, skipped %d, in %d executions; want all %d agreed, none skipped, in at most %d executions",
			shadow.Compared, shadow.Agreed, shadow.Skipped, shadow.ChallengerLatency.Count, 2*requests, workers+1)
	}
}

// BenchmarkShadowedEndpoint measures 1-row requests, from parallel
// callers, and 10,000-row requests one at a time, to an endpoint of XGBoost's iris classifier with a shadow
// challenger (the same file as another version) and to the same
// endpoint without it.
func BenchmarkShadowedEndpoint(b *testing.B) {
	h := newService(b, Config{AdminPassword: adminPassword}).Handler()
	admin := signIn(b, h, "admin", adminPassword)
	artifact, err := os.ReadFile(filepath.Join("registry", "xgboost", "testdata", "iris_softprob.json"))
	if err != nil {
		b.Fatal(err)
	}
	for _, d := range []string{"champion", "challenger"} {
		if code, body := admin.send("POST", "/api/v1/models/iris/versions?label=species&classes=setosa,versicolor,virginica&description="+d, "application/json", string(artifact)); code != http.StatusCreated {
			b.Fatalf("upload: %d %s", code, body)
		}
	}
	if code, body := admin.do("PUT", "/api/v1/deployments/DEFAULT/iris", `{"enabled":true,"endpoints":[{"alias":"plain","model":"iris@1"},
		{"alias":"shadowed","model":"iris@1","challengers":[{"model":"iris@2","mode":"shadow"}]}]}`); code != http.StatusCreated {
		b.Fatalf("deploy: %d %s", code, body)
	}
	row := `{"sepal_length":5.1,"sepal_width":3.5,"petal_length":1.4,"petal_width":0.2}`
	body := []byte(`{"data":[` + row + `]}`)
	large := []byte(`{"data":[` + strings.TrimSuffix(strings.Repeat(row+",", 10_000), ",") + `]}`)
	for _, alias := range []string{"plain", "shadowed"} {
		b.Run(alias+"/rows=10000", func(b *testing.B) {
			for b.Loop() {
				mustScore(b, h, "/webapi/DEFAULT/api/v1/services/iris/"+alias, large)
			}
		})
		b.Run(alias+"/rows=1", func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					mustScore(b, h, "/webapi/DEFAULT/api/v1/services/iris/"+alias, body)
				}
			})
		})
	}
}
