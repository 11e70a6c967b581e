package models

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/scorehub/scorehub/e2e/internal/harness"
	"github.com/scorehub/scorehub/internal/testenv"
	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/scoring"
)

// trainChallengersScript trains two XGBoost classifiers of breast cancer
// diagnoses on four features, with scikit-learn's data set and split: a
// good one (40 trees of depth 3) and one worse on purpose (a single stump),
// and saves them with save_model as JSON in the directory of its argument.
// It writes the 200 rows held out of training, each as its four feature
// values, and their true diagnoses, 1 for the second class.
const trainChallengersScript = `
import json, sys
import xgboost as xgb
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split

out = sys.argv[1]
bunch = load_breast_cancer()
names = ["mean_radius", "mean_texture", "mean_smoothness", "mean_concave_points"]
cols = [list(bunch.feature_names).index(n.replace("_", " ")) for n in names]
x, y = bunch.data[:, cols], bunch.target
xtr, xte, ytr, yte = train_test_split(x, y, test_size=200, random_state=39, stratify=y)
for name, params in [("good", dict(n_estimators=40, max_depth=3, learning_rate=0.3)),
                     ("worse", dict(n_estimators=1, max_depth=1, learning_rate=0.3))]:
    clf = xgb.XGBClassifier(objective="binary:logistic", random_state=0, **params)
    clf.fit(xtr, ytr)
    clf.get_booster().feature_names = names
    clf.save_model(out + "/" + name + ".json")
json.dump({"features": names, "classes": [str(c) for c in bunch.target_names],
           "rows": xte.tolist(), "labels": yte.tolist()}, sys.stdout)
`

// measureScript loads each model file it is given with XGBoost's
// scikit-learn interface, predicts the rows with predict_proba and
// predict, and measures each subset of the rows with scikit-learn's
// metrics on their true labels: what the performance route is held to.
// ROC AUC of a subset of one class is null, as the route leaves it out.
const measureScript = `
import json, sys
import numpy as np
import xgboost as xgb
from sklearn.metrics import accuracy_score, brier_score_loss, log_loss, roc_auc_score

job = json.load(sys.stdin)
x = np.array(job["rows"], dtype=np.float64)
labels = np.array(job["labels"])
out = {}
for name, path in job["models"].items():
    clf = xgb.XGBClassifier()
    clf.load_model(path)
    proba = clf.predict_proba(x).astype(np.float64)
    pred = clf.predict(x)
    figures = []
    for idx in job["subsets"]:
        y, p = labels[idx], proba[idx]
        f = {"rows": len(idx), "accuracy": accuracy_score(y, pred[idx]),
             "logLoss": log_loss(y, p, labels=[0, 1]), "brier": brier_score_loss(y, p[:, 1]), "auc": None}
        if len(set(y.tolist())) == 2:
            f["auc"] = roc_auc_score(y, p[:, 1])
        figures.append(f)
    out[name] = {"positive": proba[:, 1].tolist(), "figures": figures}
json.dump(out, sys.stdout)
`

// challengerModels are the two classifiers trainChallengersScript trains,
// the rows held out and their labels.
type challengerModels struct {
	dir      string // good.json and worse.json
	features []string
	classes  []string // malignant, benign
	rows     [][]float64
	labels   []int // the index in classes of each row's diagnosis
	good     []byte
	worse    []byte
}

