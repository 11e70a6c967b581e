package middleware

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/internal/keyedlimit"
	"github.com/scorehub/scorehub/internal/loginlimit"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/tokens"
	"github.com/scorehub/scorehub/tokens/accounts"
)

// ProviderVerifier checks an access token of an OpenID Connect provider
// and maps it to a principal, as the offline-token exchange does.
// *tokens.Provider implements it. Errors match the tokens package's
// verification sentinels; tokens.ErrProviderUnavailable says the provider's
// keys could not be had.
type ProviderVerifier interface {
	Verify(ctx context.Context, raw string) (tokens.Principal, error)
}

// APITokenVerifier checks a long-lived API token and returns its owner and
// the web API groups the token is restricted to (none: every group its
// owner may call). *accounts.Book implements it. Errors match
// tokens.ErrBadCredentials (no such token), tokens.ErrExpired and
// tokens.ErrRevoked; any other error is a failure of the verifier.
type APITokenVerifier interface {
	VerifyAPIToken(ctx context.Context, token string) (p tokens.Principal, webAPIGroups []string, err error)
}

var _ ProviderVerifier = (*tokens.Provider)(nil)

// AuthObserver is told how each check of [Credentials] ended: the kind of
// credential presented (one of the registry.Scheme values, or "none" and
// "other") and one of the Auth outcome constants. Both sets are fixed, so a
// metric labelled with them stays bounded. It is called from many
// goroutines and should return quickly; the metrics package implements it.
type AuthObserver interface {
	ObserveAuth(scheme, outcome string)
}

// Outcomes of a credential check, as an [AuthObserver] is told them.
const (
	AuthAccepted       = "accepted"        // let through
	AuthMissing        = "missing"         // no credentials
	AuthKindRefused    = "kind_refused"    // a kind the group (or server) does not take
	AuthMalformed      = "malformed"       // an Authorization header that cannot be read
	AuthBadCredentials = "bad_credentials" // wrong password, unknown or forged token
	AuthExpired        = "expired"         // a token past its expiry
	AuthRevoked        = "revoked"         // a token whose holder was removed or changed
	AuthForbidden      = "forbidden"       // valid, but not allowed here
	AuthRateLimited    = "rate_limited"    // too many failures from the client
	AuthError          = "error"           // the check itself failed
)

// Scheme labels of an [AuthObserver] besides the registry.Scheme values.
const (
	SchemeNone  = "none"  // no Authorization header
	SchemeOther = "other" // a scheme scorehub does not know
)

// CredentialsConfig configures [Credentials]: the checks of every kind of
// credential AI Hub's clients send.
type CredentialsConfig struct {
	// BearerConfig checks bearer tokens: Verifier (required) checks the
	// service's own idTokens. Its Realm, Logger and TrustedProxies serve
	// every kind.
	BearerConfig

	// Provider, when set, checks bearer tokens the Verifier does not know
	// as the service's own (another issuer, an unknown key) as access
	// tokens of an OpenID Connect provider. Nil means only idTokens are
	// taken as bearer tokens.
	Provider ProviderVerifier

	// Passwords, when set, checks HTTP Basic credentials. Give it a
	// *accounts.PasswordCache: it runs on every request, and a check the
	// cache remembers is let through before the failure limits are looked
	// at. Nil means Basic is not taken.
	Passwords tokens.Authenticator

	// APITokens, when set, checks "apitoken" credentials. Nil means API
	// tokens are not taken.
	APITokens APITokenVerifier

	// AddressFailureLimit limits wrong Basic passwords per client address,
	// whatever the names tried. Zero fields mean a burst of 20 and one more
	// every 6 seconds, as the token service.
	AddressFailureLimit tokens.RateLimit

	// UserAddressFailureLimit limits wrong Basic passwords per user name and
	// client address, so that nobody can lock a user out by failing for
	// them from elsewhere. Zero fields mean a burst of 10 and one more
	// every 6 seconds, as the token service.
	UserAddressFailureLimit tokens.RateLimit

	// UserFailureLimit limits wrong Basic passwords per user name across
	// client addresses, so that many addresses guessing one user's
	// password are slowed as one (429 with Retry-After); an address the
	// user's password was right from before is not held by it, so the
	// user still gets in from there. Zero fields mean a burst of 20 and one
	// more every minute, as the token service.
	UserFailureLimit tokens.RateLimit

	// Observer, when not nil, is told how every check ended.
	Observer AuthObserver

	// Now is the clock of the failure limits; nil means time.Now.
	Now func() time.Time
}

