package management_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/demo"
	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/management"
	"github.com/scorehub/scorehub/middleware"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/jobs"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/registry/registrytest"
	"github.com/scorehub/scorehub/scoring"
	"github.com/scorehub/scorehub/tokens"
	"github.com/scorehub/scorehub/tokens/accounts"
)

const (
	testIssuer   = "https://scorehub.test"
	testAudience = "scorehub"
	testRealm    = "scorehub-test"
)

// fixture is a server laid out as the standalone one: the management API at
// the root, the token routes under /api/rest/ and the scoring handler under
// /webapi, over a memory store, with the model format of
// registrytest.LinearFormat.
type fixture struct {
	store    *registry.MemStore
	reg      *registry.Registry
	handler  *management.Handler
	jobs     *scoring.Jobs // nil withoutJobs
	jobStore *jobs.MemStore
	accounts *accounts.Book // nil unless withAccounts
	issuer   *tokens.Issuer
	srv      *httptest.Server
	client   *http.Client
	logs     *testutil.LockedBuffer

	admin, reader, expired, forged string // bearer tokens
}

type fixtureOptions struct {
	cfg      management.Config         // Registry, Queues, Verifier, Logger and Jobs are filled in
	procs    []process.ProcessInfo     // registered besides iris and double
	noJobs   bool                      // leave Config.Jobs nil
	jobs     func(*scoring.JobsConfig) // changes the runner's configuration
	accounts bool                      // set Config.Accounts
	debug    bool                      // log at debug level
	store    *registry.MemStore        // the registry's store; nil for a new one
	noFormat bool                      // register no model format
	formats  []process.ModelFormat     // registered after registrytest.LinearFormat
	// wrapStore and wrapJobs, when set, put something between the
	// registry and its store, and between the jobs runner and its store.
	wrapStore func(registry.Store) registry.Store
	wrapJobs  func(jobs.Store) jobs.Store
}

// withStore builds the registry over s, which may hold records already.
func withStore(s *registry.MemStore) func(*fixtureOptions) {
	return func(o *fixtureOptions) { o.store = s }
}

// withoutModelFormats leaves the catalog without a model format, as a
// build that reads none of the models its store holds.
func withoutModelFormats() func(*fixtureOptions) {
	return func(o *fixtureOptions) { o.noFormat = true }
}

// withModelFormat registers format too, after registrytest.LinearFormat.
func withModelFormat(format process.ModelFormat) func(*fixtureOptions) {
	return func(o *fixtureOptions) { o.formats = append(o.formats, format) }
}

// withAccounts sets Config.Accounts: users and API tokens in memory, with
// root and ann as the read-only users of a users file. Bcrypt at the
// lowest cost Accounts takes is slow under the race detector, so only the
// tests of these routes ask for it.
func withAccounts() func(*fixtureOptions) {
	return func(o *fixtureOptions) { o.accounts = true }
}

// withDebugLogs keeps the records of every level, refusals' causes
// included.
func withDebugLogs() func(*fixtureOptions) {
	return func(o *fixtureOptions) { o.debug = true }
}

// withJobsConfig changes the jobs runner's configuration with edit.
func withJobsConfig(edit func(*scoring.JobsConfig)) func(*fixtureOptions) {
	return func(o *fixtureOptions) { o.jobs = edit }
}

// withoutJobs leaves the management configuration without a jobs runner.
func withoutJobs() func(*fixtureOptions) {
	return func(o *fixtureOptions) { o.noJobs = true }
}

// withConfig sets the management configuration's other fields.
func withConfig(cfg management.Config) func(*fixtureOptions) {
	return func(o *fixtureOptions) { o.cfg = cfg }
}

// withProcess registers p in the catalog too.
func withProcess(p process.ProcessInfo) func(*fixtureOptions) {
	return func(o *fixtureOptions) { o.procs = append(o.procs, p) }
}

// adminPassword is the password of the users "root" (admin) and "ann".
const adminPassword = "correct horse battery staple"

