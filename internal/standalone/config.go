package standalone

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/scorehub/scorehub"
	"github.com/scorehub/scorehub/internal/demo"
	"github.com/scorehub/scorehub/management"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/jobs"
	"github.com/scorehub/scorehub/registry/process"
)

// config is what the command line and the SCOREHUB_* environment set. A flag
// wins over its environment variable, which wins over the default.
type config struct {
	Addr    string
	DataDir string
	// Store is where the records, jobs, model files, users, API tokens
	// and signing keys are kept: empty for files in DataDir, or a
	// postgres:// connection string for a database that several replicas
	// share. It may hold a password: it is never printed or logged. It
	// comes from -store, SCOREHUB_STORE or the file -store-file names.
	Store string
	// StorePasswordInArgs says that -store was given on the command line
	// with a password in it, which /proc/<pid>/cmdline shows to every
	// local user: the server warns at start.
	StorePasswordInArgs bool
	// Replica names this process among the replicas of a shared store,
	// in the jobs it runs; JobLease is how long its claim on a job holds
	// without renewal. Only with a postgres Store.
	Replica    string
	JobLease   time.Duration
	Prefix     string
	MaxBody    int64
	MaxRows    int
	MaxColumns int
	MaxJobBody int64 // a job's body, below MaxBody as jobs are kept
	Timeout    time.Duration
	Grace      time.Duration

	// MaxResultCells bounds rows × result columns of an answer or a job's
	// result, MaxResponseBytes its bytes (scorehub Config.MaxResultCells,
	// Config.MaxResponseBytes).
	MaxResultCells   int
	MaxResponseBytes int64

	// MaxModelBytes bounds a model upload's body (management
	// Config.MaxModelBytes).
	MaxModelBytes int64

	// The HTTP server's connection timeouts (http.Server fields of the
	// same names). ReadHeaderTimeout and ReadTimeout bound how long a
	// client may take to send a request's headers and the whole request,
	// so that slow senders cannot hold connections; zero WriteTimeout
	// means none, so that a long execution's answer is not cut off.
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration

	// WriteProgressTimeout closes the connection of a scoring answer
	// whose writes make no progress for this long, so that a client that
	// never reads cannot hold its request's memory; 0 means none.
	WriteProgressTimeout time.Duration

	// JobRetention is how long ended jobs and their results are kept.
	JobRetention time.Duration

	// KeyRotation is the age at which the token signing key is replaced;
	// the replaced key keeps verifying until its tokens have expired.
	KeyRotation time.Duration

	TokenValidity    time.Duration
	UsersFile        string
	OIDCIssuer       string
	OIDCAudience     []string
	OIDCClients      []string
	OIDCTokenTypes   []string
	OIDCInsecureHTTP bool

	// TrustedProxies are the reverse proxies whose X-Forwarded-For entries
	// name a request's client for the token service's per-address limits.
	// None by default: behind a proxy every client would otherwise share
	// the proxy's limit.
	TrustedProxies []netip.Prefix

	// CORSOrigins are the origins whose pages may call the scoring
	// endpoints; none by default.
	CORSOrigins []string

	// Metrics serves the Prometheus metrics, without a token, at /metrics.
	Metrics bool
	// MetricsAddr, when not empty, is where the metrics are served, on a
	// listener of their own instead of the public one: they name protected
	// groups and endpoints.
	MetricsAddr string
	// AccessLog logs one line per request at info level. On by default.
	AccessLog bool

	// DebugAddr, when not empty, is where the Go runtime's profiles
	// (net/http/pprof) are served, on a listener of their own; never on the
	// public one. Off by default.
	DebugAddr string
	// InsecureDebugPublic allows a DebugAddr that is not on loopback.
	InsecureDebugPublic bool

	// GCMinHeap is the heap size below which the collector does not run,
	// while the heap left live is below half of it (gcFloor); 0 leaves
	// Go's own, 4 MiB. Not applied when GOGC is set.
	GCMinHeap int64

	// DemoSleep adds the catalog process sleep (see demo.Sleep), which
	// holds a queue slot for its macro ms milliseconds: for trying
	// timeouts, full queues, draining and stopping jobs. Off by default.
	DemoSleep bool
}

// reserved reports whether seg is the first path segment of routes the
// server serves beside scoring: a scoring prefix under it would shadow them.
func reserved(seg string) bool {
	switch seg {
	case "api", "health", "executions", "ui", "metrics":
		return true
	}
	return false
}