// trainChallengers trains the two models in a temporary directory; it
// skips t, or fails it under SCOREHUB_REQUIRE_ALL_TESTS=1, when python
// lacks XGBoost or scikit-learn.
func trainChallengers(t testing.TB) *challengerModels {
	t.Helper()
	if err := exec.Command(python, "-c", "import xgboost, sklearn").Run(); err != nil {
		testenv.SkipOrFail(t, "%s cannot import xgboost and sklearn, which the champion and challenger tests train their models with (Debian: apt-get install python3-xgboost python3-sklearn)", python)
	}
	m := &challengerModels{dir: t.TempDir()}
	var out struct {
		Features []string    `json:"features"`
		Classes  []string    `json:"classes"`
		Rows     [][]float64 `json:"rows"`
		Labels   []int       `json:"labels"`
	}
	if err := json.Unmarshal(runPython(t, trainChallengersScript, nil, m.dir), &out); err != nil {
		t.Fatalf("the training script's output: %v", err)
	}
	m.features, m.classes, m.rows, m.labels = out.Features, out.Classes, out.Rows, out.Labels
	if len(m.classes) != 2 || len(m.rows) != 200 || len(m.labels) != len(m.rows) {
		t.Fatalf("the training script wrote classes %q, %d rows and %d labels; want 2 classes and 200 labelled rows", m.classes, len(m.rows), len(m.labels))
	}
	var err error
	if m.good, err = os.ReadFile(filepath.Join(m.dir, "good.json")); err != nil {
		t.Fatal(err)
	}
	if m.worse, err = os.ReadFile(filepath.Join(m.dir, "worse.json")); err != nil {
		t.Fatal(err)
	}
	return m
}

// runPython runs script with python, stdin as its standard input, and
// returns its standard output.
func runPython(t testing.TB, script string, stdin []byte, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(python, append([]string{"-c", script}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, stderr.String())
	}
	return out
}

// metadata is the upload's metadata part: the label and the classes in
// XGBoost's order, class 1 the second.
func (m *challengerModels) metadata() map[string]any {
	return map[string]any{"label": "diagnosis", "classes": m.classes}
}

// row is held-out row i as a body's row, with the column key set to id.
func (m *challengerModels) row(i int, key, id string) map[string]any {
	r := map[string]any{key: id}
	for j, f := range m.features {
		r[f] = m.rows[i][j]
	}
	return r
}

// sklearnModel is what measureScript found of one model.
type sklearnModel struct {
	// Positive is each row's confidence of the second class.
	Positive []float64 `json:"positive"`
	// Figures are scikit-learn's, one a subset asked for.
	Figures []figuresJSON `json:"figures"`
}

// measure runs measureScript on the held-out rows and the subsets of
// them given, for the models "good" and "worse".
func (m *challengerModels) measure(t testing.TB, subsets ...[]int) (good, worse sklearnModel) {
	t.Helper()
	job := map[string]any{
		"models":  map[string]string{"good": filepath.Join(m.dir, "good.json"), "worse": filepath.Join(m.dir, "worse.json")},
		"rows":    m.rows,
		"labels":  m.labels,
		"subsets": subsets,
	}
	var out map[string]sklearnModel
	if err := json.Unmarshal(runPython(t, measureScript, jsonBody(t, job)), &out); err != nil {
		t.Fatalf("the measuring script's output: %v", err)
	}
	good, worse = out["good"], out["worse"]
	if len(good.Positive) != len(m.rows) || len(worse.Positive) != len(m.rows) || len(good.Figures) != len(subsets) || len(worse.Figures) != len(subsets) {
		t.Fatalf("the measuring script wrote %+v", out)
	}
	return good, worse
}

// figuresJSON are a model's figures, as the performance route and
// measureScript write them.
type figuresJSON struct {
	Rows     int      `json:"rows"`
	Accuracy *float64 `json:"accuracy"`
	LogLoss  *float64 `json:"logLoss"`
	Brier    *float64 `json:"brier"`
	AUC      *float64 `json:"auc"`
}

func (f figuresJSON) String() string {
	s := func(p *float64) string {
		if p == nil {
			return "none"
		}
		return fmt.Sprintf("%.9f", *p)
	}
	return fmt.Sprintf("{rows %d, accuracy %s, log loss %s, Brier %s, AUC %s}", f.Rows, s(f.Accuracy), s(f.LogLoss), s(f.Brier), s(f.AUC))
}

