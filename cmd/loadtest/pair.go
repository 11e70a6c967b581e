package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/scorehub/scorehub/internal/demo"
)

// pairModelFile is the model -challenger and -monitor upload, under the
// module's directory: XGBoost's iris classifier (multi:softprob, 60
// trees) of the format's tests, whose features are the columns of the
// demo request.
const pairModelFile = "registry/xgboost/testdata/iris_softprob.json"

// pairModelClasses are the classes the model is uploaded with, its label
// being species.
var pairModelClasses = []string{"setosa", "versicolor", "virginica"}

// pair is what -challenger and -monitor measure: one deployment, made
// for the run in the group of -path, of two endpoints on the default
// queue naming a model uploaded for the run. The first is measured; the
// second, the same endpoint without what is measured, is its ceiling.
type pair struct {
	names [2]string // the endpoints' aliases, which name their scenarios too
	paths [2]string // their scoring paths on the server
	model string    // the version both name, name@version
	// rpsTarget is the least share of the ceiling's requests per second
	// the first should reach at 1 row; wallTarget the most times the
	// ceiling's wall time per request it may take at cfg.Large rows, one
	// request at a time.
	rpsTarget, wallTarget float64
	// challenger, under -challenger, is the first endpoint's challenger;
	// monitor, under -monitor, the reference its monitor counts against.
	challenger *shadowChallenger
	monitor    *driftReference
	group      string // of the deployment
	name       string // of the deployment and of the model
	scaffold
}

// pairSpec says how deployPair makes a pair.
type pairSpec struct {
	flag                  string // that asks for the pair, for errors: "-challenger"
	names                 [2]string
	rpsTarget, wallTarget float64
	// endpoints uploads the model file, artifact, with p.upload as the
	// versions the endpoints name, and returns each endpoint's members
	// besides its alias.
	endpoints func(ctx context.Context, p *pair, artifact []byte) ([2]map[string]any, error)
}

// deployPair deploys, in the group and under the prefix of the endpoint
// at path, the endpoints of spec, for which it uploads the model file
// under moduleDir; on the server at base, logged in as the admin with
// adminPassword. On an error it deletes what it made.
func deployPair(ctx context.Context, c *http.Client, base, path, moduleDir, adminPassword string, spec pairSpec) (p *pair, err error) {
	m := endpointPath.FindStringSubmatch(path)
	if m == nil {
		return nil, fmt.Errorf("loadtest: -path %q is not the path of a scoring endpoint ({prefix}/{group}/api/v1/services/{path}/{alias}), in whose group %s deploys", path, spec.flag)
	}
	prefix, group := m[1], m[2]
	artifact, err := os.ReadFile(filepath.Join(moduleDir, pairModelFile))
	if err != nil {
		return nil, fmt.Errorf("loadtest: %s uploads %s of the scorehub module (-module): %w", spec.flag, pairModelFile, err)
	}
	admin := &manager{client: c, base: base, user: adminName, password: adminPassword}
	if err := admin.login(ctx); err != nil {
		return nil, err
	}
	name := "loadtest-" + strings.ToLower(rand.Text()[:10])
	p = &pair{names: spec.names, rpsTarget: spec.rpsTarget, wallTarget: spec.wallTarget, group: group, name: name, scaffold: scaffold{admin: admin}}
	defer func() {
		if err != nil {
			err = errors.Join(err, p.remove(context.WithoutCancel(ctx)))
			p = nil
		}
	}()
	endpoints, err := spec.endpoints(ctx, p, artifact)
	if err != nil {
		return p, err
	}
	for i, e := range endpoints {
		e["alias"] = spec.names[i]
	}
	dep := map[string]any{"group": group, "path": name, "description": "made by cmd/loadtest for one run", "endpoints": endpoints[:]}
	if err := admin.call(ctx, http.MethodPost, "/api/v1/deployments", dep, nil); err != nil {
		return p, err
	}
	p.created = append(p.created, "/api/v1/deployments/"+url.PathEscape(group)+"/"+name)
	for i, alias := range spec.names {
		p.paths[i] = prefix + "/" + group + "/api/v1/services/" + name + "/" + alias
	}
	return p, nil
}