func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	c := config{
		Addr:       "127.0.0.1:8080",
		DataDir:    "./scorehub-data",
		Prefix:     scorehub.DefaultPrefix,
		MaxBody:    scorehub.DefaultMaxBodyBytes,
		MaxRows:    scorehub.DefaultMaxRows,
		MaxColumns: scorehub.DefaultMaxColumns,
		MaxJobBody: scorehub.DefaultMaxJobBodyBytes,
		Timeout:    scorehub.DefaultTimeout,
		Grace:      30 * time.Second,

		MaxResultCells:   scorehub.DefaultMaxResultCells,
		MaxResponseBytes: scorehub.DefaultMaxResponseBytes,

		MaxModelBytes: management.DefaultMaxModelBytes,

		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       2 * time.Minute,
		IdleTimeout:       2 * time.Minute,

		WriteProgressTimeout: time.Minute,

		JobRetention: scorehub.DefaultJobRetention,

		TokenValidity: scorehub.DefaultTokenValidity,
		KeyRotation:   scorehub.DefaultKeyRotation,

		Metrics:   true,
		AccessLog: true,

		GCMinHeap: 32 << 20,
	}
	var audience, clients, tokenTypes, corsOrigins, proxies string
	c.JobLease = jobs.DefaultLease
	fs := flag.NewFlagSet(programName(), flag.ContinueOnError)
	fs.SetOutput(stderr)
	showVersion := fs.Bool("version", false, "print the version of scorehub this program was built from, and exit")
	fs.StringVar(&c.Addr, "addr", c.Addr, "listen address (SCOREHUB_ADDR)")
	fs.StringVar(&c.DataDir, "data", c.DataDir, "data directory (SCOREHUB_DATA)")
	var storeFile string
	parsingArgs, storeInArgs := false, false
	fs.Func("store", "where records, jobs, models, users and keys are kept: empty for files in -data, or a postgres://user@host/db connection string that several replicas share; a password here is shown to every local user, give it in -store-file, PGPASSFILE or PGPASSWORD (SCOREHUB_STORE)", func(v string) error {
		c.Store, storeInArgs = v, parsingArgs
		return nil
	})
	fs.StringVar(&storeFile, "store-file", "", "file holding the -store connection string (without its trailing line break), password included, so that it is on no command line (SCOREHUB_STORE_FILE)")
	fs.StringVar(&c.Replica, "replica", "", "this replica's name in the jobs it runs, with -store postgres://; empty means the host name and a random suffix (SCOREHUB_REPLICA)")
	fs.DurationVar(&c.JobLease, "job-lease", c.JobLease, "with -store postgres://, how long after a replica stops renewing the others end its jobs as interrupted (SCOREHUB_JOB_LEASE)")
	fs.StringVar(&c.Prefix, "prefix", c.Prefix, "path prefix of the scoring endpoints (SCOREHUB_PREFIX)")
	fs.Int64Var(&c.MaxBody, "max-body", c.MaxBody, "largest request body in bytes (SCOREHUB_MAX_BODY)")
	fs.IntVar(&c.MaxRows, "max-rows", c.MaxRows, "most rows in one request (SCOREHUB_MAX_ROWS)")
	fs.IntVar(&c.MaxColumns, "max-columns", c.MaxColumns, "most columns in one request (SCOREHUB_MAX_COLUMNS)")
	fs.IntVar(&c.MaxResultCells, "max-result-cells", c.MaxResultCells, "most rows × result columns in one answer or job result, such as rows × classes of a classifier (SCOREHUB_MAX_RESULT_CELLS)")
	fs.Int64Var(&c.MaxResponseBytes, "max-response-bytes", c.MaxResponseBytes, "largest answer or job result in bytes, judged before the process runs by the result columns' names in every row (SCOREHUB_MAX_RESPONSE_BYTES)")
	fs.Int64Var(&c.MaxJobBody, "max-job-body", c.MaxJobBody, "largest job body in bytes (SCOREHUB_MAX_JOB_BODY)")
	fs.Int64Var(&c.MaxModelBytes, "max-model-bytes", c.MaxModelBytes, "largest model upload in bytes (SCOREHUB_MAX_MODEL_BYTES)")
	fs.DurationVar(&c.Timeout, "timeout", c.Timeout, "default execution timeout (SCOREHUB_TIMEOUT)")
	fs.DurationVar(&c.Grace, "grace", c.Grace, "how long shutdown waits for requests in flight and running jobs (SCOREHUB_GRACE)")
	fs.DurationVar(&c.ReadHeaderTimeout, "read-header-timeout", c.ReadHeaderTimeout, "how long a client may take to send a request's headers (SCOREHUB_READ_HEADER_TIMEOUT)")
	fs.DurationVar(&c.ReadTimeout, "read-timeout", c.ReadTimeout, "how long a client may take to send a whole request, body included (SCOREHUB_READ_TIMEOUT)")
	fs.DurationVar(&c.WriteTimeout, "write-timeout", c.WriteTimeout, "how long answering a request may take from the end of its headers; 0 means no limit (SCOREHUB_WRITE_TIMEOUT)")
	fs.DurationVar(&c.WriteProgressTimeout, "write-progress-timeout", c.WriteProgressTimeout, "how long a scoring answer may go without a write making progress before its connection is closed; 0 means no limit (SCOREHUB_WRITE_PROGRESS_TIMEOUT)")
	fs.DurationVar(&c.IdleTimeout, "idle-timeout", c.IdleTimeout, "how long an idle keep-alive connection is kept open (SCOREHUB_IDLE_TIMEOUT)")
	fs.DurationVar(&c.JobRetention, "job-retention", c.JobRetention, "how long ended jobs and their results are kept (SCOREHUB_JOB_RETENTION)")
	fs.DurationVar(&c.TokenValidity, "token-validity", c.TokenValidity, "how long an issued idToken is valid (SCOREHUB_TOKEN_VALIDITY)")
	fs.DurationVar(&c.KeyRotation, "key-rotation", c.KeyRotation, "age at which the token signing key is replaced, at least -token-validity (SCOREHUB_KEY_ROTATION)")
	fs.StringVar(&c.UsersFile, "users", "", "htpasswd file of further users, bcrypt of cost 10 or more only (SCOREHUB_USERS)")
	fs.StringVar(&c.OIDCIssuer, "oidc-issuer", "", "OpenID Connect issuer whose access tokens /api/rest/saml/tokenservice exchanges (SCOREHUB_OIDC_ISSUER)")
	fs.StringVar(&audience, "oidc-audience", "", "comma-separated audiences an access token must name (SCOREHUB_OIDC_AUDIENCE)")
	fs.StringVar(&clients, "oidc-clients", "", "comma-separated client IDs (azp) an access token must be issued to (SCOREHUB_OIDC_CLIENTS)")
	fs.StringVar(&tokenTypes, "oidc-token-type", "Bearer", "comma-separated types (typ claim, else header; Keycloak: Bearer, RFC 9068: at+jwt) an access token must have (SCOREHUB_OIDC_TOKEN_TYPE)")
	fs.BoolVar(&c.OIDCInsecureHTTP, "oidc-insecure-http", false, "allow an http:// issuer that is not on loopback (SCOREHUB_OIDC_INSECURE_HTTP)")
	fs.BoolVar(&c.Metrics, "metrics", c.Metrics, "serve Prometheus metrics at /metrics, without a token (SCOREHUB_METRICS)")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", "", "listen address of /metrics, separate from -addr, which then does not serve it; empty means -addr (SCOREHUB_METRICS_ADDR)")
	fs.BoolVar(&c.AccessLog, "access-log", c.AccessLog, "log one line per request: method, path, status, bytes, duration, subject, client (SCOREHUB_ACCESS_LOG)")
	fs.StringVar(&c.DebugAddr, "debug-addr", "", "listen address of the profiling endpoints (/debug/pprof/), separate from -addr, on loopback; off when empty (SCOREHUB_DEBUG_ADDR)")
	fs.BoolVar(&c.InsecureDebugPublic, "insecure-debug-public", false, "allow a -debug-addr that is not on loopback: its profiles take no token (SCOREHUB_INSECURE_DEBUG_PUBLIC)")
	fs.Int64Var(&c.GCMinHeap, "gc-min-heap", c.GCMinHeap, "heap size in bytes below which the garbage collector does not run while what it leaves live is below half of that; 0 means Go's own, 4 MiB; not applied when GOGC is set (SCOREHUB_GC_MIN_HEAP)")
	fs.BoolVar(&c.DemoSleep, "demo-sleep", false, "add the catalog process sleep, which waits for its macro ms milliseconds (SCOREHUB_DEMO_SLEEP)")
	fs.StringVar(&proxies, "trusted-proxies", "", "comma-separated addresses or prefixes (10.0.0.5, 10.1.0.0/16) of reverse proxies whose X-Forwarded-For names the client; none by default (SCOREHUB_TRUSTED_PROXIES)")
	fs.StringVar(&corsOrigins, "cors-origins", "", "comma-separated origins (https://app.example.com) whose pages may call the scoring endpoints; none by default (SCOREHUB_CORS_ORIGINS)")

	// Environment first, so that flags parsed afterwards override it.
	env := []struct {
		name string
		flag string
	}{
		{"SCOREHUB_ADDR", "addr"}, {"SCOREHUB_DATA", "data"}, {"SCOREHUB_PREFIX", "prefix"},
		{"SCOREHUB_STORE", "store"}, {"SCOREHUB_STORE_FILE", "store-file"}, {"SCOREHUB_REPLICA", "replica"}, {"SCOREHUB_JOB_LEASE", "job-lease"},
		{"SCOREHUB_MAX_BODY", "max-body"}, {"SCOREHUB_MAX_ROWS", "max-rows"},
		{"SCOREHUB_MAX_COLUMNS", "max-columns"}, {"SCOREHUB_MAX_RESULT_CELLS", "max-result-cells"},
		{"SCOREHUB_MAX_RESPONSE_BYTES", "max-response-bytes"},
		{"SCOREHUB_TIMEOUT", "timeout"}, {"SCOREHUB_GRACE", "grace"},
		{"SCOREHUB_MAX_JOB_BODY", "max-job-body"}, {"SCOREHUB_MAX_MODEL_BYTES", "max-model-bytes"},
		{"SCOREHUB_JOB_RETENTION", "job-retention"},
		{"SCOREHUB_READ_HEADER_TIMEOUT", "read-header-timeout"}, {"SCOREHUB_READ_TIMEOUT", "read-timeout"},
		{"SCOREHUB_WRITE_TIMEOUT", "write-timeout"}, {"SCOREHUB_IDLE_TIMEOUT", "idle-timeout"},
		{"SCOREHUB_WRITE_PROGRESS_TIMEOUT", "write-progress-timeout"},
		{"SCOREHUB_TOKEN_VALIDITY", "token-validity"}, {"SCOREHUB_KEY_ROTATION", "key-rotation"},
		{"SCOREHUB_USERS", "users"},
		{"SCOREHUB_OIDC_ISSUER", "oidc-issuer"}, {"SCOREHUB_OIDC_AUDIENCE", "oidc-audience"},
		{"SCOREHUB_OIDC_CLIENTS", "oidc-clients"}, {"SCOREHUB_OIDC_TOKEN_TYPE", "oidc-token-type"},
		{"SCOREHUB_OIDC_INSECURE_HTTP", "oidc-insecure-http"},
		{"SCOREHUB_CORS_ORIGINS", "cors-origins"}, {"SCOREHUB_TRUSTED_PROXIES", "trusted-proxies"},
		{"SCOREHUB_METRICS", "metrics"}, {"SCOREHUB_METRICS_ADDR", "metrics-addr"}, {"SCOREHUB_ACCESS_LOG", "access-log"},
		{"SCOREHUB_DEBUG_ADDR", "debug-addr"}, {"SCOREHUB_INSECURE_DEBUG_PUBLIC", "insecure-debug-public"},
		{"SCOREHUB_GC_MIN_HEAP", "gc-min-heap"},
		{"SCOREHUB_DEMO_SLEEP", "demo-sleep"},
	}
	for _, e := range env {
		if v := getenv(e.name); v != "" {
			if err := fs.Set(e.flag, v); err != nil {
				if e.flag == "store" {
					v = "…" // may hold a password
				}
				return c, fmt.Errorf("%s=%q: %w", e.name, v, err)
			}
		}
	}
	parsingArgs = true
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if *showVersion {
		return c, errShowVersion
	}
	if storeFile != "" {
		if c.Store != "" {
			return c, errors.New("set -store or -store-file (SCOREHUB_STORE or SCOREHUB_STORE_FILE), not both")
		}
		b, err := os.ReadFile(storeFile)
		if err != nil {
			return c, fmt.Errorf("-store-file: %w", err)
		}
		if c.Store = strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r"); c.Store == "" {
			return c, fmt.Errorf("-store-file: %s is empty", storeFile)
		}
	}
	if err := checkStore(&c); err != nil {
		return c, err
	}
	c.StorePasswordInArgs = storeInArgs && holdsPassword(c.Store)
	if c.DebugAddr != "" && !c.InsecureDebugPublic && !onLoopback(c.DebugAddr) {
		// Its profiles take no token and show the process's memory.
		return c, fmt.Errorf("-debug-addr: the debug address %q is not on loopback (127.0.0.1:6060, [::1]:6060, localhost:6060); -insecure-debug-public serves the profiles there anyway", c.DebugAddr)
	}
	c.Prefix = "/" + strings.Trim(c.Prefix, "/")
	if c.Prefix == "/" {
		return c, errors.New("the scoring prefix must not be empty (the root serves other routes)")
	}
	if first := strings.SplitN(strings.TrimPrefix(c.Prefix, "/"), "/", 2)[0]; reserved(first) {
		return c, fmt.Errorf("the scoring prefix must not start with /%s: the server's own routes are there", first)
	}
	for _, n := range []struct {
		name string
		v    int64
	}{{"max-body", c.MaxBody}, {"max-rows", int64(c.MaxRows)}, {"max-columns", int64(c.MaxColumns)}, {"max-result-cells", int64(c.MaxResultCells)}, {"max-response-bytes", c.MaxResponseBytes}, {"max-job-body", c.MaxJobBody}, {"max-model-bytes", c.MaxModelBytes}} {
		if n.v <= 0 {
			return c, fmt.Errorf("-%s must be positive, not %s", n.name, strconv.FormatInt(n.v, 10))
		}
	}
	for _, a := range strings.Split(audience, ",") {
		if a = strings.TrimSpace(a); a != "" {
			c.OIDCAudience = append(c.OIDCAudience, a)
		}
	}
	c.OIDCClients, c.OIDCTokenTypes = splitList(clients), splitList(tokenTypes)
	for _, o := range strings.Split(corsOrigins, ",") {
		if o = strings.TrimSpace(o); o != "" {
			c.CORSOrigins = append(c.CORSOrigins, o)
		}
	}
	for _, p := range strings.Split(proxies, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		prefix, err := parsePrefix(p)
		if err != nil {
			return c, fmt.Errorf("-trusted-proxies: %q is neither an address nor a prefix", p)
		}
		c.TrustedProxies = append(c.TrustedProxies, prefix)
	}
	if c.MetricsAddr != "" && !c.Metrics {
		return c, errors.New("-metrics-addr needs the metrics on: drop -metrics=false or -metrics-addr")
	}
	if c.OIDCIssuer != "" && len(c.OIDCAudience) == 0 {
		return c, errors.New("-oidc-issuer needs -oidc-audience: the audience an access token must name")
	}
	// Without them any client's token of the realm, an ID token included,
	// would be exchanged.
	if c.OIDCIssuer != "" && (len(c.OIDCClients) == 0 || len(c.OIDCTokenTypes) == 0) {
		return c, errors.New("-oidc-issuer needs -oidc-clients and -oidc-token-type: the clients an access token may be issued to, and its type")
	}
	if c.TokenValidity <= 0 {
		return c, errors.New("-token-validity must be positive")
	}
	// A shorter period would keep more than two keys verifying at once,
	// and a key file growing without bound.
	if c.KeyRotation < c.TokenValidity {
		return c, fmt.Errorf("-key-rotation %v must be at least -token-validity %v", c.KeyRotation, c.TokenValidity)
	}
	if c.JobRetention <= 0 {
		return c, errors.New("-job-retention must be positive")
	}
	if c.GCMinHeap < 0 {
		return c, errors.New("-gc-min-heap must not be negative")
	}
	if c.Timeout <= 0 || c.Grace < 0 {
		return c, errors.New("-timeout must be positive and -grace not negative")
	}
	// Zero would turn a read timeout off and let slow senders hold
	// connections for ever: fail closed.
	if c.ReadHeaderTimeout <= 0 || c.ReadTimeout <= 0 || c.IdleTimeout <= 0 || c.WriteTimeout < 0 || c.WriteProgressTimeout < 0 {
		return c, errors.New("-read-header-timeout, -read-timeout and -idle-timeout must be positive and -write-timeout and -write-progress-timeout not negative")
	}
	return c, nil
}