// figuresTolerance is how far the server's figures may be from
// scikit-learn's. Both read the same float32 confidences, which the
// server and XGBoost compute each in their own order of float32 sums
// (they agree to about 1e-7); accuracy counts the same rows, and log
// loss, Brier score and AUC, means over 200 rows of functions of those
// confidences with slopes of order 1 away from 0, move by about as much.
const figuresTolerance = 1e-6

// checkFigures compares the server's figures with scikit-learn's.
func checkFigures(t *testing.T, what string, got, want figuresJSON) {
	t.Helper()
	far := func(a, b *float64) bool {
		if a == nil || b == nil {
			return a != b
		}
		return math.Abs(*a-*b) > figuresTolerance
	}
	if got.Rows != want.Rows || far(got.Accuracy, want.Accuracy) || far(got.LogLoss, want.LogLoss) || far(got.Brier, want.Brier) || far(got.AUC, want.AUC) {
		t.Errorf("%s: the server measured %v, scikit-learn %v (tolerance %g)", what, got, want, figuresTolerance)
	}
}

// checkAnswers compares each answered row's confidences with XGBoost's of
// the model that should have answered it, as fixture.check does: within
// 1e-6, and the predicted class the more probable one.
func (m *challengerModels) checkAnswers(t *testing.T, what string, got []map[string]any, rows []int, want func(k int) []float64) {
	t.Helper()
	if len(got) != len(rows) {
		t.Fatalf("%s: %d rows answered for %d sent", what, len(got), len(rows))
	}
	bad := 0
	for k, row := range got {
		positive := want(k)[rows[k]]
		p, ok := row["confidence("+m.classes[1]+")"].(float64)
		q, _ := row["confidence("+m.classes[0]+")"].(float64)
		class := m.classes[0]
		if positive > 0.5 {
			class = m.classes[1]
		}
		if !ok || math.Abs(p-positive) > 1e-6 || math.Abs(q-(1-positive)) > 1e-6 || row["prediction(diagnosis)"] != class {
			if bad++; bad <= 5 {
				t.Errorf("%s: row %d answered %v; XGBoost's confidence of %s is %v", what, k, row, m.classes[1], positive)
			}
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d rows answered otherwise than XGBoost", what, bad)
	}
}

// challengersJSON is GET …/challengers as these tests read it.
type challengersJSON struct {
	Champion struct {
		Model   string `json:"model"`
		Version string `json:"version"`
		ETag    string `json:"etag"`
	} `json:"champion"`
	Challengers []struct {
		Model    string `json:"model"`
		Mode     string `json:"mode"`
		Version  string `json:"version"`
		Error    string `json:"error"`
		Compared uint64 `json:"compared"`
		Agreed   uint64 `json:"agreed"`
		Answered uint64 `json:"answered"`
		Skipped  uint64 `json:"skipped"`
		Errors   uint64 `json:"errors"`
		Delta    struct {
			Count uint64  `json:"count"`
			Sum   float64 `json:"sum"`
		} `json:"delta"`
	} `json:"challengers"`
}

// performanceJSON is GET …/performance as these tests read it.
type performanceJSON struct {
	Task                string `json:"task"`
	RowsWithFeedback    int    `json:"rowsWithFeedback"`
	RowsWithoutFeedback int    `json:"rowsWithoutFeedback"`
	Models              []struct {
		Model              string       `json:"model"`
		Role               string       `json:"role"`
		Window             figuresJSON  `json:"window"`
		Total              figuresJSON  `json:"total"`
		ChampionOnSameRows *figuresJSON `json:"championOnSameRows"`
	} `json:"models"`
}

// model returns the figures of model in role, and whether there are any.
func (p *performanceJSON) model(model, role string) (total figuresJSON, window figuresJSON, same *figuresJSON, ok bool) {
	for _, m := range p.Models {
		if m.Model == model && m.Role == role {
			return m.Total, m.Window, m.ChampionOnSameRows, true
		}
	}
	return figuresJSON{}, figuresJSON{}, nil, false
}

// getJSON GETs path and decodes its 200 answer into v.
func (c *client) getJSON(t testing.TB, path string, v any) {
	t.Helper()
	a := c.do(t, http.MethodGet, path, "", nil)
	if a.status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, a.status, a.raw)
	}
	if err := json.Unmarshal(a.raw, v); err != nil {
		t.Fatalf("GET %s: %v in %s", path, err, a.raw)
	}
}

