package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/scorehub/scorehub/internal/demo"
)

// challengeShadow is the mode of challenger -challenger measures: one
// that scores the rows after the champion answered, on a goroutine of its
// own, within the server's budget of shadows at once.
const challengeShadow = "shadow"

// Targets of an endpoint with one shadow challenger against the same
// endpoint without it: at 1 row, at least this share of its requests per
// second; at cfg.Large rows, one request at a time, at most this many
// times its wall time per request.
const (
	shadowTargetRatio = 0.9
	shadowLargeTarget = 1.2
)

// shadowModelFile is the model -challenger uploads, twice, under the
// module's directory: XGBoost's iris classifier (multi:softprob, 60 trees)
// of the format's tests, whose features are the columns of the demo
// request.
const shadowModelFile = "registry/xgboost/testdata/iris_softprob.json"

// shadowModelQuery is the metadata the model is uploaded with, besides
// its description.
var shadowModelQuery = url.Values{"label": {"species"}, "classes": {"setosa,versicolor,virginica"}}

// challenged is what -challenger measures: two endpoints of one
// deployment on the default queue, plain naming the champion, a version
// of a model uploaded for the run, and shadowed the same champion with
// another version of the same file as its challenger.
type challenged struct {
	plainPath, shadowedPath string // scoring paths on the server
	champion, challenger    string // model references, name@version
	mode                    string
	figures                 string // the management path of the challengers of shadowed
	scaffold
}

// deployChallenged uploads the model file under moduleDir twice, as two
// versions of a model of its own, and deploys, in the group and under the
// prefix of the endpoint at path, the endpoints plain and shadowed, the
// latter with the second version as its challenger in mode; on the server
// at base, logged in as the admin with adminPassword. On an error it
// deletes what it made.
func deployChallenged(ctx context.Context, c *http.Client, base, path, moduleDir, mode, adminPassword string) (ch *challenged, err error) {
	m := endpointPath.FindStringSubmatch(path)
	if m == nil {
		return nil, fmt.Errorf("loadtest: -path %q is not the path of a scoring endpoint ({prefix}/{group}/api/v1/services/{path}/{alias}), in whose group -challenger deploys", path)
	}
	prefix, group := m[1], m[2]
	file := filepath.Join(moduleDir, shadowModelFile)
	artifact, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("loadtest: -challenger uploads %s of the scorehub module (-module): %w", shadowModelFile, err)
	}
	admin := &manager{client: c, base: base, user: adminName, password: adminPassword}
	if err := admin.login(ctx); err != nil {
		return nil, err
	}
	name := "loadtest-" + strings.ToLower(rand.Text()[:10])
	ch = &challenged{mode: mode, scaffold: scaffold{admin: admin}}
	defer func() {
		if err != nil {
			err = errors.Join(err, ch.remove(context.WithoutCancel(ctx)))
			ch = nil
		}
	}()
	// The same file twice, as two versions: the challenger does the
	// champion's work again, and agrees with it on every row. The
	// descriptions differ, as an upload of the same file and metadata is
	// the version already stored.
	var refs [2]string
	for i, role := range []string{"champion", "challenger"} {
		q := url.Values{"description": {"made by cmd/loadtest for one run: the " + role}}
		for k, v := range shadowModelQuery {
			q[k] = v
		}
		var v struct {
			Version int `json:"version"`
		}
		if err := admin.send(ctx, http.MethodPost, "/api/v1/models/"+name+"/versions?"+q.Encode(), "application/json", artifact, &v); err != nil {
			return ch, err
		}
		if i == 0 {
			ch.created = append(ch.created, "/api/v1/models/"+name) // with every version
		}
		refs[i] = fmt.Sprintf("%s@%d", name, v.Version)
	}
	ch.champion, ch.challenger = refs[0], refs[1]
	dep := map[string]any{"group": group, "path": name, "description": "made by cmd/loadtest for one run",
		"endpoints": []map[string]any{
			{"alias": "plain", "model": ch.champion},
			{"alias": "shadowed", "model": ch.champion, "challengers": []map[string]any{{"model": ch.challenger, "mode": mode}}},
		}}
	if err := admin.call(ctx, http.MethodPost, "/api/v1/deployments", dep, nil); err != nil {
		return ch, err
	}
	ch.created = append(ch.created, "/api/v1/deployments/"+url.PathEscape(group)+"/"+name)
	services := prefix + "/" + group + "/api/v1/services/" + name + "/"
	ch.plainPath, ch.shadowedPath = services+"plain", services+"shadowed"
	ch.figures = "/api/v1/endpoints/" + url.PathEscape(group) + "/" + name + "/shadowed/challengers"
	return ch, nil
}