// checkStore checks -store, -replica and -job-lease. Its errors never quote -store, which may hold a
// password.
func checkStore(c *config) error {
	shared := strings.HasPrefix(c.Store, "postgres://") || strings.HasPrefix(c.Store, "postgresql://")
	switch {
	case c.Store != "" && !shared:
		return errors.New("-store must be empty (files in -data) or a postgres:// connection string")
	case !shared && c.Replica != "":
		return errors.New("-replica names a replica of a shared store: it needs -store postgres://")
	case c.Replica != "" && !registry.ValidName(c.Replica):
		return fmt.Errorf("-replica %q must be 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit", c.Replica)
	case c.JobLease < 3*time.Second:
		// Leases are renewed every second and must outlast three renewals.
		return fmt.Errorf("-job-lease %v must be at least 3s", c.JobLease)
	}
	return nil
}

// holdsPassword reports whether the connection string s holds a password,
// in its user information or as a parameter.
func holdsPassword(s string) bool {
	u, err := url.Parse(s)
	if err != nil {
		// Unreadable here, and so by the database's driver too: whatever
		// it holds may be a password.
		return strings.Contains(s, "@") || strings.Contains(s, "password")
	}
	_, set := u.User.Password()
	return set || u.Query().Has("password")
}

// onLoopback reports whether the listen address addr is on loopback alone.
func onLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}