// uploaded is what an upload answers of the version it stored.
type uploaded struct {
	Version int `json:"version"`
	Inputs  []struct {
		Name string `json:"name"`
	} `json:"inputs"`
	// Reference is what the version's drift is measured against.
	Reference *struct {
		Rows       int64    `json:"rows"`
		Features   []string `json:"features"`
		Prediction string   `json:"prediction"`
		Declared   bool     `json:"declared"`
	} `json:"reference"`
}

// upload uploads artifact as a version of the pair's model, described as
// made for the run as role, with reference, when not nil, as its
// reference rows in CSV; and returns the version stored, name@version,
// and what the server answered of it.
func (p *pair) upload(ctx context.Context, artifact []byte, role string, reference []byte) (string, uploaded, error) {
	// The descriptions of two uploads of one file differ, as an upload of
	// the same file and metadata is the version already stored.
	meta, err := json.Marshal(map[string]any{"label": "species", "classes": pairModelClasses, "description": "made by cmd/loadtest for one run: " + role})
	if err != nil {
		return "", uploaded{}, fmt.Errorf("loadtest: %w", err)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	parts := []struct {
		name, contentType string
		body              []byte
	}{{"artifact", "application/json", artifact}, {"metadata", "application/json", meta}, {"reference", "text/csv", reference}}
	for _, part := range parts {
		if part.body == nil {
			continue
		}
		w, err := mw.CreatePart(textproto.MIMEHeader{
			"Content-Disposition": {fmt.Sprintf(`form-data; name=%q`, part.name)},
			"Content-Type":        {part.contentType},
		})
		if err == nil {
			_, err = w.Write(part.body)
		}
		if err != nil {
			return "", uploaded{}, fmt.Errorf("loadtest: %w", err)
		}
	}
	if err := mw.Close(); err != nil {
		return "", uploaded{}, fmt.Errorf("loadtest: %w", err)
	}
	var v uploaded
	model := "/api/v1/models/" + p.name
	if err := p.admin.send(ctx, http.MethodPost, model+"/versions", mw.FormDataContentType(), body.Bytes(), &v); err != nil {
		return "", v, err
	}
	if !slices.Contains(p.created, model) {
		p.created = append(p.created, model) // with every version
	}
	return fmt.Sprintf("%s@%d", p.name, v.Version), v, nil
}

// endpoint is the management path of the pair's endpoint i.
func (p *pair) endpoint(i int) string {
	return "/api/v1/endpoints/" + url.PathEscape(p.group) + "/" + p.name + "/" + p.names[i]
}

// get reads path of the management API into out, when not nil, logged
// in afresh if the admin's idToken is about to expire, as it may during
// a long run.
func (s *scaffold) get(ctx context.Context, path string, out any) error {
	if time.Until(s.admin.expires) < time.Minute {
		if err := s.admin.login(ctx); err != nil {
			return err
		}
	}
	return s.admin.call(ctx, http.MethodGet, path, nil, out)
}

// pairForRun deploys the endpoints -challenger or -monitor measures and
// checks that both answer every request size, and under -challenger that
// the challenger can score. On an error it deletes what it made.
func pairForRun(ctx context.Context, cfg config, srv *underTest, client *http.Client, stderr io.Writer) (p *pair, err error) {
	setup := newClient(1, cfg.Timeout)
	defer setup.CloseIdleConnections()
	if cfg.Challenger != "" {
		p, err = deployChallenged(ctx, setup, srv.base, cfg.Path, cfg.ModuleDir, cfg.Challenger, srv.adminPassword)
	} else {
		p, err = deployMonitored(ctx, setup, srv.base, cfg.Path, cfg.ModuleDir, srv.adminPassword)
	}
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, p.remove(context.WithoutCancel(ctx)))
		}
	}()
	rep := p.report(srv.base)
	about := rep.about()
	fmt.Fprintf(stderr, "loadtest: %s at %s (%s), %s at %s (%s)\n",
		p.names[0], srv.base+p.paths[0], about[0], p.names[1], rep.CeilingURL, about[1])
	sizes := cfg.Rows
	if cfg.Large > 0 {
		sizes = append(sizes[:len(sizes):len(sizes)], cfg.Large)
	}
	for _, rows := range sizes {
		for _, path := range p.paths {
			resp, err := probe(ctx, client, target{url: srv.base + path, body: demo.IrisRequest(rows)})
			if err != nil {
				return nil, fmt.Errorf("loadtest: the model endpoint does not answer: %w", err)
			}
			if err := checkRows(resp, rows); err != nil {
				return nil, err
			}
		}
	}
	if p.challenger != nil {
		if _, err := p.work(ctx); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// report is what the report says of p, whose server is at base, before
// the run.
func (p *pair) report(base string) *pairReport {
	r := &pairReport{Measured: p.names[0], Ceiling: p.names[1], CeilingURL: base + p.paths[1], Model: p.model}
	if c := p.challenger; c != nil {
		r.Challenger, r.ChallengerModel = c.mode, c.model
	}
	r.Reference = p.monitor
	return r
}

// pairReport is what the report says of the pair of endpoints
// -challenger or -monitor measured: the first at the report's
// ScoringURL, the second its ceiling. The report's scenarios are named
// for them, and each of its ratios is the first's requests per second
// over the second's.
type pairReport struct {
	Measured   string `json:"measured"` // the scenario of the endpoint measured: "shadowed", "monitored"
	Ceiling    string `json:"ceiling"`  // of its ceiling: "plain", "unmonitored"
	CeilingURL string `json:"ceilingUrl"`
	Model      string `json:"model"` // the version both name, name@version: under -challenger, the champion
	// Challenger, under -challenger, is the mode ("shadow") of the
	// challenger, ChallengerModel, of the endpoint measured.
	Challenger      string `json:"challenger,omitempty"`
	ChallengerModel string `json:"challengerModel,omitempty"`
	// Reference, under -monitor, is the reference of Model, which the
	// monitor of the endpoint measured counts its rows against; the
	// ceiling's monitor is off. Drift is what the monitor counted, read
	// after the run.
	Reference *driftReference `json:"reference,omitempty"`
	Drift     *driftFigures   `json:"drift,omitempty"`
	// Large is the large-request comparison of the two, when -large asked
	// for one.
	Large *pairLargeReport `json:"large,omitempty"`
}

// about says what each endpoint is, as the report's head does.
func (r *pairReport) about() [2]string {
	if r.Reference != nil {
		return [2]string{r.Model + ", monitor on with its defaults", r.Model + ", monitor off"}
	}
	return [2]string{fmt.Sprintf("%s, challenger %s in %s mode", r.Model, r.ChallengerModel, r.Challenger), r.Model}
}

// pairLargeReport compares large requests to the two endpoints of a
// pair, one at a time over one connection, the two alternating round by
// round. The client's wall time per request ends with the answer's last
// byte: a shadow runs after it, beside the next request, and a monitor
// counts the rows once the answer is written.
type pairLargeReport struct {
	Rows          int           `json:"rows"`
	RequestBytes  int           `json:"requestBytes"`
	ResponseBytes int           `json:"responseBytes"`
	PauseMs       float64       `json:"pauseMs,omitempty"` // how long the client waited after each answer
	Servers       []largeServer `json:"endpoints"`         // the one measured, then its ceiling
	// Wall is the median wall time per request of the one measured over
	// its ceiling's, the median of the rounds' ratios in WallRounds.
	Wall       float64   `json:"wallRatio"`
	WallRounds []float64 `json:"wallRatioRounds"`
	Target     float64   `json:"wallTarget"` // the most Wall should be
	// CPU is the server's CPU time per request of the one measured over
	// its ceiling's, the median of CPURounds; 0 when not measured.
	CPU       float64   `json:"cpuRatio,omitempty"`
	CPURounds []float64 `json:"cpuRatioRounds,omitempty"`
	// Shadow, under -challenger, is what the challenger did meanwhile,
	// unmeasured requests included.
	Shadow *shadowWork `json:"shadow,omitempty"`
}

// measureLargePair runs cfg.Rounds rounds of cfg.LargeRequests requests
// of cfg.Large rows to each endpoint of p in turn, on the server at base
// (process pid, 0 when unknown), and returns their comparison.
func measureLargePair(ctx context.Context, cfg config, p *pair, base string, pid int, stderr io.Writer) (*pairLargeReport, error) {
	body := demo.IrisRequest(cfg.Large)
	client := newClient(1, cfg.Timeout)
	defer client.CloseIdleConnections()
	peers := []largePeer{{p.names[0], base + p.paths[0], pid}, {p.names[1], base + p.paths[1], pid}}
	resp, err := probe(ctx, client, target{url: peers[1].url, body: body})
	if err != nil {
		return nil, fmt.Errorf("loadtest: the model endpoint does not answer: %w", err)
	}
	var before shadowWork
	if p.challenger != nil {
		if before, err = p.work(ctx); err != nil {
			return nil, err
		}
	}
	all, wall, cpu, err := largeRounds(ctx, cfg, client, peers, body, stderr)
	if err != nil {
		return nil, err
	}
	lr := &pairLargeReport{Rows: cfg.Large, RequestBytes: len(body), ResponseBytes: len(resp), PauseMs: ms(cfg.LargePause),
		Servers: largeServers(peers, all, wall), Target: p.wallTarget}
	for round := range cfg.Rounds {
		lr.WallRounds = append(lr.WallRounds, wall[0][round]/wall[1][round])
		if cpu[0][round] > 0 && cpu[1][round] > 0 {
			lr.CPURounds = append(lr.CPURounds, float64(cpu[0][round])/float64(cpu[1][round]))
		}
	}
	lr.Wall, lr.CPU = median(lr.WallRounds), median(lr.CPURounds)
	if p.challenger != nil {
		// Each round ends with the ceiling's requests, long enough for
		// the last shadow to be done.
		after, err := p.work(ctx)
		if err != nil {
			return nil, err
		}
		w := after.since(before)
		lr.Shadow = &w
	}
	return lr, nil
}

// write writes the comparison for people.
func (lr *pairLargeReport) write(w io.Writer) {
	measured, ceiling := lr.Servers[0].Server, lr.Servers[1].Server
	fmt.Fprintf(w, "\n%s, %d bytes in, %d bytes out, one request at a time%s, %s and %s alternating:\n",
		rowsText(lr.Rows), lr.RequestBytes, lr.ResponseBytes, pacing(lr.PauseMs), measured, ceiling)
	writeLargeServers(w, lr.Servers)
	fmt.Fprintf(w, "%s/%s wall: %.2f median of %s (target ≤ %g: %s)\n",
		measured, ceiling, lr.Wall, formatRatios(lr.WallRounds), lr.Target, verdict(lr.Wall <= lr.Target))
	if lr.CPU > 0 {
		fmt.Fprintf(w, "%s/%s server CPU per request: %.2f median of %s\n", measured, ceiling, lr.CPU, formatRatios(lr.CPURounds))
	}
	if lr.Shadow != nil {
		fmt.Fprintf(w, "shadow meanwhile, warm-up included: %s\n", lr.Shadow.text())
	}
}

// pacing says how the client paced large requests that waited pauseMs
// after each answer.
func pacing(pauseMs float64) string {
	if pauseMs == 0 {
		return ""
	}
	return fmt.Sprintf(" (the client waiting %g ms after each answer)", pauseMs)
}