// shadowWork is what the challenger of shadowed did, as GET
// …/challengers counts it: the rows it scored and compared with the
// champion's answer, those of them it agreed on, the rows it skipped
// because the server's budget of shadows at once (GOMAXPROCS) was spent,
// and its failed executions.
type shadowWork struct {
	Compared uint64 `json:"compared"`
	Agreed   uint64 `json:"agreed"`
	Skipped  uint64 `json:"skipped"`
	Errors   uint64 `json:"errors"`
}

// since returns what w counts beyond earlier.
func (w shadowWork) since(earlier shadowWork) shadowWork {
	return shadowWork{w.Compared - earlier.Compared, w.Agreed - earlier.Agreed, w.Skipped - earlier.Skipped, w.Errors - earlier.Errors}
}

// text says what the shadow did, and what a skipped row means.
func (w shadowWork) text() string {
	s := fmt.Sprintf("%d rows compared", w.Compared)
	if w.Compared > 0 {
		s += fmt.Sprintf(" (%.1f%% agreed)", 100*float64(w.Agreed)/float64(w.Compared))
	}
	s += fmt.Sprintf(", %d skipped", w.Skipped)
	if offered := w.Compared + w.Skipped; w.Skipped > 0 {
		s += fmt.Sprintf(" (%.1f%% of the rows offered: the server's shadow budget was spent and shed them)", 100*float64(w.Skipped)/float64(offered))
	}
	return s + fmt.Sprintf(", %d failed executions", w.Errors)
}

// work reads what the challenger of shadowed has done so far.
func (ch *challenged) work(ctx context.Context) (shadowWork, error) {
	// The admin's idToken may expire during a long run.
	if time.Until(ch.admin.expires) < time.Minute {
		if err := ch.admin.login(ctx); err != nil {
			return shadowWork{}, err
		}
	}
	var v struct {
		Challengers []struct {
			Model   string `json:"model"`
			Version string `json:"version"`
			Error   string `json:"error"`
			shadowWork
		} `json:"challengers"`
	}
	if err := ch.admin.call(ctx, http.MethodGet, ch.figures, nil, &v); err != nil {
		return shadowWork{}, err
	}
	if len(v.Challengers) != 1 || v.Challengers[0].Model != ch.challenger {
		return shadowWork{}, fmt.Errorf("loadtest: GET %s: %d challengers, want %s alone", ch.figures, len(v.Challengers), ch.challenger)
	}
	if c := v.Challengers[0]; c.Error != "" || c.Version == "" {
		return shadowWork{}, fmt.Errorf("loadtest: GET %s: the challenger %s cannot score: %s", ch.figures, ch.challenger, c.Error)
	}
	return v.Challengers[0].shadowWork, nil
}

// challengeForRun deploys the endpoints -challenger measures and checks
// that both answer every request size and that the challenger can score.
func challengeForRun(ctx context.Context, cfg config, srv *underTest, client *http.Client, stderr io.Writer) (ch *challenged, err error) {
	setup := newClient(1, cfg.Timeout)
	defer setup.CloseIdleConnections()
	if ch, err = deployChallenged(ctx, setup, srv.base, cfg.Path, cfg.ModuleDir, cfg.Challenger, srv.adminPassword); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, ch.remove(context.WithoutCancel(ctx)))
		}
	}()
	fmt.Fprintf(stderr, "loadtest: %s at %s, and with %s as a %s challenger at %s\n",
		ch.champion, srv.base+ch.plainPath, ch.challenger, ch.mode, srv.base+ch.shadowedPath)
	sizes := cfg.Rows
	if cfg.Large > 0 {
		sizes = append(sizes[:len(sizes):len(sizes)], cfg.Large)
	}
	for _, rows := range sizes {
		for _, path := range []string{ch.plainPath, ch.shadowedPath} {
			resp, err := probe(ctx, client, target{url: srv.base + path, body: demo.IrisRequest(rows)})
			if err != nil {
				return nil, fmt.Errorf("loadtest: the model endpoint does not answer: %w", err)
			}
			if err := checkRows(resp, rows); err != nil {
				return nil, err
			}
		}
	}
	if _, err := ch.work(ctx); err != nil {
		return nil, err
	}
	return ch, nil
}

