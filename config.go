package scorehub

import (
	"errors"
	"fmt"
	"github.com/scorehub/scorehub/registry/outcomes"
	"github.com/scorehub/scorehub/registry/payloads"
	"io"
	"log/slog"
	"net/netip"
	"strings"
	"time"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/internal/redact"
	"github.com/scorehub/scorehub/internal/urlpath"
	"github.com/scorehub/scorehub/management"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/jobs"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring"
	"github.com/scorehub/scorehub/tokens"
	"github.com/scorehub/scorehub/tokens/accounts"
)

// Defaults of the [Config] fields whose zero value means "the default":
// the defaults of the parts that take them, but for the job body (below
// a request's, as jobs are kept) and the key rotation, which only the
// service sets.
const (
	DefaultPrefix          = management.DefaultScoringPrefix
	DefaultMaxBodyBytes    = scoring.DefaultMaxBodyBytes
	DefaultMaxRows         = scoring.DefaultMaxRows
	DefaultMaxColumns      = scoring.DefaultMaxColumns
	DefaultMaxResultCells  = scoring.DefaultMaxResultCells
	DefaultMaxJobBodyBytes = 8 << 20
	DefaultTimeout         = scoring.DefaultTimeout
	DefaultJobRetention    = scoring.DefaultJobRetention
	DefaultTokenValidity   = tokens.DefaultValidity
	DefaultKeyRotation     = 30 * 24 * time.Hour
)

// DefaultMaxResponseBytes is the default of [Config.MaxResponseBytes],
// scoring's.
const DefaultMaxResponseBytes = scoring.DefaultMaxResponseBytes

