package management

import (
	"errors"
	"fmt"
	"github.com/scorehub/scorehub/registry/outcomes"
	"github.com/scorehub/scorehub/registry/payloads"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-playground/validator/v10"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/internal/keyedlimit"
	"github.com/scorehub/scorehub/internal/muxcheck"
	"github.com/scorehub/scorehub/internal/urlpath"
	"github.com/scorehub/scorehub/middleware"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/scoring"
	"github.com/scorehub/scorehub/tokens"
	"github.com/scorehub/scorehub/tokens/accounts"
)

// DefaultScoringPrefix is where the scoring handler is taken to be mounted
// when [Config.ScoringPrefix] is empty: /webapi, as in the standalone server
// and AI Hub 10.2 and later.
const DefaultScoringPrefix = "/webapi"

// DefaultMaxBodyBytes bounds request bodies when [Config.MaxBodyBytes] is
// zero: 1 MiB.
const DefaultMaxBodyBytes = 1 << 20

// Config configures a [Handler].
type Config struct {
	// Registry holds the records the API manages and the process catalog
	// it lists. Required.
	Registry *registry.Registry

	// Queues gives the live figures of the execution queues. It must be the
	// Queues the scoring handler runs on (scoring.Handler.Queues), built
	// over Registry. Required.
	Queues *scoring.Queues

	// Verifier checks the idTokens of every route but the health probes and
	// the OpenAPI document. Required; *tokens.Verifier implements it.
	Verifier middleware.TokenVerifier

	// Realm names the protection space in WWW-Authenticate challenges.
	// Empty means middleware.DefaultRealm. It must be printable ASCII.
	Realm string

	// ScoringPrefix is the path at which the host mounts the scoring
	// handler, relative to where it mounts this Handler: a Handler mounted
	// under /ml with http.StripPrefix writes scoring URLs under
	// /ml+ScoringPrefix, and its OpenAPI document names /ml as its server.
	// It builds each endpoint's scoring URL in GET /api/v1/endpoints and
	// the scoring route of the OpenAPI document. Empty means
	// [DefaultScoringPrefix]; "/" means the root. Segments may hold
	// letters, digits, '.', '_', '-' and '~'. A host that mounts scoring
	// elsewhere than beside the Handler sets BaseURL.
	ScoringPrefix string

	// BaseURL is the public address of the server, such as
	// "https://scoring.example.com" or "https://example.com/scorehub", that
	// scoring URLs start with and the OpenAPI document names as its server.
	// Empty means each request's own: its Host header, with https when it
	// came over TLS and http otherwise. Behind a reverse proxy that
	// terminates TLS or rewrites the host, set it: forwarded headers are
	// not trusted.
	BaseURL string

	// MaxBodyBytes bounds request bodies; a larger one is answered 413.
	// Zero means [DefaultMaxBodyBytes]; it may not be negative.
	MaxBodyBytes int64

	// MaxModelBytes bounds the body of a model upload (POST
	// /api/v1/models/{name}/versions): the model file, and in a multipart
	// upload its metadata with it. A larger one is answered 413. Zero
	// means [DefaultMaxModelBytes]; it may not be negative. Each format
	// has limits of its own besides (trees, nodes, features).
	MaxModelBytes int64

	// Logger receives one record per write (subject, method, route,
	// status), refusals at debug level and server faults with their cause.
	// Nil means slog.Default().
	Logger *slog.Logger

	// Jobs runs execution jobs. Nil means the /executions/jobs routes are
	// not served (they answer 404, and Routes leaves them out); a given one
	// must be built over Registry and Queues.
	Jobs *scoring.Jobs

	// Credentials, when set, checks the credentials of the job routes in
	// place of Verifier: every kind it takes (HTTP Basic, API tokens, an
	// OpenID Connect provider's access tokens, idTokens), so that a job can
	// be submitted with what the scoring endpoint it names takes. The job's
	// endpoint is then checked against its group's policy as scoring checks
	// it (scoring.JobsConfig.Authorize). Nil means idTokens only, as on
	// every other route.
	Credentials *middleware.Credentials

	// Outcomes keeps the predictions of rows with IDs and their outcomes
	// (the Queues hand it the predictions, see scoring.Queues.KeepPredictions):
	// POST …/feedback records outcomes and GET …/performance measures the
	// models on them. Nil means those routes are not served (they answer
	// 404, and the OpenAPI document leaves them out).
	Outcomes outcomes.Store

	// Payloads is the payload log the Queues hand sampled rows to (see
	// scoring.Queues.LogPayloads): GET …/payloads pages through it, for
	// administrators. Nil means that route is not served.
	Payloads payloads.Store

	// Accounts keeps the users and API tokens that the /api/v1/users and
	// /api/v1/apitokens routes manage. Nil means those routes are not
	// served (they answer 404, and Routes and the OpenAPI document leave
	// them out).
	Accounts *accounts.Book

	// TokenRoutes are the routes of the token service the host serves
	// beside the Handler, as [tokens.Service.Routes] lists them ("GET
	// /api/rest/tokenservice"). The OpenAPI document describes these token
	// routes and leaves the others out. Nil means none: a host without a
	// tokens.Service. A route that is not a token route is an error.
	TokenRoutes []string

	// JobsRequireAdmin makes submitting and stopping jobs an
	// administrator's right. False lets any valid token do it; reading
	// jobs needs a valid token either way.
	JobsRequireAdmin bool
}