// Credentials checks the credentials of requests to protected web API
// groups, of every kind a group's policy may take: HTTP Basic (a user name
// and password), "apitoken" (a long-lived API token), and Bearer (the
// service's idToken, or an access token of the configured OpenID Connect
// provider). [Credentials.Authorize] is the one check of a caller against a
// group's policy, for the scoring handler (scoring.Config.Authorize) and
// jobs (scoring.JobsConfig.Authorize) alike; [Credentials.Middleware] takes
// any kind in front of a route. A Credentials is safe for concurrent use.
type Credentials struct {
	bearer    *authenticator
	provider  ProviderVerifier
	passwords tokens.Authenticator
	apiTokens APITokenVerifier
	failures  *loginlimit.Guard
	observer  AuthObserver
	now       func() time.Time
	// kinds are the kinds configured, in the order of registry.AllSchemes.
	kinds []registry.Scheme
	// all is the policy a route behind Middleware has: every kind.
	all registry.AuthPolicy
}

// NewCredentials checks cfg and returns a Credentials. It fails as
// [Bearer] does, and on a negative limit.
func NewCredentials(cfg CredentialsConfig) (*Credentials, error) {
	a, err := newAuthenticator(cfg.BearerConfig)
	if err != nil {
		return nil, err
	}
	c := &Credentials{bearer: a, provider: cfg.Provider, passwords: cfg.Passwords, apiTokens: cfg.APITokens,
		observer: cfg.Observer, now: cfg.Now}
	if c.now == nil {
		c.now = time.Now
	}
	if c.failures, err = loginlimit.New(loginlimit.Config{Address: loginlimit.Limit(cfg.AddressFailureLimit),
		UserAddress: loginlimit.Limit(cfg.UserAddressFailureLimit), User: loginlimit.Limit(cfg.UserFailureLimit)}); err != nil {
		return nil, fmt.Errorf("middleware: failure limit: %w", err)
	}
	for _, s := range registry.AllSchemes() {
		if c.configured(s) {
			c.kinds = append(c.kinds, s)
		}
	}
	c.all = registry.AuthPolicy{Mode: registry.TokenRequired, Schemes: c.kinds}
	return c, nil
}

// configured reports whether c can check credentials of kind s.
func (c *Credentials) configured(s registry.Scheme) bool {
	switch s {
	case registry.SchemeBasic:
		return c.passwords != nil
	case registry.SchemeAPIToken:
		return c.apiTokens != nil
	case registry.SchemeBearer:
		return true
	}
	return false
}

// caller is who a request's credentials name, and the kind of credentials
// that named them.
type caller struct {
	claims *tokens.Claims
	kind   registry.Scheme
}

// Authorize decides whether r may call an endpoint of the web API group
// named group, whose policy is p: the function for scoring.Config.Authorize
// and scoring.JobsConfig.Authorize. A public policy (or an empty mode) lets
// every request through. A protected one needs credentials of a kind it
// takes and this Credentials can check, valid, of a caller in one of
// p.Groups when that is not empty; an API token restricted to some web API
// groups must name group among them.
//
// A refusal is an error that carries its whole answer: 401 unauthorized for
// no credentials or a kind not taken, 401 invalid_token for a wrong
// password or a bad, expired or revoked token, 400 invalid_request for an
// Authorization header that cannot be read, 429 with Retry-After for a
// client past its failure limit, 403 forbidden for a caller not allowed
// here. Every 401 carries a WWW-Authenticate challenge for each kind the
// group takes (Basic, apitoken, Bearer, in that order); the one of the kind
// presented says what was wrong. A mode Authorize does not know is refused
// as an internal error, never let through.
func (c *Credentials) Authorize(r *http.Request, group string, p registry.AuthPolicy) error {
	switch p.Mode {
	case "", registry.Public:
		return nil
	case registry.TokenRequired:
	default:
		return fmt.Errorf("middleware: unknown scoring auth mode %q", p.Mode)
	}
	who, err := c.authenticate(r, p)
	if err != nil {
		return err
	}
	switch groupRule(who.claims, group, p) {
	case ruleRestricted:
		return c.refuse(r, string(registry.SchemeAPIToken), AuthForbidden, who.claims.Subject,
			forbidden(c.bearer.realm, msgAPITokenGroup+group))
	case ruleNotInGroups:
		refusal := c.bearer.errNotInGroups // a token's holder
		switch who.kind {
		case registry.SchemeBasic:
			refusal = forbidden(c.bearer.realm, msgGroupUser)
		case registry.SchemeAPIToken:
			refusal = forbidden(c.bearer.realm, msgGroupAPIToken)
		}
		return c.refuse(r, "", AuthForbidden, who.claims.Subject,
			refusal.Wrap(fmt.Errorf("middleware: %q is in none of the user groups %q", who.claims.Subject, p.Groups)))
	}
	return nil
}

