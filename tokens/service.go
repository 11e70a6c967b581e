package tokens

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/netip"
	"runtime"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/internal/keyedlimit"
	"github.com/scorehub/scorehub/internal/loginlimit"
	"github.com/scorehub/scorehub/internal/muxcheck"
	"github.com/scorehub/scorehub/internal/urlpath"
	"github.com/scorehub/scorehub/problem"
)

// The routes [Service] serves, relative to where the host mounts it.
const (
	// PathTokenService issues a token for HTTP Basic credentials (GET).
	PathTokenService = "/api/rest/tokenservice"
	// PathExchange issues a token for an OpenID Connect provider's access
	// token (GET with Authorization: Bearer).
	PathExchange = "/api/rest/saml/tokenservice"
	// PathRenew issues a fresh token for a valid one this service issued
	// (GET with Authorization: Bearer), so that a client keeps its
	// session without keeping the password.
	PathRenew = "/api/rest/tokenservice/renew"
	// PathJWKS publishes the public keys tokens are signed with (GET).
	PathJWKS = "/api/rest/jwks.json"
)

// Defaults of [ServiceConfig].AddressLimit; those of the failure limits are
// DefaultFailureEvery and its bursts.
const (
	defaultAddressEvery = time.Second
	defaultAddressBurst = 30
)

// ServiceConfig configures a [Service]. The token service is served when
// Users is set, the exchange when Provider is set; at least one is
// required.
type ServiceConfig struct {
	// Issuer signs the tokens handed out. Required. The JWKS route
	// publishes its key set.
	Issuer *Issuer

	// Users checks the credentials of GET [PathTokenService]. Nil means the
	// route is not served.
	Users Authenticator

	// Provider verifies the access tokens of GET [PathExchange]. Nil means
	// the route is not served.
	Provider *Provider

	// Renewer verifies the idTokens of GET [PathRenew], which answers a
	// valid one with a fresh token for the same subject, groups, admin
	// flag and credential version. It should be the Verifier the host's
	// routes check tokens with, with VerifierConfig.Credentials, so that a
	// changed password ends every chain of renewals. Nil means the route
	// is not served.
	Renewer *Verifier

	// Realm is the realm of WWW-Authenticate challenges. Zero means
	// "scorehub". It may not hold quotes, backslashes or control
	// characters.
	Realm string

	// TrustedProxies are the addresses of reverse proxies whose
	// X-Forwarded-For entries are believed when naming the client of a
	// request for AddressLimit: the client is the last address before
	// them. Empty means none: every request is the client at its
	// RemoteAddr, IPv6 addresses grouped by their /64 prefix. The rate-limit
	// middleware names clients the same way.
	TrustedProxies []netip.Prefix

	// AddressLimit limits attempts on both token routes per client
	// address, whatever their outcome. Zero fields mean a burst of 30 and
	// one more a second.
	AddressLimit RateLimit

	// AddressFailureLimit limits failed logins on the token service per
	// client address, whatever the user names tried, so that one address
	// cannot try a password against every user. Zero fields mean a burst of
	// 20 and one more every 6 seconds.
	AddressFailureLimit RateLimit

	// UserAddressLimit limits failed logins on the token service per user
	// name (compared without case) and client address. Failures count only
	// against the address they came from, so nobody can lock a user out by
	// failing for them: the user still gets in from any address without
	// recent failures. Zero fields mean a burst of 10 and one more every 6
	// seconds.
	UserAddressLimit RateLimit

	// UserFailureLimit limits failed logins on the token service per user
	// name (compared without case) across addresses, so that many
	// addresses guessing one user's password are slowed as one: past it,
	// a login is answered 429 with Retry-After before the password is
	// checked. An address the user logged in from before (one of the last
	// 8, remembered for as many users as its MaxKeys) is not held by it,
	// so the user still gets in from there while others guess; from an
	// address new to the user, the user waits too. Zero fields mean a
	// burst of 20 and one more every minute.
	UserFailureLimit RateLimit

	// MaxConcurrentChecks caps how many password checks run at once;
	// more wait their turn. Zero means GOMAXPROCS.
	MaxConcurrentChecks int

	// Now is the clock of the rate limits; nil means time.Now. The tokens'
	// times come from the Issuer's clock.
	Now func() time.Time

	// Logger receives failed logins, issued tokens and server faults; nil
	// means slog.Default(). A failed login is logged with at most the first
	// two characters of the name tried (user_prefix) and a keyed hash of it
	// (user_ref, the same for every failure of one name while the Service
	// lives), never the whole name: it may be a password typed into the
	// wrong field.
	Logger *slog.Logger

	// Observer, when not nil, is told about every request on
	// [PathTokenService], [PathExchange] or [PathRenew] that reached its handler, after
	// the answer is written. Nil means none.
	Observer Observer
}