// Handler is the management API. Its routes are relative to "/"; the
// standalone server mounts it at the root, beside the token routes and the
// scoring prefix. Every answer is JSON, errors included: an unknown path is
// a JSON 404 and a method a route does not take a JSON 405.
//
// A Handler is immutable once made and safe for concurrent use.
type Handler struct {
	mux      *http.ServeMux
	reg      *registry.Registry
	queues   *scoring.Queues
	jobs     *scoring.Jobs
	accounts *accounts.Book
	// wrongPasswords limits wrong currentPassword members per user, so
	// that a stolen idToken cannot guess its holder's password.
	wrongPasswords *keyedlimit.Limiter
	logger         *slog.Logger
	prefix         string // "" for the root
	baseURL        string // "" to take it from each request
	validate       *validator.Validate
	openapi        []byte
	unserved       []string                   // the patterns left out of openapi
	mounted        atomic.Pointer[mountedDoc] // openapi as last served under a mount prefix
	routes         []string
	outcomes       outcomes.Store
	payloads       payloads.Store
	credentials    *middleware.Credentials
}

// New checks cfg and returns a Handler. It fails when Registry, Queues or
// Verifier is missing, when the realm, scoring prefix, base URL or body
// limit is not valid, and when the program runs with the pre-Go 1.22
// http.ServeMux.
func New(cfg Config) (*Handler, error) {
	if err := muxcheck.Check(); err != nil {
		return nil, fmt.Errorf("management: %w", err)
	}
	switch {
	case cfg.Registry == nil:
		return nil, errors.New("management: Config.Registry is required")
	case cfg.Queues == nil:
		return nil, errors.New("management: Config.Queues is required")
	case cfg.Verifier == nil:
		return nil, errors.New("management: Config.Verifier is required")
	case cfg.MaxBodyBytes < 0:
		return nil, fmt.Errorf("management: Config.MaxBodyBytes %d is negative", cfg.MaxBodyBytes)
	case cfg.MaxModelBytes < 0:
		return nil, fmt.Errorf("management: Config.MaxModelBytes %d is negative", cfg.MaxModelBytes)
	}
	// The live figures and the jobs must be those of the executions the
	// scoring handler runs, over the records this API writes.
	switch {
	case cfg.Queues.Registry() != cfg.Registry:
		return nil, errors.New("management: Config.Queues are built over another registry than Config.Registry")
	case cfg.Jobs != nil && cfg.Jobs.Queues() != cfg.Queues:
		return nil, errors.New("management: Config.Jobs runs on other queues than Config.Queues")
	}
	prefix, err := cleanPrefix(cfg.ScoringPrefix)
	if err != nil {
		return nil, err
	}
	base, err := cleanBaseURL(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	bearer, err := middleware.Bearer(middleware.BearerConfig{Verifier: cfg.Verifier, Realm: cfg.Realm, Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("management: %w", err)
	}
	maxBody := cfg.MaxBodyBytes
	if maxBody == 0 {
		maxBody = DefaultMaxBodyBytes
	}
	bodyLimit, err := middleware.BodyLimit(maxBody)
	if err != nil {
		return nil, fmt.Errorf("management: %w", err)
	}
	maxModel := cfg.MaxModelBytes
	if maxModel == 0 {
		maxModel = DefaultMaxModelBytes
	}
	modelLimit, err := middleware.BodyLimit(maxModel)
	if err != nil {
		return nil, fmt.Errorf("management: %w", err)
	}
	h := &Handler{
		reg:      cfg.Registry,
		queues:   cfg.Queues,
		jobs:     cfg.Jobs,
		accounts: cfg.Accounts,
		// Five wrong current passwords, then one more every minute.
		wrongPasswords: must(keyedlimit.New(time.Minute, 5, 0)),
		logger:         logger,
		prefix:         prefix,
		baseURL:        base,
		validate:       newValidator(),
		outcomes:       cfg.Outcomes,
		payloads:       cfg.Payloads,
		credentials:    cfg.Credentials,
	}
	h.mux = http.NewServeMux()
	var paths []string
	methods := map[string][]string{}
	routes := append(routeTable(), modelRoutes()...)
	var unserved []string // patterns of optional routes left out
	if cfg.Accounts != nil {
		routes = append(routes, accountRoutes()...)
	} else {
		for _, rt := range accountRoutes() {
			unserved = append(unserved, rt.pattern)
		}
	}
	unservedTokens, err := unservedTokenRoutes(cfg.TokenRoutes)
	if err != nil {
		return nil, err
	}
	unserved = append(unserved, unservedTokens...)
	var jobBodyLimit func(http.Handler) http.Handler
	jobAuth := bearer
	if cfg.Credentials != nil {
		jobAuth = cfg.Credentials.Middleware
	}
	if cfg.Jobs != nil {
		routes = append(routes, jobRoutes()...)
		// A job's body holds rows, bounded by the runner's limit for jobs,
		// which is below a scoring request's as jobs are kept.
		if jobBodyLimit, err = middleware.BodyLimit(cfg.Jobs.Limits().MaxBodyBytes); err != nil {
			return nil, fmt.Errorf("management: %w", err)
		}
	} else {
		for _, rt := range jobRoutes() {
			unserved = append(unserved, rt.pattern)
		}
	}
	if cfg.Outcomes != nil {
		routes = append(routes, outcomeRoutes()...)
	} else {
		for _, rt := range outcomeRoutes() {
			unserved = append(unserved, rt.pattern)
		}
	}
	if cfg.Payloads != nil {
		routes = append(routes, payloadRoutes()...)
	} else {
		for _, rt := range payloadRoutes() {
			unserved = append(unserved, rt.pattern)
		}
	}
	h.unserved = unserved
	if h.openapi, err = renderOpenAPI(prefix, base, unserved); err != nil {
		return nil, err
	}
	for _, rt := range routes {
		var next http.Handler = h.serve(rt)
		switch rt.access {
		case readAccess:
			next = noStore(bearer(next))
		case anyoneReadAccess:
			next = noStore(optionalBearer(bearer, next))
		case writeAccess:
			next = noStore(h.writeLog(rt)(bearer(middleware.RequireAdmin(bodyLimit(next)))))
		case uploadAccess:
			next = noStore(h.writeLog(rt)(bearer(middleware.RequireAdmin(modelLimit(next)))))
		case adminReadAccess:
			next = noStore(bearer(middleware.RequireAdmin(next)))
		case ownReadAccess:
			next = noStore(bearer(next))
		case ownWriteAccess:
			next = noStore(h.writeLog(rt)(bearer(bodyLimit(next))))
		case feedbackAccess:
			next = noStore(h.writeLog(rt)(jobAuth(bodyLimit(next))))
		case jobAccess:
			next = jobBodyLimit(next)
			if cfg.JobsRequireAdmin {
				next = middleware.RequireAdmin(next)
			}
			next = noStore(h.writeLog(rt)(jobAuth(next)))
		}
		if rt.pattern == apiTokenPattern {
			next = hideSecretInPath(next)
		}
		h.mux.Handle(rt.method+" "+rt.pattern, next)
		h.routes = append(h.routes, rt.method+" "+rt.pattern)
		if methods[rt.pattern] == nil {
			paths = append(paths, rt.pattern)
		}
		methods[rt.pattern] = append(methods[rt.pattern], rt.method)
	}
	for _, p := range paths {
		h.mux.Handle(p, methodNotAllowed(methods[p]))
	}
	h.mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httperr.Write(w, r, h.logger, errRouteNotFound)
	}))
	return h, nil
}