// A rule of a web API group a caller breaks, as groupRule finds it.
const (
	ruleNone        = iota // none: the caller may use the group
	ruleRestricted         // the credential is restricted to other groups
	ruleNotInGroups        // the caller is in none of the group's user groups
)

// groupRule returns the rule of the web API group named group, whose
// policy is p, that the holder of claims c breaks: the one decision of
// what a caller who has proved who they are may do with a group, for
// scoring ([Credentials.Authorize]), jobs and reads ([MaySee]) alike. A
// credential restricted to other groups may not use it, whatever its
// policy; a protected group that names user groups takes only their
// members.
func groupRule(c *tokens.Claims, group string, p registry.AuthPolicy) int {
	switch {
	case !c.MayUse(group):
		return ruleRestricted
	case p.Mode == registry.TokenRequired && len(p.Groups) > 0 && !slices.ContainsFunc(p.Groups, c.InGroup):
		return ruleNotInGroups
	}
	return ruleNone
}

// MaySee reports whether the holder of claims c (nil for a caller without
// credentials) may see the resources of the web API group named group,
// whose policy is p: its endpoints, deployments and the models deployed
// there. The rule is the group's scoring rule ([Credentials.Authorize])
// without the kind of credential: everyone may see a public group, the
// holders of valid credentials a protected one that names no user groups,
// and only the members of one of its user groups a protected one that
// does; a credential restricted to other groups sees none of this one. An
// administrator (never a restricted credential) sees every group.
func MaySee(c *tokens.Claims, group string, p registry.AuthPolicy) bool {
	switch {
	case c == nil:
		return p.Mode != registry.TokenRequired
	case c.Admin:
		return true
	}
	return groupRule(c, group, p) == ruleNone
}

// Middleware lets a request through to next only with valid credentials of
// any kind this Credentials checks, and gives the handler their claims
// ([ClaimsFrom]): Subject, Admin and Groups, whatever the kind. Refusals are
// those of [Credentials.Authorize] for a group that takes every kind.
func (c *Credentials) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		who, err := c.authenticate(r, c.all)
		if err != nil {
			logger := c.bearer.logger
			if httperr.From(err).Status < http.StatusInternalServerError {
				logger = discard // a refusal, logged by refuse
			}
			httperr.Write(w, r, logger, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(withAuth(r.Context(), who.claims, c.bearer)))
	})
}