// feedbackApplied is what a feedback batch did.
type feedbackApplied struct {
	Matched    int      `json:"matched"`
	Unknown    int      `json:"unknown"`
	Duplicates int      `json:"duplicates"`
	UnknownIDs []string `json:"unknownIds"`
}

// feedback posts the outcomes of rows: ID → class.
func (c *client) feedback(t testing.TB, endpoint string, ids []string, classes []string) feedbackApplied {
	t.Helper()
	data := make([]map[string]any, len(ids))
	for i := range ids {
		data[i] = map[string]any{"id": ids[i], "actual": classes[i]}
	}
	a := c.doJSON(t, http.MethodPost, endpoint+"/feedback", map[string]any{"data": data})
	if a.status != http.StatusOK {
		t.Fatalf("POST %s/feedback: %d %s", endpoint, a.status, a.raw)
	}
	var out feedbackApplied
	if err := json.Unmarshal(a.raw, &out); err != nil {
		t.Fatalf("POST %s/feedback: %v in %s", endpoint, err, a.raw)
	}
	return out
}

// uploadChallengers uploads the good model as version 1 of model name and
// the worse one as version 2.
func uploadChallengers(t testing.TB, c *client, name string, m *challengerModels) {
	t.Helper()
	for v, artifact := range [][]byte{m.good, m.worse} {
		if up := c.upload(t, name, artifact, m.metadata()); up.status != http.StatusCreated || up.body["version"] != float64(v+1) {
			t.Fatalf("upload of version %d of %s: %d %s", v+1, name, up.status, up.raw)
		}
	}
}