// tokenPaths are the token routes the OpenAPI document describes, by the
// pattern tokens.Service.Routes lists them under.
var tokenPaths = map[string]string{
	"GET " + tokens.PathTokenService: tokens.PathTokenService,
	"GET " + tokens.PathRenew:        tokens.PathRenew,
	"GET " + tokens.PathExchange:     tokens.PathExchange,
	"GET " + tokens.PathJWKS:         tokens.PathJWKS,
}

// unservedTokenRoutes returns the paths of the token routes not in served,
// for the OpenAPI document to leave out; a served route that is not a token
// route is an error.
func unservedTokenRoutes(served []string) ([]string, error) {
	for _, r := range served {
		if _, ok := tokenPaths[r]; !ok {
			return nil, fmt.Errorf("management: Config.TokenRoutes: %q is not a token route", r)
		}
	}
	var out []string
	for route, path := range tokenPaths {
		if !slices.Contains(served, route) {
			out = append(out, path)
		}
	}
	return out, nil
}

// ServeHTTP serves the management routes. A path with dot segments or
// "//" is a JSON 404, where the mux would redirect to the cleaned path.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p, _ := urlpath.Sent(r.URL); !urlpath.Canonical(p) {
		httperr.Write(w, r, h.logger, errRouteNotFound)
		return
	}
	h.mux.ServeHTTP(w, r)
}