// authenticate returns who r's credentials name, if they are of a kind p
// takes, or the refusal.
func (c *Credentials) authenticate(r *http.Request, p registry.AuthPolicy) (caller, error) {
	a := c.bearer
	if hasAccessToken(r.URL.RawQuery, true) {
		return caller{}, c.refuse(r, SchemeNone, AuthMalformed, "", c.badRequest(p, registry.SchemeBearer, msgQuery))
	}
	h := r.Header["Authorization"]
	if len(h) > 1 {
		return caller{}, c.refuse(r, SchemeNone, AuthMalformed, "", c.badRequest(p, registry.SchemeBearer, msgMultiple))
	}
	inForm, err := formHasAccessToken(r)
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) || httperr.From(err).Status == http.StatusRequestTimeout {
			return caller{}, err // 413, or 408 for the server's read timeout
		}
		return caller{}, a.errBodyRead.Wrap(err)
	}
	if inForm {
		return caller{}, c.refuse(r, SchemeNone, AuthMalformed, "", c.badRequest(p, registry.SchemeBearer, msgForm))
	}
	if len(h) == 0 {
		return caller{}, c.refuse(r, SchemeNone, AuthMissing, "",
			httperr.New(problem.Unauthorized, c.missingMessage(p)).WithChallenge(c.challenges(p, "", "", "")))
	}
	name, rest, _ := strings.Cut(h[0], " ")
	if !isToken(name) {
		return caller{}, c.refuse(r, SchemeOther, AuthMalformed, "", c.badRequest(p, registry.SchemeBearer, msgHeaderSyntax))
	}
	kind := schemeOf(name)
	if kind == "" || !p.Accepts(kind) || !c.configured(kind) {
		label := string(kind)
		if kind == "" {
			label = SchemeOther
		}
		return caller{}, c.refuse(r, label, AuthKindRefused, "",
			httperr.New(problem.Unauthorized, c.kindMessage(p, name)).WithChallenge(c.challenges(p, "", "", "")))
	}
	value := strings.TrimLeft(rest, " ")
	switch {
	case kind == registry.SchemeBearer && noToken(value):
		return caller{}, c.refuse(r, string(kind), AuthMalformed, "", c.badRequest(p, kind, msgNoBearer))
	case kind == registry.SchemeAPIToken && noToken(value):
		return caller{}, c.refuse(r, string(kind), AuthMalformed, "", c.badRequest(p, kind, msgNoAPIToken))
	}
	var who caller
	switch kind {
	case registry.SchemeBasic:
		who, err = c.basic(r, p, value)
	case registry.SchemeAPIToken:
		who, err = c.apiToken(r, p, value)
	default:
		who, err = c.bearerToken(r, p, value)
	}
	if err != nil {
		return caller{}, err
	}
	who.kind = kind
	if li := logInfoFrom(r.Context()); li != nil {
		li.subject = who.claims.Subject
	}
	c.observe(string(kind), AuthAccepted)
	return who, nil
}

// basic checks HTTP Basic credentials, within the failure limits.
func (c *Credentials) basic(r *http.Request, p registry.AuthPolicy, value string) (caller, error) {
	const kind = registry.SchemeBasic
	// Decoded on the stack, so that the one copy is the string below.
	var buf [256]byte
	raw := buf[:0]
	if base64.StdEncoding.DecodedLen(len(value)) > len(buf) {
		raw = nil
	}
	raw, err := base64.StdEncoding.AppendDecode(raw, []byte(value))
	name, password, ok := strings.Cut(string(raw), ":")
	if err != nil || !ok || name == "" {
		return caller{}, c.refuse(r, string(kind), AuthMalformed, "", c.badRequest(p, kind, msgBasicSyntax))
	}
	// A check remembered proves the password right: no limit holds it.
	if rc, ok := c.passwords.(rememberer); ok {
		pr, ok, err := rc.Remembered(r.Context(), name, password)
		if err != nil {
			c.observe(string(kind), AuthError)
			return caller{}, fmt.Errorf("middleware: check a password: %w", err)
		}
		if ok {
			return caller{claims: claimsOf(pr)}, nil
		}
	}
	client := keyedlimit.ClientKey(r, c.bearer.trusted)
	if d, ok := c.failures.Check(name, client, c.now()); !ok {
		e := httperr.New(problem.RateLimited, msgTooManyFailures).WithRetryAfter(int((d + time.Second - 1) / time.Second))
		return caller{}, c.refuse(r, string(kind), AuthRateLimited, "", e)
	}
	pr, err := c.passwords.Authenticate(r.Context(), name, password)
	switch {
	case errors.Is(err, tokens.ErrBadCredentials):
		c.failures.Failed(name, client, c.now())
		return caller{}, c.refuse(r, string(kind), AuthBadCredentials, "", c.invalid(p, kind, msgBadPassword, err))
	case err != nil:
		c.observe(string(kind), AuthError)
		return caller{}, fmt.Errorf("middleware: check a password: %w", err)
	}
	c.failures.Succeeded(name, client)
	return caller{claims: claimsOf(pr)}, nil
}

// rememberer is a password check that can say, cheaply, whether it
// accepted a name and password lately, as *accounts.PasswordCache does.
type rememberer interface {
	Remembered(ctx context.Context, name, password string) (tokens.Principal, bool, error)
}