// Config configures a [Service]. Its zero value, with AdminPassword set, is
// a working service that keeps its state in memory: every field says what
// its zero value means. [New] refuses a combination that is unsafe or
// contradicts itself rather than picking one meaning silently.
type Config struct {
	// DataDir is the directory where the records, jobs, model files,
	// users, API tokens and signing keys are kept as files, made when
	// missing, so that they survive a restart. Empty means in memory,
	// unless StoreURL or Stores names another place. One process at a
	// time may use a directory.
	DataDir string

	// StoreURL is a postgres:// (or postgresql://) connection string of a
	// database that keeps the state instead of DataDir, which several
	// replicas of a service share: each serves what any of them stored.
	// It may hold a password: it is never logged, nor quoted in errors.
	// Empty means none.
	StoreURL string

	// Stores are a host's own stores, used instead of DataDir and
	// StoreURL. Nil means none; when set, every field is required.
	Stores *Stores

	// Replica names this process among the replicas of a shared store, in
	// the jobs it runs; another replica ends the jobs of a replica whose
	// claims have not been renewed for JobLease. With StoreURL, empty
	// means the host name and a random suffix; with Stores, empty means
	// the stores are this process's alone. Not allowed with DataDir or in
	// memory, which one process alone uses.
	Replica string

	// JobLease is how long a replica's claim on a job holds without
	// renewal; at least 3 s. Zero means jobs.DefaultLease.
	JobLease time.Duration

	// Prefix is the path the scoring endpoints are served under, relative
	// to where the host mounts [Service.Handler]. Empty means
	// [DefaultPrefix], /webapi as in AI Hub 10.2 and later. It must not
	// be the root nor start with a segment of the service's other routes
	// (api, health, executions, ui, metrics).
	Prefix string

	// Processes are catalog processes the host adds, which deployments
	// name as endpoint processes. Nil means none.
	Processes []process.ProcessInfo

	// Formats read the model files uploaded through the management API.
	// Nil means [DefaultFormats]: XGBoost, LightGBM, PMML and ONNX.
	Formats []process.ModelFormat

	// AdminPassword is the password of the built-in user admin, who
	// administers the service. Empty means the one stored with the state:
	// in DataDir (its bcrypt hash alone) or in the shared store; a store
	// that holds none gets a random password, written once to Console. In
	// memory, or with Stores, it is required unless Users or UsersFile
	// names other users. [New] refuses a password that a user made through
	// the API could not have (see [accounts.CheckNewPassword]): shorter
	// than 12 characters, longer than 72 bytes, white space alone, a
	// common password, or a repetitive or sequential one.
	AdminPassword string

	// UsersFile is an htpasswd file of further users (bcrypt of cost 10 or
	// more only), read again when it changes: a user removed or a password
	// changed loses the tokens already issued within a second. Empty
	// means none.
	UsersFile string

	// Users are a host's own users, used instead of the built-in admin and
	// UsersFile. Nil means those two.
	Users accounts.ReadOnlyUsers

	// Console receives what an operator must read once and a log must not
	// keep: a random admin password the service made up. Nil means a
	// password is never made up: [New] fails instead.
	Console io.Writer

	// OIDC is the OpenID Connect provider whose access tokens
	// GET /api/rest/saml/tokenservice exchanges for the service's own.
	// The zero value means none.
	OIDC OIDCConfig

	// TokenValidity is how long an issued idToken is valid. Zero means
	// [DefaultTokenValidity], 5 minutes.
	TokenValidity time.Duration

	// KeyRotation is the age at which the token signing key is replaced;
	// the replaced key keeps verifying until its tokens have expired. It
	// must be at least TokenValidity. Zero means [DefaultKeyRotation].
	KeyRotation time.Duration

	// MaxBodyBytes, MaxRows and MaxColumns bound a scoring request: a
	// larger one is answered 413. Zero means [DefaultMaxBodyBytes] (32
	// MiB), [DefaultMaxRows] and [DefaultMaxColumns].
	MaxBodyBytes int64
	MaxRows      int
	MaxColumns   int

	// MaxResultCells bounds rows × result columns of a scoring answer and
	// of a job's result: what a request makes the server build, which a
	// model of many classes makes far larger than the request. Past it the
	// request or job is answered 413 too_many_result_cells, before the
	// process runs when it declares its result columns (models do). Zero
	// means [DefaultMaxResultCells] (2,000,000; see
	// scoring.Limits.MaxResultCells).
	MaxResultCells int
	// MaxResponseBytes bounds the bytes of a scoring answer and of a job's
	// result, judged when MaxResultCells is by a lower bound that counts
	// the result columns' names in every row: past it the answer is 413
	// response_too_large. Zero means [DefaultMaxResponseBytes] (128 MiB;
	// see scoring.Limits.MaxResponseBytes).
	MaxResponseBytes int64

	// MaxJobBodyBytes bounds a job's body, which is kept until the job
	// ends. Zero means [DefaultMaxJobBodyBytes], 8 MiB.
	MaxJobBodyBytes int64

	// MaxModelBytes bounds a model upload's body. Zero means
	// management.DefaultMaxModelBytes.
	MaxModelBytes int64

	// Timeout is the execution timeout of endpoints that set none. Zero
	// means [DefaultTimeout], 10 s.
	Timeout time.Duration

	// WriteProgressTimeout closes the connection of a scoring answer whose
	// writes make no progress for this long, so that a client that never
	// reads cannot hold its request's memory. Zero means scoring's
	// default; negative means none.
	WriteProgressTimeout time.Duration

	// JobRetention is how long ended jobs and their results are kept.
	// Zero means [DefaultJobRetention], a day.
	JobRetention time.Duration

	// BaseURL is the public address the service is reached at, such as
	// https://example.com/ml, which the scoring URLs it lists and its
	// OpenAPI document start with. Empty means each request's own host,
	// with the prefix the service is mounted under. Set it behind a
	// reverse proxy that terminates TLS or rewrites the host: forwarded
	// headers are not trusted.
	BaseURL string

	// CORSOrigins are the origins whose pages may call the scoring
	// endpoints. Nil means none.
	CORSOrigins []string

	// TrustedProxies are the reverse proxies whose X-Forwarded-For names a
	// request's client, for the per-address limits and the access log.
	// Nil means none: behind a proxy every client would otherwise share
	// the proxy's limits.
	TrustedProxies []netip.Prefix

	// MetricsOff turns the Prometheus metrics off; false serves them.
	MetricsOff bool

	// MetricsApart leaves the metrics out of [Service.Handler], for a host
	// that serves [Service.MetricsHandler] on a listener of its own: they
	// name protected groups and endpoints. False serves them at /metrics,
	// without a token.
	MetricsApart bool

	// AccessLogOff turns the access log off; false logs one line per
	// request (method, path, status, bytes, duration, subject, client) at
	// info level.
	AccessLogOff bool

	// AccessLogOutput is where the access log's lines are written, in the
	// text format of Logger's handler, for a fraction of what a record
	// through slog costs. Nil means through Logger.
	AccessLogOutput io.Writer

	// Logger receives the service's records. Nil means slog.Default().
	// Every record passes a filter first that replaces the secrets it can
	// recognise (API tokens, JWTs, a URL's password, the value of a
	// parameter named as a secret) with REDACTED, wherever the record
	// quotes them; AccessLogOutput's lines have the same done to their
	// paths.
	Logger *slog.Logger

	// Now is the clock of tokens, keys, accounts and records. Nil means
	// time.Now.
	Now func() time.Time
}