// Routes lists the routes served, as http.ServeMux patterns ("GET
// /api/v1/queues"), in the order of the package documentation: the user
// and API token routes only when [Config.Accounts] is set, the job routes,
// last, only when [Config.Jobs] is. A GET route answers HEAD too.
func (h *Handler) Routes() []string { return append([]string(nil), h.routes...) }

// OpenAPI returns the OpenAPI 3.0.3 document the Handler serves at GET
// /api/v1/openapi.json, with the configured scoring prefix and base URL. It
// describes the routes the Handler serves: without [Config.Jobs] it has no
// job routes, without [Config.Accounts] no user and API token routes, and
// of the token routes only those of [Config.TokenRoutes].
func (h *Handler) OpenAPI() []byte { return append([]byte(nil), h.openapi...) }

// access is who may call a route.
type access uint8

const (
	publicAccess     access = iota // anyone
	readAccess                     // any valid token
	writeAccess                    // an administrator's token; the write is logged
	jobAccess                      // any valid token, or an administrator's with Config.JobsRequireAdmin; logged
	adminReadAccess                // an administrator's token
	ownReadAccess                  // any valid token; the route shows an administrator anything, anyone else their own
	ownWriteAccess                 // any valid token; the route lets an administrator change anything, anyone else their own; logged
	anyoneReadAccess               // anyone; a request with credentials needs a valid token, and the route shows it more
	uploadAccess                   // an administrator's token, with a body up to Config.MaxModelBytes; logged
	feedbackAccess                 // any credential the job routes take; the route checks a protected group's policy; logged
)

// route is one entry of the route table: the mux pattern and the method
// that serves it. A returned error is the answer, through httperr.
type route struct {
	method  string
	pattern string
	access  access
	serve   func(h *Handler, w http.ResponseWriter, r *http.Request) error
}

// routeTable is every route the Handler serves: the one list the mux is
// built from and the OpenAPI test compares the document with.
func routeTable() []route {
	return []route{
		{http.MethodGet, "/health/live", publicAccess, (*Handler).live},
		{http.MethodGet, "/health/ready", publicAccess, (*Handler).ready},
		{http.MethodGet, "/api/v1/openapi.json", publicAccess, (*Handler).serveOpenAPI},

		{http.MethodGet, "/executions/queues", readAccess, (*Handler).listQueues},
		{http.MethodGet, "/api/v1/queues", readAccess, (*Handler).listQueues},
		{http.MethodGet, "/api/v1/queues/{name}", readAccess, (*Handler).getQueue},
		{http.MethodPut, "/api/v1/queues/{name}", writeAccess, (*Handler).putQueue},
		{http.MethodDelete, "/api/v1/queues/{name}", writeAccess, (*Handler).deleteQueue},

		{http.MethodGet, "/api/v1/webapigroups", readAccess, (*Handler).listGroups},
		{http.MethodPost, "/api/v1/webapigroups", writeAccess, (*Handler).createGroup},
		{http.MethodGet, "/api/v1/webapigroups/{group}", readAccess, (*Handler).getGroup},
		{http.MethodPut, "/api/v1/webapigroups/{group}", writeAccess, (*Handler).putGroup},
		{http.MethodDelete, "/api/v1/webapigroups/{group}", writeAccess, (*Handler).deleteGroup},

		{http.MethodGet, "/api/v1/deployments", readAccess, (*Handler).listDeployments},
		{http.MethodPost, "/api/v1/deployments", writeAccess, (*Handler).createDeployment},
		{http.MethodGet, "/api/v1/deployments/{group}/{path}", readAccess, (*Handler).getDeployment},
		{http.MethodPut, "/api/v1/deployments/{group}/{path}", writeAccess, (*Handler).putDeployment},
		{http.MethodPatch, "/api/v1/deployments/{group}/{path}", writeAccess, (*Handler).patchDeployment},
		{http.MethodDelete, "/api/v1/deployments/{group}/{path}", writeAccess, (*Handler).deleteDeployment},

		{http.MethodGet, "/api/v1/endpoints", anyoneReadAccess, (*Handler).listEndpoints},
		{http.MethodGet, "/api/v1/endpoints/{group}/{path}/{alias}/process", anyoneReadAccess, (*Handler).getEndpointProcess},
		{http.MethodGet, "/api/v1/endpoints/{group}/{path}/{alias}/challengers", readAccess, (*Handler).getEndpointChallengers},
		{http.MethodPost, "/api/v1/endpoints/{group}/{path}/{alias}/promote", writeAccess, (*Handler).promoteEndpointChallenger},
		{http.MethodGet, "/api/v1/endpoints/{group}/{path}/{alias}/drift", readAccess, (*Handler).getEndpointDrift},

		{http.MethodGet, "/api/v1/processes", readAccess, (*Handler).listProcesses},
		{http.MethodGet, "/api/v1/processes/{name}", readAccess, (*Handler).getProcess},
	}
}