var _ rememberer = (*accounts.PasswordCache)(nil)

// apiToken checks an API token.
func (c *Credentials) apiToken(r *http.Request, p registry.AuthPolicy, value string) (caller, error) {
	const kind = registry.SchemeAPIToken
	if !isB64Token(value) || len(value) > maxAPIToken {
		return caller{}, c.refuse(r, string(kind), AuthMalformed, "", c.badRequest(p, kind, msgAPITokenSyntax))
	}
	pr, groups, err := c.apiTokens.VerifyAPIToken(r.Context(), value)
	switch {
	case errors.Is(err, tokens.ErrBadCredentials), errors.Is(err, tokens.ErrMalformed):
		return caller{}, c.refuse(r, string(kind), AuthBadCredentials, "", c.invalid(p, kind, msgAPITokenInvalid, err))
	case errors.Is(err, tokens.ErrExpired):
		return caller{}, c.refuse(r, string(kind), AuthExpired, "", c.invalid(p, kind, msgAPITokenExpired, err))
	case errors.Is(err, tokens.ErrRevoked):
		return caller{}, c.refuse(r, string(kind), AuthRevoked, "", c.invalid(p, kind, msgAPITokenRevoked, err))
	case err != nil:
		c.observe(string(kind), AuthError)
		return caller{}, fmt.Errorf("middleware: verify an API token: %w", err)
	}
	claims := claimsOf(pr)
	claims.Restrict(groups) // never an administrator's, if restricted
	return caller{claims: claims}, nil
}

// bearerToken checks a bearer token: an idToken, or else, when a provider
// is configured and the token is not one of the service's own, an access
// token of the provider.
func (c *Credentials) bearerToken(r *http.Request, p registry.AuthPolicy, value string) (caller, error) {
	const kind = registry.SchemeBearer
	if !isB64Token(value) {
		return caller{}, c.refuse(r, string(kind), AuthMalformed, "", c.badRequest(p, kind, msgMalformed))
	}
	claims, err := c.bearer.verifier.Verify(r.Context(), value)
	if err == nil && claims == nil {
		err = errors.New("middleware: verifier returned neither claims nor an error")
	}
	if err != nil && c.provider != nil && notOurs(err) {
		var pr tokens.Principal
		if pr, err = c.provider.Verify(r.Context(), value); err == nil {
			claims = claimsOf(pr)
		}
	}
	if err != nil {
		e := c.bearer.tokenRefusal(err)
		if e == nil {
			c.observe(string(kind), AuthError)
			if errors.Is(err, tokens.ErrProviderUnavailable) {
				return caller{}, httperr.New(problem.Unavailable, msgProviderDown).WithRetryAfter(5).Wrap(err)
			}
			return caller{}, c.bearer.refuseToken(err)
		}
		outcome := AuthBadCredentials
		switch {
		case errors.Is(err, tokens.ErrExpired):
			outcome = AuthExpired
		case errors.Is(err, tokens.ErrRevoked):
			outcome = AuthRevoked
		}
		// The Bearer refusal as it is, with every challenge the group takes.
		refused := *e
		refused.Challenge = c.challenges(p, kind, codeInvalidToken, e.Message)
		return caller{}, c.refuse(r, string(kind), outcome, "", &refused)
	}
	return caller{claims: claims}, nil
}

// notOurs reports whether a verification error says the token is not one
// the service issued (another issuer, audience or key), rather than one of
// its own that is bad.
func notOurs(err error) bool {
	return errors.Is(err, tokens.ErrIssuer) || errors.Is(err, tokens.ErrUnknownKey) ||
		errors.Is(err, tokens.ErrAudience) || errors.Is(err, tokens.ErrAlgorithm)
}

// claimsOf returns the claims of a principal checked by other means than an
// idToken.
func claimsOf(p tokens.Principal) *tokens.Claims {
	return &tokens.Claims{Subject: p.Subject, Admin: p.Admin, Groups: p.Groups, CredentialVersion: p.CredentialVersion}
}