// Stores are the places a host keeps the service's state in, for a
// [Config] that names neither a data directory nor a database. The service
// does not close them: the host that opened them does, after
// [Service.Close].
type Stores struct {
	// Records keeps web API groups, deployments, queues and models; for
	// model files it must be a registry.ArtifactStore too.
	Records registry.Store
	// Jobs keeps the execution jobs and their results.
	Jobs jobs.Store
	// Accounts keeps the users and API tokens made through the API.
	Accounts accounts.Store
	// Keys keeps the token signing keys.
	Keys tokens.KeyStore
	// Outcomes keeps the predictions of rows with IDs and the outcomes
	// fed back for them; nil means they are kept in memory, bounded by
	// the outcomes package's defaults.
	Outcomes outcomes.Store
	// Comparisons, with a Config.Replica, is where the replicas over
	// these stores publish what their champions and challengers did, so
	// that the comparison route sums them; nil means each replica shows
	// its own. A store that is also a scoring.DriftStore shares the
	// replicas' drift histograms too, so that the drift route adds them
	// up.
	Comparisons scoring.ComparisonStore
	// Payloads is the payload log: the rows sampled by endpoints that log
	// them (registry.Endpoint.PayloadLog); nil means a log in memory,
	// bounded by the payloads package's defaults.
	Payloads payloads.Store
}

// OIDCConfig names an OpenID Connect provider whose access tokens the
// service exchanges for its own (the offline-token flow of AI Hub's
// clients). Its zero value means none.
type OIDCConfig struct {
	// Issuer is the provider's issuer URL. Empty means no provider.
	Issuer string
	// Audience are the audiences an access token must name; required with
	// an Issuer.
	Audience []string
	// ClientIDs are the clients (azp) an access token must have been
	// issued to; required with an Issuer, or any client's token of the
	// realm, an ID token included, would be exchanged.
	ClientIDs []string
	// TokenTypes are the types an access token must have (its typ claim,
	// else its header's: Keycloak's Bearer, RFC 9068's at+jwt). Nil means
	// Bearer.
	TokenTypes []string
	// InsecureAllowHTTP allows an http:// issuer that is not on loopback.
	InsecureAllowHTTP bool
}

// DefaultFormats are the model formats a [Config] without Formats reads.
func DefaultFormats() []process.ModelFormat {
	return defaultFormats()
}

// reservedSegment reports whether seg is the first path segment of routes
// the service serves beside scoring: a scoring prefix under it would shadow
// them.
func reservedSegment(seg string) bool {
	switch seg {
	case "api", "health", "executions", "ui", "metrics":
		return true
	}
	return false
}

// store says where a Config keeps the state.
type storeKind int

const (
	inMemory storeKind = iota
	inFiles
	inPostgres
	inHostStores
)