// splitList is the non-empty items of a comma-separated list.
func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// parsePrefix reads an address (a prefix of its full length) or a prefix.
func parsePrefix(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		return p.Masked(), err
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// service is the scorehub.Config of c, the admin password taken from the
// environment.
func (c config) service(getenv func(string) string) (scorehub.Config, error) {
	password, err := adminPassword(getenv)
	if err != nil {
		return scorehub.Config{}, err
	}
	procs := []process.ProcessInfo{}
	iris, err := demo.Iris()
	if err != nil {
		return scorehub.Config{}, err
	}
	procs = append(procs, iris)
	if c.DemoSleep {
		procs = append(procs, demo.Sleep())
	}
	sc := scorehub.Config{
		AdminPassword:   password,
		UsersFile:       c.UsersFile,
		Replica:         c.Replica,
		JobLease:        c.JobLease,
		Prefix:          c.Prefix,
		Processes:       procs,
		TokenValidity:   c.TokenValidity,
		KeyRotation:     c.KeyRotation,
		MaxBodyBytes:    c.MaxBody,
		MaxRows:         c.MaxRows,
		MaxColumns:      c.MaxColumns,
		MaxResultCells:  c.MaxResultCells,
		MaxJobBodyBytes: c.MaxJobBody,
		MaxModelBytes:   c.MaxModelBytes,
		Timeout:         c.Timeout,
		// The flag's 0 is "none", the Config's is "the default".
		WriteProgressTimeout: cmp.Or(c.WriteProgressTimeout, -1),
		MaxResponseBytes:     c.MaxResponseBytes,
		JobRetention:         c.JobRetention,
		CORSOrigins:          c.CORSOrigins,
		TrustedProxies:       c.TrustedProxies,
		MetricsOff:           !c.Metrics,
		MetricsApart:         c.MetricsAddr != "",
		AccessLogOff:         !c.AccessLog,
		OIDC: scorehub.OIDCConfig{
			Issuer:            c.OIDCIssuer,
			Audience:          c.OIDCAudience,
			ClientIDs:         c.OIDCClients,
			TokenTypes:        c.OIDCTokenTypes,
			InsecureAllowHTTP: c.OIDCInsecureHTTP,
		},
	}
	if c.Store != "" {
		sc.StoreURL = c.Store
	} else {
		sc.DataDir = c.DataDir
	}
	return sc, nil
}

// adminPassword returns the admin password given by SCOREHUB_ADMIN_PASSWORD
// or, better, by the file SCOREHUB_ADMIN_PASSWORD_FILE names (its content
// without the trailing line break): a process's environment is readable in
// /proc/<pid>/environ, a file can be readable by the server alone. Setting
// both is refused rather than letting one silently win, and so is an empty
// file, which would otherwise fall back to the stored or a random password
// unnoticed. "" means neither is set.
func adminPassword(getenv func(string) string) (string, error) {
	password, file := getenv("SCOREHUB_ADMIN_PASSWORD"), getenv("SCOREHUB_ADMIN_PASSWORD_FILE")
	if file == "" {
		return password, nil
	}
	if password != "" {
		return "", errors.New("set SCOREHUB_ADMIN_PASSWORD or SCOREHUB_ADMIN_PASSWORD_FILE, not both")
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("SCOREHUB_ADMIN_PASSWORD_FILE: %w", err)
	}
	password = strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if password == "" {
		return "", fmt.Errorf("SCOREHUB_ADMIN_PASSWORD_FILE: %s is empty", file)
	}
	return password, nil
}