// schemeOf returns the kind an Authorization scheme names, compared without
// case; "" for a scheme scorehub does not know.
func schemeOf(name string) registry.Scheme {
	for _, s := range [...]registry.Scheme{registry.SchemeBasic, registry.SchemeAPIToken, registry.SchemeBearer} {
		if strings.EqualFold(name, string(s)) {
			return s
		}
	}
	return ""
}

// accepted returns the kinds p takes that c can check.
func (c *Credentials) accepted(p registry.AuthPolicy) []registry.Scheme {
	out := make([]registry.Scheme, 0, len(c.kinds))
	for _, s := range c.kinds {
		if p.Accepts(s) {
			out = append(out, s)
		}
	}
	return out
}

// challenges returns the WWW-Authenticate value for a group with policy p:
// one challenge for each kind it takes, the one of kind tried with the
// error code and description when code is not empty.
func (c *Credentials) challenges(p registry.AuthPolicy, tried registry.Scheme, code, description string) string {
	realm := c.bearer.realm
	var parts []string
	for _, s := range c.accepted(p) {
		switch s {
		case registry.SchemeBasic:
			parts = append(parts, `Basic realm="`+realm+`", charset="UTF-8"`)
		case registry.SchemeAPIToken:
			parts = append(parts, `apitoken realm="`+realm+`"`)
		case registry.SchemeBearer:
			if tried == registry.SchemeBearer {
				parts = append(parts, httperr.BearerChallenge(realm, code, description))
			} else {
				parts = append(parts, httperr.BearerChallenge(realm, "", ""))
			}
		}
	}
	return strings.Join(parts, ", ")
}

// kindNames returns the kinds p takes as a client reads them: "Basic,
// apitoken or Bearer".
func (c *Credentials) kindNames(p registry.AuthPolicy) string {
	var names []string
	for _, s := range c.accepted(p) {
		switch s {
		case registry.SchemeBasic:
			names = append(names, "Basic")
		case registry.SchemeAPIToken:
			names = append(names, "apitoken")
		case registry.SchemeBearer:
			names = append(names, "Bearer")
		}
	}
	switch len(names) {
	case 0:
		return "no kind of credentials this server checks"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// missingMessage is the 401 for a request without credentials, naming
// where a bearer token comes from when p takes one.
func (c *Credentials) missingMessage(p registry.AuthPolicy) string {
	msg := "this endpoint needs credentials in the Authorization header: " + c.kindNames(p)
	if slices.Contains(c.accepted(p), registry.SchemeBearer) {
		msg += "; for a Bearer token, " + msgWhereTokens
	}
	return msg
}

func (c *Credentials) kindMessage(p registry.AuthPolicy, scheme string) string {
	if len(scheme) > 32 {
		scheme = scheme[:32] + "…"
	}
	return "this endpoint does not take " + scheme + " credentials; use " + c.kindNames(p)
}

// badRequest is the 400 for credentials of kind sent in a way that cannot
// be read.
func (c *Credentials) badRequest(p registry.AuthPolicy, kind registry.Scheme, msg string) *problem.Error {
	return httperr.New(problem.InvalidRequest, msg).WithChallenge(c.challenges(p, kind, codeInvalidRequest, msg))
}

// invalid is the 401 for credentials of kind that were checked and refused.
func (c *Credentials) invalid(p registry.AuthPolicy, kind registry.Scheme, msg string, cause error) *problem.Error {
	return httperr.New(problem.InvalidToken, msg).WithChallenge(c.challenges(p, kind, codeInvalidToken, msg)).Wrap(cause)
}

// refuse logs a refusal, tells the observer, and returns it.
func (c *Credentials) refuse(r *http.Request, scheme, outcome, subject string, err error) error {
	if scheme != "" {
		c.observe(scheme, outcome)
	} else {
		c.observe(schemeLabel(r), outcome)
	}
	c.bearer.logRefusal(r, err, subject)
	return err
}

// schemeLabel is the observer's label of the kind r presents.
func schemeLabel(r *http.Request) string {
	name, _, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if name == "" {
		return SchemeNone
	}
	if s := schemeOf(name); s != "" {
		return string(s)
	}
	return SchemeOther
}

func (c *Credentials) observe(scheme, outcome string) {
	if c.observer != nil {
		c.observer.ObserveAuth(scheme, outcome)
	}
}

// maxAPIToken bounds an API token's length; real ones are far shorter.
const maxAPIToken = 512