func newFixture(t testing.TB, opts ...func(*fixtureOptions)) *fixture {
	t.Helper()
	var o fixtureOptions
	for _, fn := range opts {
		fn(&o)
	}
	ctx := context.Background()
	cat := process.NewCatalog()
	iris, err := demo.Iris()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append([]process.ProcessInfo{iris, doubler()}, o.procs...) {
		if err := cat.Register(p); err != nil {
			t.Fatal(err)
		}
	}
	if !o.noFormat {
		for _, format := range append([]process.ModelFormat{&registrytest.LinearFormat{}}, o.formats...) {
			if err := cat.RegisterFormat(format); err != nil {
				t.Fatal(err)
			}
		}
	}
	f := &fixture{store: o.store, logs: &testutil.LockedBuffer{}}
	if f.store == nil {
		f.store = registry.NewMemStore(registry.StoreOptions{})
	}
	var store registry.Store = f.store
	if o.wrapStore != nil {
		store = o.wrapStore(store)
	}
	if f.reg, err = registry.New(ctx, cat, store); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.reg.Close() })
	level := slog.LevelInfo
	if o.debug {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewJSONHandler(f.logs, &slog.HandlerOptions{Level: level}))

	keys, err := tokens.NewKeySet(tokens.KeySetConfig{})
	if err != nil {
		t.Fatal(err)
	}
	issuer := newIssuer(t, keys, time.Now)
	f.issuer = issuer
	verifier, err := tokens.NewVerifier(tokens.VerifierConfig{Keys: keys, Issuer: testIssuer, Audience: testAudience})
	if err != nil {
		t.Fatal(err)
	}
	f.admin = issue(t, issuer, tokens.Principal{Subject: "root", Admin: true})
	f.reader = issue(t, issuer, tokens.Principal{Subject: "ann", Groups: []string{"analysts"}})
	hourAgo := time.Now().Add(-time.Hour)
	f.expired = issue(t, newIssuer(t, keys, func() time.Time { return hourAgo }), tokens.Principal{Subject: "root", Admin: true})
	otherKeys, err := tokens.NewKeySet(tokens.KeySetConfig{})
	if err != nil {
		t.Fatal(err)
	}
	f.forged = issue(t, newIssuer(t, otherKeys, time.Now), tokens.Principal{Subject: "root", Admin: true})

	hash, err := accounts.HashPassword(adminPassword, 4)
	if err != nil {
		t.Fatal(err)
	}
	users, err := accounts.NewStaticUsers(
		accounts.User{Name: "root", PasswordHash: hash, Admin: true},
		accounts.User{Name: "ann", PasswordHash: hash, Groups: []string{"analysts"}},
	)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokens.NewService(tokens.ServiceConfig{Issuer: issuer, Users: users, Renewer: verifier, Realm: testRealm, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	creds, err := middleware.NewCredentials(middleware.CredentialsConfig{
		BearerConfig: middleware.BearerConfig{Verifier: verifier, Realm: testRealm, Logger: logger},
	})
	if err != nil {
		t.Fatal(err)
	}
	authorize := creds.Authorize
	scorer, err := scoring.New(scoring.Config{Registry: f.reg, Logger: logger, Authorize: authorize})
	if err != nil {
		t.Fatal(err)
	}
	cfg := o.cfg
	cfg.Registry, cfg.Queues, cfg.Verifier, cfg.Logger = f.reg, scorer.Queues(), verifier, logger
	if !o.noJobs {
		f.jobStore = jobs.NewMemStore(registry.StoreOptions{})
		var jobStore jobs.Store = f.jobStore
		if o.wrapJobs != nil {
			jobStore = o.wrapJobs(jobStore)
		}
		jcfg := scoring.JobsConfig{Registry: f.reg, Queues: scorer.Queues(), Store: jobStore, Logger: logger, Authorize: authorize}
		if o.jobs != nil {
			o.jobs(&jcfg)
		}
		if f.jobs, err = scoring.NewJobs(jcfg); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.jobs.Close(); f.jobStore.Close() })
		cfg.Jobs = f.jobs
	}
	if o.accounts {
		if f.accounts, err = accounts.Open(ctx, accounts.Config{
			Store: accounts.NewMemoryStore(), ReadOnly: users, BcryptCost: 10, Logger: logger,
		}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.accounts.Close() })
		cfg.Accounts = f.accounts
	}
	if cfg.Realm == "" {
		cfg.Realm = testRealm
	}
	if cfg.TokenRoutes == nil {
		cfg.TokenRoutes = tok.Routes()
	}
	if f.handler, err = management.New(cfg); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", f.handler)
	mux.Handle("/api/rest/", tok)
	mux.Handle("/webapi/", http.StripPrefix("/webapi", scorer))
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	f.client = f.srv.Client()
	return f
}