// shadowLargeReport compares large requests to shadowed and plain, one at
// a time over one connection, the two alternating round by round. The
// client's wall time per request ends with the answer's last byte; the
// shadow runs after it, beside the next request.
type shadowLargeReport struct {
	Rows          int           `json:"rows"`
	RequestBytes  int           `json:"requestBytes"`
	ResponseBytes int           `json:"responseBytes"`
	Servers       []largeServer `json:"endpoints"` // shadowed, then plain
	// Wall is shadowed's median wall time per request over plain's, the
	// median of the rounds' ratios in WallRounds.
	Wall       float64   `json:"shadowedOverPlainWall"`
	WallRounds []float64 `json:"shadowedOverPlainWallRounds"`
	// CPU is the server's CPU time per request of shadowed over plain's,
	// the median of CPURounds; 0 when not measured.
	CPU       float64   `json:"shadowedOverPlainCpu,omitempty"`
	CPURounds []float64 `json:"shadowedOverPlainCpuRounds,omitempty"`
	// Shadow is what the challenger did meanwhile, unmeasured requests
	// included.
	Shadow shadowWork `json:"shadow"`
}

// measureLargeShadow runs cfg.Rounds rounds of cfg.LargeRequests requests
// of cfg.Large rows to shadowed and to plain, on the server at base
// (process pid, 0 when unknown), and adds the comparison to rep.
func measureLargeShadow(ctx context.Context, cfg config, ch *challenged, base string, pid int, rep *report, stderr io.Writer) error {
	body := demo.IrisRequest(cfg.Large)
	client := newClient(1, cfg.Timeout)
	defer client.CloseIdleConnections()
	peers := []largePeer{{"shadowed", base + ch.shadowedPath, pid}, {"plain", base + ch.plainPath, pid}}
	resp, err := probe(ctx, client, target{url: peers[1].url, body: body})
	if err != nil {
		return fmt.Errorf("loadtest: the model endpoint does not answer: %w", err)
	}
	before, err := ch.work(ctx)
	if err != nil {
		return err
	}
	all, wall, cpu, err := largeRounds(ctx, cfg, client, peers, body, stderr)
	if err != nil {
		return err
	}
	// Each round ends with plain's requests, long enough for the last
	// shadow to be done.
	after, err := ch.work(ctx)
	if err != nil {
		return err
	}
	lr := shadowLargeReport{Rows: cfg.Large, RequestBytes: len(body), ResponseBytes: len(resp),
		Servers: largeServers(peers, all, wall), Shadow: after.since(before)}
	for round := range cfg.Rounds {
		lr.WallRounds = append(lr.WallRounds, wall[0][round]/wall[1][round])
		if cpu[0][round] > 0 && cpu[1][round] > 0 {
			lr.CPURounds = append(lr.CPURounds, float64(cpu[0][round])/float64(cpu[1][round]))
		}
	}
	lr.Wall, lr.CPU = median(lr.WallRounds), median(lr.CPURounds)
	rep.ShadowLarge = &lr
	return nil
}

// write writes the comparison for people.
func (lr *shadowLargeReport) write(w io.Writer) {
	fmt.Fprintf(w, "\n%s, %d bytes in, %d bytes out, one request at a time, shadowed and plain alternating:\n",
		rowsText(lr.Rows), lr.RequestBytes, lr.ResponseBytes)
	writeLargeServers(w, lr.Servers)
	fmt.Fprintf(w, "shadowed/plain wall: %.2f median of %s (target ≤ %.1f: %s)\n",
		lr.Wall, formatRatios(lr.WallRounds), shadowLargeTarget, verdict(lr.Wall <= shadowLargeTarget))
	if lr.CPU > 0 {
		fmt.Fprintf(w, "shadowed/plain server CPU per request: %.2f median of %s\n", lr.CPU, formatRatios(lr.CPURounds))
	}
	fmt.Fprintf(w, "shadow meanwhile, warm-up included: %s\n", lr.Shadow.text())
}