// Service serves the token routes: [PathTokenService] (when Users is
// configured), [PathExchange] (when a Provider is), [PathRenew] (when a
// Renewer is) and [PathJWKS]. Routes
// are relative to "/", so a host mounts the Service where it likes, with
// http.StripPrefix for a prefix. Other paths get a JSON 404, other methods a
// JSON 405. A Service is safe for concurrent use.
type Service struct {
	mux      *http.ServeMux
	issuer   *Issuer
	users    Authenticator
	provider *Provider
	renewer  *Verifier
	realm    string
	trusted  []netip.Prefix
	byAddr   *keyedlimit.Limiter // every attempt, per address
	failures *loginlimit.Guard   // failed logins
	checks   chan struct{}
	now      func() time.Time
	logger   *slog.Logger
	observer Observer
	routes   []string
	refKey   [32]byte // of nameRef
}

// NewService checks cfg and returns a Service. It fails closed: a missing
// Issuer, neither Users nor Provider, a negative limit, a realm that cannot
// be sent in a header or an invalid trusted proxy prefix is an error.
func NewService(cfg ServiceConfig) (*Service, error) {
	if err := muxcheck.Check(); err != nil {
		return nil, fmt.Errorf("tokens: %w", err)
	}
	h := &Service{issuer: cfg.Issuer, users: cfg.Users, provider: cfg.Provider, renewer: cfg.Renewer, realm: cfg.Realm,
		trusted: slices.Clone(cfg.TrustedProxies), now: cfg.Now, logger: cfg.Logger, observer: cfg.Observer}
	switch {
	case h.issuer == nil:
		return nil, errors.New("tokens: ServiceConfig.Issuer is required")
	case h.users == nil && h.provider == nil:
		return nil, errors.New("tokens: ServiceConfig needs Users, Provider or both")
	case cfg.MaxConcurrentChecks < 0:
		return nil, fmt.Errorf("tokens: MaxConcurrentChecks %d is negative", cfg.MaxConcurrentChecks)
	}
	if h.realm == "" {
		h.realm = "scorehub"
	}
	if strings.ContainsAny(h.realm, `"\`) || strings.IndexFunc(h.realm, unicode.IsControl) >= 0 {
		return nil, fmt.Errorf("tokens: realm %q has a quote, backslash or control character", h.realm)
	}
	if err := keyedlimit.CheckProxies(h.trusted); err != nil {
		return nil, fmt.Errorf("tokens: %w", err)
	}
	var err error
	if h.byAddr, err = cfg.AddressLimit.limiter(defaultAddressEvery, defaultAddressBurst); err != nil {
		return nil, err
	}
	if h.failures, err = loginlimit.New(loginlimit.Config{Address: loginlimit.Limit(cfg.AddressFailureLimit),
		UserAddress: loginlimit.Limit(cfg.UserAddressLimit), User: loginlimit.Limit(cfg.UserFailureLimit)}); err != nil {
		return nil, fmt.Errorf("tokens: %w", err)
	}
	n := cfg.MaxConcurrentChecks
	if n == 0 {
		n = runtime.GOMAXPROCS(0)
	}
	h.checks = make(chan struct{}, n)
	if h.now == nil {
		h.now = time.Now
	}
	if h.logger == nil {
		h.logger = slog.Default()
	}
	rand.Read(h.refKey[:]) // never fails: crypto/rand panics rather than return an error

	h.mux = http.NewServeMux()
	if h.users != nil {
		h.route(PathTokenService, http.HandlerFunc(h.serveTokenService))
	}
	if h.provider != nil {
		h.route(PathExchange, http.HandlerFunc(h.serveExchange))
	}
	if h.renewer != nil {
		h.route(PathRenew, http.HandlerFunc(h.serveRenew))
	}
	h.route(PathJWKS, JWKSHandler(h.issuer.keys))
	h.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		httperr.Write(w, r, h.logger, errNoRoute)
	})
	return h, nil
}

// route serves GET (and so HEAD) on path, and a JSON 405 for other methods.
func (h *Service) route(path string, handler http.Handler) {
	h.mux.Handle("GET "+path, handler)
	h.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		e := httperr.Newf(problem.MethodNotAllowed, "%s is not allowed here; use GET", r.Method)
		e.Allow = "GET, HEAD"
		httperr.Write(w, r, h.logger, e)
	})
	h.routes = append(h.routes, "GET "+path)
}

var _ http.Handler = (*Service)(nil)

// ServeHTTP serves the token routes. A path with dot segments or "//" is
// a JSON 404, where the mux would redirect to the cleaned path.
func (h *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.mux == nil {
		httperr.Write(w, r, nil, errors.New("tokens: Service not made by NewService"))
		return
	}
	if p, _ := urlpath.Sent(r.URL); !urlpath.Canonical(p) {
		httperr.Write(w, r, h.logger, errNoRoute)
		return
	}
	h.mux.ServeHTTP(w, r)
}

// Routes lists the routes served, as http.ServeMux patterns ("GET /path"),
// for hosts that mount them one by one or document them.
func (h *Service) Routes() []string { return append([]string(nil), h.routes...) }

// tokenResponse is the body both token routes answer with in JSON.
type tokenResponse struct {
	IDToken        string `json:"idToken"`
	ExpirationDate string `json:"expirationDate"`
}

// issue signs a token for p and sends it, as the JSON object or, when
// asJSON is false, as the bare JWT in text/plain. It returns the outcome.
func (h *Service) issue(w http.ResponseWriter, r *http.Request, p Principal, via string, asJSON bool) string {
	raw, c, err := h.issuer.Issue(p)
	if err != nil {
		httperr.Write(w, r, h.logger, fmt.Errorf("tokens: issue for %q: %w", p.Subject, err))
		return OutcomeError
	}
	h.logger.LogAttrs(r.Context(), slog.LevelInfo, "tokens: token issued",
		slog.String("sub", c.Subject), slog.String("jti", c.ID), slog.String("via", via))
	hdr := w.Header()
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("Pragma", "no-cache")
	hdr.Set("X-Content-Type-Options", "nosniff")
	if !asJSON {
		hdr.Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte(raw))
		return OutcomeIssued
	}
	body, _ := json.Marshal(tokenResponse{IDToken: raw, ExpirationDate: c.ExpiresAt.UTC().Format(time.RFC3339)}) // strings only: cannot fail
	hdr.Set("Content-Type", "application/json")
	w.Write(append(body, '\n'))
	return OutcomeIssued
}

// errNoRoute answers a path the token routes do not serve.
var errNoRoute = httperr.New(problem.NotFound, "no such route")

// tooMany is the 429 for an attempt past a limit, Retry-After in whole
// seconds.
func tooMany(d time.Duration) error {
	return httperr.New(problem.RateLimited, "too many attempts; retry later").
		WithRetryAfter(int(math.Ceil(d.Seconds())))
}

// limitAddr spends an attempt of r's client and answers 429 if it has none
// left.
func (h *Service) limitAddr(w http.ResponseWriter, r *http.Request) bool {
	if d, ok := h.byAddr.Take(h.client(r), h.now()); !ok {
		httperr.Write(w, r, h.logger, tooMany(d))
		return false
	}
	return true
}

// client names the client of r, for the address limit and the log.
func (h *Service) client(r *http.Request) string {
	return keyedlimit.ClientKey(r, h.trusted)
}