func newIssuer(t testing.TB, keys *tokens.KeySet, now func() time.Time) *tokens.Issuer {
	t.Helper()
	iss, err := tokens.NewIssuer(tokens.IssuerConfig{Keys: keys, Issuer: testIssuer, Audience: []string{testAudience}, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return iss
}

func issue(t testing.TB, iss *tokens.Issuer, p tokens.Principal) string {
	t.Helper()
	raw, _, err := iss.Issue(p)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// tokenFor returns an idToken of the fixture's issuer for subject.
func (f *fixture) tokenFor(t testing.TB, subject string, admin bool) string {
	t.Helper()
	return issue(t, f.issuer, tokens.Principal{Subject: subject, Admin: admin})
}

// doubler is a catalog process that doubles the number column x.
func doubler() process.ProcessInfo {
	return process.ProcessInfo{
		Name:        "double",
		Description: "Doubles x.",
		Input:       []process.ColumnSpec{{Name: "x", Kind: process.Number, Required: true}},
		Output:      []process.ColumnSpec{{Name: "double", Kind: process.Number}},
		Process: process.ProcessFunc(func(_ context.Context, in process.Input) (*process.Table, error) {
			x, _ := in.Table.Lookup("x") // Required: the scoring handler made sure it is there
			out := make([]float64, in.Table.Rows())
			for i := range out {
				v, ok := x.Number(i)
				if !ok {
					v = math.NaN()
				}
				out[i] = 2 * v
			}
			return process.NewTable(len(out), process.NumberColumn("double", out, nil))
		}),
	}
}

// putDeployment stores d directly, over whatever is there.
func (f *fixture) putDeployment(t testing.TB, d registry.Deployment) registry.Deployment {
	t.Helper()
	d.Revision = registry.AnyRevision
	out, err := f.reg.PutDeployment(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// putGroup stores g directly, over whatever is there.
func (f *fixture) putGroup(t testing.TB, g registry.Group) registry.Group {
	t.Helper()
	g.Revision = registry.AnyRevision
	out, err := f.reg.PutGroup(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// putQueue stores q directly, over whatever is there.
func (f *fixture) putQueue(t testing.TB, q registry.Queue) registry.Queue {
	t.Helper()
	q.Revision = registry.AnyRevision
	out, err := f.reg.PutQueue(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// score posts body to the scoring endpoint group/path/alias.
func (f *fixture) score(t testing.TB, group, path, alias, body string) response {
	t.Helper()
	return f.do(t, request{method: http.MethodPost, path: "/webapi/" + group + "/api/v1/services/" + path + "/" + alias, body: body})
}

// request describes one request of a test.
type request struct {
	method, path string
	token        string
	body         string
	contentType  string // defaults to application/json when body is set
	header       map[string]string
}

// response is what came back, with the body parsed where it is JSON.
type response struct {
	status int
	header http.Header
	body   []byte
	json   map[string]any
	list   []any
}

// do sends rq through the fixture's client.
func (f *fixture) do(t testing.TB, rq request) response {
	t.Helper()
	var body io.Reader
	if rq.body != "" {
		body = strings.NewReader(rq.body)
	}
	req, err := http.NewRequest(rq.method, f.srv.URL+rq.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := rq.contentType; ct != "" {
		req.Header.Set("Content-Type", ct)
	} else if rq.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if rq.token != "" {
		req.Header.Set("Authorization", "Bearer "+rq.token)
	}
	for k, v := range rq.header {
		req.Header.Set(k, v)
	}
	res, err := f.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out := response{status: res.StatusCode, header: res.Header}
	if out.body, err = io.ReadAll(res.Body); err != nil {
		t.Fatal(err)
	}
	if len(bytes.TrimSpace(out.body)) > 0 && strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		var v any
		if err := json.Unmarshal(out.body, &v); err != nil {
			t.Fatalf("%s %s: body is not JSON: %v\n%s", rq.method, rq.path, err, out.body)
		}
		out.json, _ = v.(map[string]any)
		out.list, _ = v.([]any)
	}
	return out
}

// page returns a list answer's page, failing the test unless it is one.
func (r response) page(t testing.TB) *testutil.Page {
	t.Helper()
	_, p, err := testutil.DecodeList(r.body)
	if err != nil || p == nil {
		t.Fatalf("not a page (%v): %s", err, r.body)
	}
	return p
}

// errorType returns the type of a JSON error answer.
func (r response) errorType() string {
	e, _ := r.json["error"].(map[string]any)
	s, _ := e["type"].(string)
	return s
}

// errorField returns a member of a JSON error answer.
func (r response) errorField(name string) any {
	e, _ := r.json["error"].(map[string]any)
	return e[name]
}

// want fails the test unless the status is status (and, for errors, the
// type is typ when typ is not empty).
func (r response) want(t testing.TB, status int, typ string) {
	t.Helper()
	if r.status != status || (typ != "" && r.errorType() != typ) {
		t.Fatalf("answered %d %q, want %d %q; body: %s", r.status, r.errorType(), status, typ, r.body)
	}
}

// logRecords returns the JSON log records in logs with the given message.
func logRecords(t testing.TB, logs *testutil.LockedBuffer, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range bytes.Split(logs.Bytes(), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatalf("log line %q is not JSON: %v", line, err)
		}
		if rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

// verifierFunc adapts a function to middleware.TokenVerifier.
type verifierFunc func(ctx context.Context, raw string) (*tokens.Claims, error)

func (f verifierFunc) Verify(ctx context.Context, raw string) (*tokens.Claims, error) {
	return f(ctx, raw)
}