// withDefaults checks c and returns it with every zero that means a
// default replaced by that default.
func (c Config) withDefaults() (Config, storeKind, error) {
	kind := inMemory
	var given []string
	if c.DataDir != "" {
		kind = inFiles
		given = append(given, "DataDir")
	}
	if c.StoreURL != "" {
		if !strings.HasPrefix(c.StoreURL, "postgres://") && !strings.HasPrefix(c.StoreURL, "postgresql://") {
			return c, 0, errors.New("scorehub: Config.StoreURL must be a postgres:// connection string")
		}
		kind = inPostgres
		given = append(given, "StoreURL")
	}
	if c.Stores != nil {
		s := c.Stores
		if s.Records == nil || s.Jobs == nil || s.Accounts == nil || s.Keys == nil {
			return c, 0, errors.New("scorehub: Config.Stores needs Records, Jobs, Accounts and Keys")
		}
		kind = inHostStores
		given = append(given, "Stores")
	}
	if len(given) > 1 {
		return c, 0, fmt.Errorf("scorehub: Config.%s: set one place for the state, not %d", strings.Join(given, ", Config."), len(given))
	}
	switch {
	case c.Replica != "" && kind != inPostgres && kind != inHostStores:
		return c, 0, errors.New("scorehub: Config.Replica names a replica of a shared store: it needs StoreURL or Stores")
	case c.Replica != "" && !registry.ValidName(c.Replica):
		return c, 0, fmt.Errorf("scorehub: Config.Replica %q must be 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit", c.Replica)
	}
	if c.JobLease == 0 {
		c.JobLease = jobs.DefaultLease
	}
	if c.JobLease < 3*time.Second {
		// Leases are renewed every second and must outlast three renewals.
		return c, 0, fmt.Errorf("scorehub: Config.JobLease %v must be at least 3s", c.JobLease)
	}
	if kind == inPostgres && c.Replica == "" {
		c.Replica = replicaName()
	}

	if c.Prefix == "" {
		c.Prefix = DefaultPrefix
	}
	p, err := urlpath.Prefix("/" + strings.TrimPrefix(c.Prefix, "/"))
	switch {
	case err != nil:
		return c, 0, fmt.Errorf("scorehub: Config.Prefix: %w", err)
	case p == "":
		return c, 0, errors.New("scorehub: Config.Prefix must not be the root: the root serves other routes")
	}
	if first, _, _ := strings.Cut(p[1:], "/"); reservedSegment(first) {
		return c, 0, fmt.Errorf("scorehub: Config.Prefix must not start with /%s: the service's own routes are there", first)
	}
	c.Prefix = p

	if c.Formats == nil {
		c.Formats = defaultFormats()
	}
	if c.Users != nil && (c.UsersFile != "" || c.AdminPassword != "") {
		return c, 0, errors.New("scorehub: Config.Users replaces the built-in admin and the users file: set Users, or AdminPassword and UsersFile")
	}
	if c.Users == nil && c.AdminPassword == "" && c.UsersFile == "" && (kind == inMemory || kind == inHostStores) {
		return c, 0, errors.New("scorehub: no users: set Config.AdminPassword, UsersFile or Users")
	}
	if c.AdminPassword != "" {
		if err := accounts.CheckNewPassword(c.AdminPassword, 0); err != nil {
			return c, 0, fmt.Errorf("scorehub: Config.AdminPassword: %s", httperr.From(err).Message)
		}
	}

	if c.OIDC.Issuer != "" {
		if c.OIDC.TokenTypes == nil {
			c.OIDC.TokenTypes = []string{"Bearer"}
		}
		if len(c.OIDC.Audience) == 0 {
			return c, 0, errors.New("scorehub: Config.OIDC.Issuer needs Audience: the audience an access token must name")
		}
		if len(c.OIDC.ClientIDs) == 0 || len(c.OIDC.TokenTypes) == 0 {
			return c, 0, errors.New("scorehub: Config.OIDC.Issuer needs ClientIDs and TokenTypes: the clients an access token may be issued to, and its type")
		}
	}

	if c.TokenValidity == 0 {
		c.TokenValidity = DefaultTokenValidity
	}
	if c.KeyRotation == 0 {
		c.KeyRotation = DefaultKeyRotation
	}
	switch {
	case c.TokenValidity < 0:
		return c, 0, errors.New("scorehub: Config.TokenValidity must not be negative")
	case c.KeyRotation < c.TokenValidity:
		// A shorter period would keep more than two keys verifying at
		// once, and a key file growing without bound.
		return c, 0, fmt.Errorf("scorehub: Config.KeyRotation %v must be at least TokenValidity %v", c.KeyRotation, c.TokenValidity)
	}

	for _, d := range []struct {
		name string
		v    *int64
		def  int64
	}{
		{"MaxBodyBytes", &c.MaxBodyBytes, DefaultMaxBodyBytes},
		{"MaxJobBodyBytes", &c.MaxJobBodyBytes, DefaultMaxJobBodyBytes},
		{"MaxModelBytes", &c.MaxModelBytes, management.DefaultMaxModelBytes},
		{"MaxResponseBytes", &c.MaxResponseBytes, DefaultMaxResponseBytes},
	} {
		if *d.v == 0 {
			*d.v = d.def
		}
		if *d.v < 0 {
			return c, 0, fmt.Errorf("scorehub: Config.%s %d must not be negative", d.name, *d.v)
		}
	}
	if c.MaxRows == 0 {
		c.MaxRows = DefaultMaxRows
	}
	if c.MaxColumns == 0 {
		c.MaxColumns = DefaultMaxColumns
	}
	if c.MaxResultCells == 0 {
		c.MaxResultCells = DefaultMaxResultCells
	}
	if c.MaxRows < 0 || c.MaxColumns < 0 || c.MaxResultCells < 0 {
		return c, 0, errors.New("scorehub: Config.MaxRows, MaxColumns and MaxResultCells must not be negative")
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.JobRetention == 0 {
		c.JobRetention = DefaultJobRetention
	}
	if c.Timeout < 0 || c.JobRetention < 0 {
		return c, 0, errors.New("scorehub: Config.Timeout and JobRetention must not be negative")
	}
	if c.MetricsApart && c.MetricsOff {
		return c, 0, errors.New("scorehub: Config.MetricsApart needs the metrics on: drop MetricsOff or MetricsApart")
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	// Whatever a record quotes (a path, an error naming a URL), no
	// secret the service can recognise reaches the host's handler.
	c.Logger = slog.New(redact.Handler(c.Logger.Handler()))
	return c, kind, nil
}