// serve adapts a route's method to http.Handler, answering its error.
func (h *Handler) serve(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := rt.serve(h, w, r); err != nil {
			h.fail(w, r, err)
		}
	})
}

// fail answers err as httperr maps it.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	httperr.Write(w, r, h.logger, err)
}

// methodNotAllowed answers a method a path has no route for.
func methodNotAllowed(methods []string) http.Handler {
	allow := methods
	for _, m := range methods {
		if m == http.MethodGet {
			allow = append(append([]string(nil), methods...), http.MethodHead)
			break
		}
	}
	list := strings.Join(allow, ", ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e := httperr.Newf(problem.MethodNotAllowed, "%s is not allowed here; use %s", r.Method, strings.Join(methods, " or "))
		e.Allow = list
		httperr.Write(w, r, nil, e)
	})
}

// optionalBearer serves a request that carries no credentials (no
// Authorization header, no access_token in the query) as the anonymous,
// without claims, and checks any other with bearer, so that a token sent is
// never ignored, even an expired one, and one sent in the query is refused
// as bearer refuses it.
func optionalBearer(bearer func(http.Handler) http.Handler, next http.Handler) http.Handler {
	checked := bearer(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Vary", "Authorization")
		if !middleware.HasCredentials(r) {
			next.ServeHTTP(w, r)
			return
		}
		checked.ServeHTTP(w, r)
	})
}

// noStore marks answers that depend on who asks as not to be cached.
func noStore(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// writeLog logs one record per write once it is answered, whatever the
// outcome, refusals included: "management: write" with the subject of the
// token Bearer accepted ("" for none), the method, the route, the path and
// the status, at info level (error for a 5xx).
func (h *Handler) writeLog(rt route) func(http.Handler) http.Handler {
	return middleware.AccessLog(middleware.AccessLogConfig{
		Logger:  h.logger,
		Message: "management: write",
		Attrs:   []slog.Attr{slog.String("route", rt.method+" "+rt.pattern)},
		Audit:   true,
	})
}

// cleanPrefix checks a scoring prefix and returns it without a trailing
// slash, "" for the root.
func cleanPrefix(p string) (string, error) {
	if p == "" {
		return DefaultScoringPrefix, nil
	}
	p, err := urlpath.Prefix(p)
	if err != nil {
		return "", fmt.Errorf("management: scoring %w", err)
	}
	return p, nil
}

// cleanBaseURL checks a public base URL and returns it without a trailing
// slash.
func cleanBaseURL(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("management: base URL: %w", err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("management: base URL %q must be http or https", s)
	case u.Host == "":
		return "", fmt.Errorf("management: base URL %q has no host", s)
	case u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.Opaque != "":
		return "", fmt.Errorf("management: base URL %q may have only a scheme, a host and a path", s)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = strings.TrimSuffix(u.RawPath, "/")
	return u.String(), nil
}

// base returns the URL scoring addresses start with for a request: the
// configured one, or the request's own, with the prefix the Handler is
// mounted under.
func (h *Handler) base(r *http.Request) string {
	if h.baseURL != "" {
		return h.baseURL
	}
	mount := urlpath.Mount(r)
	if r.Host == "" {
		return mount
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + mount
}

// must returns v, panicking on err: for values built from constants, where
// an error is a mistake in the program.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