// indices returns from, from+1, …, to-1.
func indices(from, to int) []int {
	out := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// TestShadowChallengerMeasuredAsScikitLearnAndPromoted deploys a good
// XGBoost classifier as the champion (cancer@production, version 1) and
// one worse on purpose as its shadow (cancer@candidate, version 2) at an
// endpoint that keeps predictions by the column id. 200 labelled rows are
// scored, answered by the champion alone; the shadow compares them, its
// agreement and |Δ confidence| those of XGBoost's own predictions. The
// true labels, fed back in two batches (one sent twice, counted as
// duplicates; one with an ID never scored, listed), give each model
// figures equal to scikit-learn's accuracy_score, log_loss,
// brier_score_loss and roc_auc_score on the same rows, and the shadow the
// champion's on the rows they share. Promoting the challenger with the
// champion's ETag swaps the aliases: version 2 answers, version 1 is its
// shadow, and the rows scored after are measured in the new roles.
func TestShadowChallengerMeasuredAsScikitLearnAndPromoted(t *testing.T) {
	t.Parallel()
	m := trainChallengers(t)
	const first = 20 // the rows scored again after the promotion
	all := indices(0, len(m.rows))
	good, worse := m.measure(t, all, indices(0, first))
	if *worse.Figures[0].Accuracy >= *good.Figures[0].Accuracy {
		t.Fatalf("the stump's accuracy %v is not below the good model's %v: the test's premise fails", *worse.Figures[0].Accuracy, *good.Figures[0].Accuracy)
	}
	t.Logf("scikit-learn on the 200 rows: good model %v, worse %v", good.Figures[0], worse.Figures[0])

	s := harness.Start(t, harness.Options{})
	c := newClient(t, s)
	uploadChallengers(t, c, "cancer", m)
	for alias, v := range map[string]int{"production": 1, "candidate": 2} {
		if a := c.doJSON(t, http.MethodPut, "/api/v1/models/cancer/aliases/"+alias, map[string]any{"version": v}); a.status != http.StatusCreated {
			t.Fatalf("alias %s: %d %s", alias, a.status, a.raw)
		}
	}
	dep := map[string]any{"group": "DEFAULT", "path": "cancer", "endpoints": []map[string]any{{
		"alias": "score", "model": "cancer@production", "rowId": "id",
		"challengers": []map[string]any{{"model": "cancer@candidate", "mode": "shadow"}},
	}}}
	if a := c.doJSON(t, http.MethodPost, "/api/v1/deployments", dep); a.status != http.StatusCreated {
		t.Fatalf("deployment: %d %s", a.status, a.raw)
	}
	const endpoint = "/api/v1/endpoints/DEFAULT/cancer/score"
	url := scoreURL("cancer", "score")

	// Scoring: the champion answers every row, in two requests.
	start := time.Now()
	ids := make([]string, len(m.rows))
	actual := make([]string, len(m.rows))
	for i := range m.rows {
		ids[i], actual[i] = fmt.Sprintf("r%d", i), m.classes[m.labels[i]]
	}
	for _, part := range [][]int{indices(0, 100), indices(100, 200)} {
		rows := make([]map[string]any, len(part))
		for k, i := range part {
			rows[k] = m.row(i, "id", ids[i])
		}
		got := c.score(t, url, jsonBody(t, map[string]any{"data": rows}))
		m.checkAnswers(t, "the champion", got, part, func(int) []float64 { return good.Positive })
	}
	var ch challengersJSON
	testutil.Eventually(t, time.Minute, "the shadow's comparison of the 200 rows", func() bool {
		c.getJSON(t, endpoint+"/challengers", &ch)
		return len(ch.Challengers) == 1 && ch.Challengers[0].Compared+ch.Challengers[0].Skipped+ch.Challengers[0].Errors >= 200
	})
	var perf performanceJSON
	testutil.Eventually(t, time.Minute, "the 200 rows' predictions kept", func() bool {
		c.getJSON(t, endpoint+"/performance", &perf)
		return perf.RowsWithoutFeedback >= len(m.rows)
	})
	t.Logf("200 rows scored, compared and kept in %v", time.Since(start).Round(time.Millisecond))

	t.Run("the shadow compared every row as XGBoost's predictions differ", func(t *testing.T) {
		sh := ch.Challengers[0]
		if ch.Champion.Model != "cancer@production" || ch.Champion.Version != "cancer@1" || ch.Champion.ETag == "" {
			t.Errorf("champion %+v, want cancer@production at cancer@1 with an ETag", ch.Champion)
		}
		if sh.Model != "cancer@candidate" || sh.Mode != "shadow" || sh.Version != "cancer@2" || sh.Error != "" {
			t.Errorf("challenger %+v, want cancer@candidate at cancer@2 in shadow", sh)
		}
		agreed, delta := uint64(0), 0.0
		for i := range m.rows {
			if (good.Positive[i] > 0.5) == (worse.Positive[i] > 0.5) {
				agreed++
			}
			delta += math.Abs(good.Positive[i] - worse.Positive[i])
		}
		if sh.Compared != 200 || sh.Skipped != 0 || sh.Errors != 0 || sh.Agreed != agreed {
			t.Errorf("the shadow compared %d rows (%d skipped, %d errors) and agreed on %d; want 200 compared and XGBoost's %d agreements", sh.Compared, sh.Skipped, sh.Errors, sh.Agreed, agreed)
		}
		// 200 differences, each within 2e-6 of XGBoost's.
		if sh.Delta.Count != 200 || math.Abs(sh.Delta.Sum-delta) > 200*2e-6 {
			t.Errorf("|Δ confidence|: %d values summing to %v, want 200 summing to XGBoost's %v", sh.Delta.Count, sh.Delta.Sum, delta)
		}
		t.Logf("agreement %d of 200, Σ|Δ confidence| %.6f", sh.Agreed, sh.Delta.Sum)
	})
	if perf.RowsWithoutFeedback != len(m.rows) || perf.RowsWithFeedback != 0 || perf.Task != "classification" {
		t.Fatalf("before feedback: %+v, want a classification with 200 rows waiting", perf)
	}

	// Feedback in two batches, the first sent twice, the second with an
	// ID never scored.
	if got := c.feedback(t, endpoint, ids[:100], actual[:100]); got.Matched != 100 || got.Unknown != 0 || got.Duplicates != 0 || len(got.UnknownIDs) != 0 {
		t.Errorf("the first batch: %+v, want 100 matched", got)
	}
	if got := c.feedback(t, endpoint, ids[:100], actual[:100]); got.Matched != 0 || got.Duplicates != 100 || got.Unknown != 0 {
		t.Errorf("the first batch again: %+v, want 100 duplicates and nothing matched", got)
	}
	got := c.feedback(t, endpoint, append(slices.Clone(ids[100:]), "r-never-scored"), append(slices.Clone(actual[100:]), m.classes[0]))
	if got.Matched != 100 || got.Unknown != 1 || got.Duplicates != 0 || !slices.Equal(got.UnknownIDs, []string{"r-never-scored"}) {
		t.Errorf("the second batch: %+v, want 100 matched and r-never-scored listed unknown", got)
	}
	testutil.Eventually(t, time.Minute, "both models measured on the 200 rows", func() bool {
		c.getJSON(t, endpoint+"/performance", &perf)
		champ, _, _, ok1 := perf.model("cancer@1", "champion")
		shadow, _, _, ok2 := perf.model("cancer@2", "shadow")
		return ok1 && ok2 && champ.Rows == 200 && shadow.Rows == 200
	})

	t.Run("the figures are scikit-learn's on the same rows", func(t *testing.T) {
		if perf.RowsWithFeedback != 200 || perf.RowsWithoutFeedback != 0 || len(perf.Models) != 2 {
			t.Errorf("performance %+v, want 200 rows with feedback, none without, and two models", perf)
		}
		champ, champWindow, _, _ := perf.model("cancer@1", "champion")
		shadow, shadowWindow, same, _ := perf.model("cancer@2", "shadow")
		checkFigures(t, "the champion cancer@1, in total", champ, good.Figures[0])
		checkFigures(t, "the champion cancer@1, in the window", champWindow, good.Figures[0])
		checkFigures(t, "the shadow cancer@2, in total", shadow, worse.Figures[0])
		checkFigures(t, "the shadow cancer@2, in the window", shadowWindow, worse.Figures[0])
		if same == nil {
			t.Fatalf("the shadow's figures have no championOnSameRows")
		}
		checkFigures(t, "the champion on the shadow's rows", *same, good.Figures[0])
		if same.Rows != champ.Rows || *same.Accuracy != *champ.Accuracy || math.Abs(*same.LogLoss-*champ.LogLoss) > 1e-12 ||
			math.Abs(*same.Brier-*champ.Brier) > 1e-12 || math.Abs(*same.AUC-*champ.AUC) > 1e-12 {
			t.Errorf("the champion on the shadow's rows %v, the champion's own %v: they are the same rows", *same, champ)
		}
		t.Logf("the server: champion %v, shadow %v", champ, shadow)
	})

	// Promotion: the champion's ETag guards it, and it swaps the aliases.
	c.getJSON(t, endpoint+"/challengers", &ch)
	promote := map[string]any{"challenger": "cancer@candidate"}
	if a := c.doJSON(t, http.MethodPost, endpoint+"/promote", promote, "If-Match", ch.Champion.ETag); a.status != http.StatusOK {
		t.Fatalf("promote with the champion's ETag: %d %s", a.status, a.raw)
	}
	if a := c.doJSON(t, http.MethodPost, endpoint+"/promote", promote, "If-Match", ch.Champion.ETag); a.status != http.StatusPreconditionFailed {
		t.Errorf("the same promotion again, with the ETag it made stale: %d %s, want 412", a.status, a.raw)
	}
	for alias, want := range map[string]float64{"production": 2, "candidate": 1} {
		if a := c.do(t, http.MethodGet, "/api/v1/models/cancer/aliases/"+alias, "", nil); a.status != http.StatusOK || a.body["version"] != want {
			t.Errorf("alias %s after the promotion: %d %s, want version %v", alias, a.status, a.raw, want)
		}
	}
	c.getJSON(t, endpoint+"/challengers", &ch)
	if ch.Champion.Version != "cancer@2" || len(ch.Challengers) != 1 || ch.Challengers[0].Version != "cancer@1" ||
		ch.Challengers[0].Model != "cancer@candidate" || ch.Challengers[0].Mode != "shadow" || ch.Challengers[0].Compared != 0 {
		t.Errorf("after the promotion: %+v, want champion cancer@2 and its shadow cancer@1, a new pair with nothing compared", ch)
	}

	// New rows are answered by version 2, the former champion in its
	// shadow, and measured so.
	after := indices(0, first)
	rows := make([]map[string]any, first)
	afterIDs, afterActual := make([]string, first), make([]string, first)
	for k, i := range after {
		afterIDs[k], afterActual[k] = fmt.Sprintf("p%d", i), actual[i]
		rows[k] = m.row(i, "id", afterIDs[k])
	}
	answers := c.score(t, url, jsonBody(t, map[string]any{"data": rows}))
	m.checkAnswers(t, "the promoted champion", answers, after, func(int) []float64 { return worse.Positive })
	testutil.Eventually(t, time.Minute, "the new pair's comparison and predictions", func() bool {
		c.getJSON(t, endpoint+"/challengers", &ch)
		c.getJSON(t, endpoint+"/performance", &perf)
		return len(ch.Challengers) == 1 && ch.Challengers[0].Compared >= first && perf.RowsWithoutFeedback >= first
	})
	if got := c.feedback(t, endpoint, afterIDs, afterActual); got.Matched != first {
		t.Errorf("feedback after the promotion: %+v, want %d matched", got, first)
	}
	testutil.Eventually(t, time.Minute, "both models measured in their new roles", func() bool {
		c.getJSON(t, endpoint+"/performance", &perf)
		champ, _, _, ok1 := perf.model("cancer@2", "champion")
		shadow, _, _, ok2 := perf.model("cancer@1", "shadow")
		return ok1 && ok2 && champ.Rows == first && shadow.Rows == first
	})
	t.Run("after the promotion the roles are flipped", func(t *testing.T) {
		champ, _, _, _ := perf.model("cancer@2", "champion")
		shadow, _, same, _ := perf.model("cancer@1", "shadow")
		checkFigures(t, "the champion cancer@2 on the rows after", champ, worse.Figures[1])
		checkFigures(t, "the shadow cancer@1 on the rows after", shadow, good.Figures[1])
		if same == nil {
			t.Fatalf("the shadow's figures have no championOnSameRows")
		}
		checkFigures(t, "the champion on the shadow's rows after", *same, worse.Figures[1])
		before, _, _, ok := perf.model("cancer@1", "champion")
		if !ok {
			t.Fatalf("the figures of cancer@1 as the champion are gone: %+v", perf)
		}
		checkFigures(t, "cancer@1 as the champion before", before, good.Figures[0])
		if perf.RowsWithFeedback != 200+first || len(perf.Models) != 4 {
			t.Errorf("performance %+v, want %d rows with feedback and each version in both roles", perf, 200+first)
		}
	})
}

// TestSplitChallengerShareIsStablePerKey deploys the good classifier with
// the worse one as a split challenger of 10 percent, keyed by
// customer_id, and scores 10,000 rows of distinct customers: the
// challenger answers 10% ± 2 points of them, answeredBy names the version
// whose confidences each row has, the keys it answered are those whose
// place (scoring.SplitPlace) falls in its share, and scoring the same
// customers again, in other requests and in reverse order, meets each
// with the same model.
func TestSplitChallengerShareIsStablePerKey(t *testing.T) {
	t.Parallel()
	m := trainChallengers(t)
	good, worse := m.measure(t, indices(0, len(m.rows)))
	s := harness.Start(t, harness.Options{})
	c := newClient(t, s)
	uploadChallengers(t, c, "cancer", m)
	dep := map[string]any{"group": "DEFAULT", "path": "cancer", "endpoints": []map[string]any{{
		"alias": "split", "model": "cancer@1", "splitKey": "customer_id", "answeredBy": true,
		"challengers": []map[string]any{{"model": "cancer@2", "mode": "split", "percent": 10}},
	}}}
	if a := c.doJSON(t, http.MethodPost, "/api/v1/deployments", dep); a.status != http.StatusCreated {
		t.Fatalf("deployment: %d %s", a.status, a.raw)
	}
	url := scoreURL("cancer", "split")

	const customers = 10_000
	keys := make([]string, customers)
	for i := range keys {
		keys[i] = fmt.Sprintf("cust-%05d", i)
	}
	positive := map[string][]float64{"cancer@1": good.Positive, "cancer@2": worse.Positive}
	// score scores the customers order names, per requests of size rows,
	// and returns who answered each customer.
	score := func(order []int, size int) []string {
		by := make([]string, customers)
		for lo := 0; lo < len(order); lo += size {
			part := order[lo:min(lo+size, len(order))]
			rows := make([]map[string]any, len(part))
			feature := make([]int, len(part))
			for k, i := range part {
				feature[k] = i % len(m.rows)
				rows[k] = m.row(feature[k], "customer_id", keys[i])
			}
			got := c.score(t, url, jsonBody(t, map[string]any{"data": rows}))
			m.checkAnswers(t, "the split endpoint", got, feature, func(k int) []float64 {
				model, _ := got[k]["answeredBy"].(string)
				by[part[k]] = model
				if p, ok := positive[model]; ok {
					return p
				}
				t.Fatalf("row of %s answered by %q, neither cancer@1 nor cancer@2", keys[part[k]], model)
				return nil
			})
		}
		return by
	}

	start := time.Now()
	first := score(indices(0, customers), 2500)
	t.Logf("%d rows scored in 4 requests in %v", customers, time.Since(start).Round(time.Millisecond))
	n, misplaced := 0, 0
	for i, model := range first {
		challenger := model == "cancer@2"
		if challenger {
			n++
		}
		if challenger != (scoring.SplitPlace(keys[i]) < 10) {
			if misplaced++; misplaced <= 5 {
				t.Errorf("%s, at place %.4f, was answered by %s", keys[i], scoring.SplitPlace(keys[i]), model)
			}
		}
	}
	share := 100 * float64(n) / customers
	t.Logf("the challenger answered %d of %d customers: %.2f%%", n, customers, share)
	if math.Abs(share-10) > 2 {
		t.Errorf("the challenger of 10 percent answered %.2f%% of the customers, want 10 ± 2", share)
	}
	if misplaced > 0 {
		t.Errorf("%d customers were answered by a model their place does not give", misplaced)
	}

	reverse := indices(0, customers)
	slices.Reverse(reverse)
	again := score(reverse, 2000)
	moved := 0
	for i := range keys {
		if again[i] != first[i] {
			if moved++; moved <= 5 {
				t.Errorf("%s was answered by %s, then by %s", keys[i], first[i], again[i])
			}
		}
	}
	if moved > 0 {
		t.Errorf("%d of %d customers met another model the second time", moved, customers)
	}

	var ch challengersJSON
	testutil.Eventually(t, time.Minute, "the split challenger's rows counted", func() bool {
		c.getJSON(t, "/api/v1/endpoints/DEFAULT/cancer/split/challengers", &ch)
		return len(ch.Challengers) == 1 && ch.Challengers[0].Answered >= uint64(2*n)
	})
	if sp := ch.Challengers[0]; sp.Answered != uint64(2*n) || sp.Errors != 0 || sp.Mode != "split" || sp.Version != "cancer@2" {
		t.Errorf("the split challenger: %+v, want cancer@2 answering the %d rows of its customers, twice, without errors", sp, n)
	}
}
