package tokens

import (
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/time/rate"
)

// ProviderConfig configures a [Provider]: an OpenID Connect provider (such
// as the Keycloak of an AI Hub installation) whose access tokens scorehub
// exchanges for its own.
type ProviderConfig struct {
	// Issuer is the provider's issuer URL, exactly as its tokens' "iss"
	// says (for Keycloak https://host/realms/NAME). Required. Unless JWKSURL
	// is set, the keys are found through Issuer +
	// "/.well-known/openid-configuration", whose "issuer" must equal it.
	Issuer string

	// JWKSURL is the provider's JWKS. Empty means it is discovered.
	JWKSURL string

	// Audience lists the accepted audiences: a token's "aud" must name at
	// least one of them. Required. Keycloak names its clients' audiences
	// through audience mappers; its default "account" audience is shared by
	// every client of the realm, so prefer a dedicated one.
	Audience []string

	// ClientIDs, when set, limits tokens to those issued to these clients,
	// by their "azp" claim (Keycloak) or, lacking one, "client_id"
	// (RFC 9068).
	ClientIDs []string

	// TokenTypes, when set, limits tokens to these types, so that an ID or
	// refresh token of the same provider is not taken for an access token.
	// A token's type is its "typ" claim (Keycloak writes "Bearer" in access
	// tokens, "ID" in ID tokens, "Refresh" in refresh tokens) or, lacking
	// one, its JOSE header's "typ" (RFC 9068 access tokens say "at+jwt").
	// Types compare case-insensitively, and a header's "application/"
	// prefix is ignored.
	TokenTypes []string

	// Algorithms are the accepted signing algorithms. Nil means RS256, what
	// Keycloak signs with by default. HS256 is not allowed: its key is a
	// secret no provider publishes.
	Algorithms []Algorithm

	// Leeway is the clock skew allowed between the provider and this
	// server, at most [MaxLeeway]. Zero means none.
	Leeway time.Duration

	// Claims says how the provider's claims map to a [Principal]. Its zero
	// value fits Keycloak.
	Claims ClaimMapping

	// HTTPClient fetches the discovery document and the keys. Nil means a
	// client of its own with the default transport.
	HTTPClient *http.Client

	// FetchTimeout bounds one fetch of the discovery document and the
	// keys. Zero means 10 seconds.
	FetchTimeout time.Duration

	// RefreshInterval is the least time between two fetches of the keys
	// that a token with an unknown "kid" triggers, and the time to wait
	// after a failed fetch before trying again. Tokens naming random key
	// IDs therefore cannot make the server hammer the provider. Zero means
	// 30 seconds.
	RefreshInterval time.Duration

	// MaxAge is how long fetched keys are used before they are fetched
	// again. Zero means one hour.
	MaxAge time.Duration

	// InsecureAllowHTTP allows http:// URLs for a provider that is not on
	// a loopback address (loopback is always allowed). Only for a provider
	// reached over a network no one else can see, such as a container
	// network.
	InsecureAllowHTTP bool

	// Now is the clock; nil means time.Now.
	Now func() time.Time

	// Logger receives fetch failures; nil means slog.Default().
	Logger *slog.Logger
}

// ClaimMapping says where a provider's token keeps the subject, roles and
// groups of the user. A claim is named by its path through nested objects,
// dot-separated ("realm_access.roles"). Empty fields take the Keycloak
// defaults.
type ClaimMapping struct {
	// Subject is the claim holding the user name. Default
	// "preferred_username". A token without it is refused.
	Subject string

	// SubjectPrefix is put before the user name to make the subject of
	// the principal, so that a provider's user never has the name of a
	// local user: the provider's "admin" becomes "oidc:admin", not the
	// local admin, in tokens, logs and ownership. It must end in ":",
	// which no htpasswd user name holds. Default "oidc:".
	SubjectPrefix string

	// Roles is the claim holding the user's roles, an array of strings.
	// Default "realm_access.roles". A token without it has no roles.
	Roles string

	// AdminRoles are the roles that make the user an admin. Default
	// ["admin"].
	AdminRoles []string

	// Groups is the claim holding the user's groups, an array of strings.
	// Default "groups". A leading "/", which Keycloak writes when it sends
	// full group paths, is removed. A token without it has no groups.
	Groups string
}

func (m ClaimMapping) withDefaults() ClaimMapping {
	if m.Subject == "" {
		m.Subject = "preferred_username"
	}
	if m.SubjectPrefix == "" {
		m.SubjectPrefix = DefaultSubjectPrefix
	}
	if m.Roles == "" {
		m.Roles = "realm_access.roles"
	}
	if m.AdminRoles == nil {
		m.AdminRoles = []string{"admin"}
	}
	if m.Groups == "" {
		m.Groups = "groups"
	}
	return m
}

// DefaultSubjectPrefix is the default [ClaimMapping.SubjectPrefix]: a
// provider's user alice is the subject "oidc:alice".
const DefaultSubjectPrefix = "oidc:"

// maxProviderDocument bounds the discovery document and the JWKS.
const maxProviderDocument = 1 << 20

// Provider verifies access tokens an OpenID Connect provider issued, against
// the provider's published keys, and maps their claims to a [Principal].
// The keys are fetched on first use (so a server can start before its
// provider), cached, fetched again when they grow old or when a token names
// an unknown key, at most once every RefreshInterval for the latter, and
// one fetch at a time however many requests wait for it. A Provider is safe
// for concurrent use.
type Provider struct {
	issuer          string
	discoveryURL    string
	clientIDs       []string
	tokenTypes      []string
	algorithms      []string
	leeway          time.Duration
	claims          ClaimMapping
	client          *http.Client
	fetchTimeout    time.Duration
	refreshInterval time.Duration
	maxAge          time.Duration
	allowHTTP       bool
	now             func() time.Time
	logger          *slog.Logger
	parser          *jwt.Parser
	refresh         *rate.Limiter // fetches for unknown key IDs

	mu       sync.Mutex
	jwksURL  string               // configured, or discovered by the last good fetch
	keys     map[string]remoteKey // nil before the first good fetch
	fetched  time.Time            // of keys
	failed   time.Time            // of the last fetch, if it failed; zero otherwise
	lastErr  error                // of the last failed fetch
	inflight *fetchCall
}

type remoteKey struct {
	public crypto.PublicKey
	alg    Algorithm
}

// fetchCall is one fetch of the keys, shared by everyone waiting for it.
type fetchCall struct {
	done chan struct{}
	keys map[string]remoteKey
	err  error
}

// NewProvider checks cfg and returns a Provider. It does not contact the
// provider; the first token to verify does.
func NewProvider(cfg ProviderConfig) (*Provider, error) {
	p := &Provider{
		issuer:          cfg.Issuer,
		clientIDs:       slices.Clone(cfg.ClientIDs),
		tokenTypes:      slices.Clone(cfg.TokenTypes),
		claims:          cfg.Claims.withDefaults(),
		client:          cfg.HTTPClient,
		fetchTimeout:    cfg.FetchTimeout,
		refreshInterval: cfg.RefreshInterval,
		maxAge:          cfg.MaxAge,
		allowHTTP:       cfg.InsecureAllowHTTP,
		now:             cfg.Now,
		logger:          cfg.Logger,
		jwksURL:         cfg.JWKSURL,
	}
	if p.issuer == "" {
		return nil, errors.New("tokens: ProviderConfig.Issuer is required")
	}
	if err := p.checkURL("issuer", p.issuer); err != nil {
		return nil, err
	}
	p.discoveryURL = strings.TrimSuffix(p.issuer, "/") + "/.well-known/openid-configuration"
	if p.jwksURL != "" {
		if err := p.checkURL("JWKS URL", p.jwksURL); err != nil {
			return nil, err
		}
	}
	if len(cfg.Audience) == 0 || slices.Contains(cfg.Audience, "") {
		return nil, errors.New("tokens: ProviderConfig.Audience needs at least one name and no empty one")
	}
	if slices.Contains(p.clientIDs, "") {
		return nil, errors.New("tokens: ProviderConfig.ClientIDs has an empty name")
	}
	if slices.Contains(p.tokenTypes, "") {
		return nil, errors.New("tokens: ProviderConfig.TokenTypes has an empty type")
	}
	if !strings.HasSuffix(p.claims.SubjectPrefix, ":") {
		return nil, fmt.Errorf("tokens: ClaimMapping.SubjectPrefix %q does not end in \":\"", p.claims.SubjectPrefix)
	}
	algs := cfg.Algorithms
	if algs == nil {
		algs = []Algorithm{RS256}
	}
	var err error
	if p.algorithms, err = algorithmNames(algs, []Algorithm{EdDSA, ES256, RS256}); err != nil {
		return nil, err
	}
	if p.leeway, err = checkLeeway(cfg.Leeway); err != nil {
		return nil, err
	}
	if p.claims.Subject == p.claims.Roles || p.claims.Subject == p.claims.Groups {
		return nil, errors.New("tokens: ClaimMapping.Subject must differ from Roles and Groups")
	}
	for _, d := range []*time.Duration{&p.fetchTimeout, &p.refreshInterval, &p.maxAge} {
		if *d < 0 {
			return nil, fmt.Errorf("tokens: ProviderConfig has a negative duration %v", *d)
		}
	}
	if p.fetchTimeout == 0 {
		p.fetchTimeout = 10 * time.Second
	}
	if p.refreshInterval == 0 {
		p.refreshInterval = 30 * time.Second
	}
	if p.maxAge == 0 {
		p.maxAge = time.Hour
	}
	if p.client == nil {
		p.client = &http.Client{}
	}
	if p.now == nil {
		p.now = time.Now
	}
	if p.logger == nil {
		p.logger = slog.Default()
	}
	p.refresh = rate.NewLimiter(rate.Every(p.refreshInterval), 1)
	p.parser = jwt.NewParser(
		jwt.WithValidMethods(p.algorithms),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithIssuer(p.issuer),
		jwt.WithAudience(cfg.Audience...),
		jwt.WithLeeway(p.leeway),
		jwt.WithTimeFunc(p.now),
		jwt.WithStrictDecoding(),
	)
	return p, nil
}

// checkURL accepts https URLs, and http URLs on loopback or when allowed.
func (p *Provider) checkURL(what, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("tokens: provider %s %q is not an absolute URL without query or fragment", what, raw)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if p.allowHTTP || isLoopback(u.Hostname()) {
			return nil
		}
		return fmt.Errorf("tokens: provider %s %q is http on a non-loopback host; use https (or set InsecureAllowHTTP)", what, raw)
	}
	return fmt.Errorf("tokens: provider %s %q is not http(s)", what, raw)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Issuer is the provider's issuer URL.
func (p *Provider) Issuer() string { return p.issuer }

// Verify checks an access token the provider issued (size, signature against
// the provider's keys with a pinned algorithm, issuer, audience, client,
// token type, expiry) and maps its claims to a principal. Errors match the package's
// verification sentinels with [errors.Is]; [ErrProviderUnavailable] says the
// provider's keys could not be had, and a context error that ctx ended
// while waiting for them.
func (p *Provider) Verify(ctx context.Context, raw string) (Principal, error) {
	if p.parser == nil {
		return Principal{}, errors.New("tokens: Provider not made by NewProvider")
	}
	if err := checkRaw(raw); err != nil {
		return Principal{}, err
	}
	claims := jwt.MapClaims{}
	tok, err := p.parser.ParseWithClaims(raw, claims, func(t *jwt.Token) (any, error) {
		kid, err := headerKeyID(t)
		if err != nil {
			return nil, err
		}
		return p.key(ctx, kid, t.Method.Alg())
	})
	if err != nil {
		return Principal{}, classify(err, tok, p.algorithms)
	}
	if len(p.clientIDs) > 0 {
		client, _ := claims["azp"].(string)
		if client == "" {
			client, _ = claims["client_id"].(string)
		}
		if !slices.Contains(p.clientIDs, client) {
			return Principal{}, fmt.Errorf("%w: issued to client %q", ErrAudience, client)
		}
	}
	if len(p.tokenTypes) > 0 {
		typ, _ := claims["typ"].(string)
		if typ == "" {
			typ, _ = tok.Header["typ"].(string)
			if len(typ) > len("application/") && strings.EqualFold(typ[:len("application/")], "application/") {
				typ = typ[len("application/"):]
			}
		}
		if !slices.ContainsFunc(p.tokenTypes, func(t string) bool { return strings.EqualFold(t, typ) }) {
			return Principal{}, fmt.Errorf("%w: token type %q", ErrAudience, typ)
		}
	}
	return p.claims.principal(claims)
}

// principal maps verified claims to a Principal.
func (m ClaimMapping) principal(claims map[string]any) (Principal, error) {
	sub, _ := claimPath(claims, m.Subject).(string)
	if err := CheckName("subject", sub); err != nil {
		return Principal{}, fmt.Errorf("%w: claim %s: %v", ErrClaims, m.Subject, err)
	}
	roles, err := stringList(claims, m.Roles)
	if err != nil {
		return Principal{}, err
	}
	groups, err := stringList(claims, m.Groups)
	if err != nil {
		return Principal{}, err
	}
	sub = m.SubjectPrefix + sub
	if err := CheckName("subject", sub); err != nil {
		return Principal{}, fmt.Errorf("%w: claim %s: %v", ErrClaims, m.Subject, err)
	}
	p := Principal{Subject: sub, Groups: []string{}}
	for _, r := range roles {
		if slices.Contains(m.AdminRoles, r) {
			p.Admin = true
		}
	}
	for _, g := range groups {
		g = strings.TrimPrefix(g, "/")
		if err := CheckName("group", g); err != nil {
			return Principal{}, fmt.Errorf("%w: claim %s: %v", ErrClaims, m.Groups, err)
		}
		p.Groups = append(p.Groups, g)
	}
	return p, nil
}

// claimPath walks a dot-separated path through nested objects; nil if any
// step is missing.
func claimPath(claims map[string]any, path string) any {
	var v any = claims
	for name := range strings.SplitSeq(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[name]
	}
	return v
}

// stringList reads an optional array of strings.
func stringList(claims map[string]any, path string) ([]string, error) {
	v := claimPath(claims, path)
	if v == nil {
		return nil, nil
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%w: claim %s is not an array", ErrClaims, path)
	}
	out := make([]string, 0, len(arr))
	for _, e := range arr {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("%w: claim %s holds a non-string", ErrClaims, path)
		}
		out = append(out, s)
	}
	return out, nil
}

// key returns the provider's public key kid for a token signed with alg,
// fetching the keys when none are cached, when they are old, or (rate
// limited) when kid is not among them.
func (p *Provider) key(ctx context.Context, kid, alg string) (any, error) {
	now := p.now()
	p.mu.Lock()
	cached := p.keys
	if k, ok := cached[kid]; ok && now.Sub(p.fetched) < p.maxAge {
		p.mu.Unlock()
		return pick(k, kid, alg)
	}
	call := p.inflight
	if call == nil {
		switch {
		case !p.failed.IsZero() && now.Sub(p.failed) < p.refreshInterval:
			// Backing off after a failure: use what we have.
			lastErr := p.lastErr
			p.mu.Unlock()
			return p.fallback(cached, kid, alg, lastErr)
		case cached != nil && now.Sub(p.fetched) < p.maxAge && !p.refresh.AllowN(now, 1):
			p.mu.Unlock()
			return nil, fmt.Errorf("%w: no key %q at the provider", ErrUnknownKey, kid)
		}
		call = &fetchCall{done: make(chan struct{})}
		p.inflight = call
		go p.fetch(context.WithoutCancel(ctx), call)
	}
	p.mu.Unlock()

	select {
	case <-call.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if call.err != nil {
		return p.fallback(cached, kid, alg, call.err)
	}
	k, ok := call.keys[kid]
	if !ok {
		return nil, fmt.Errorf("%w: no key %q at the provider", ErrUnknownKey, kid)
	}
	return pick(k, kid, alg)
}

// fallback serves a key from an older fetch when a fetch failed: a provider
// that is briefly down does not stop tokens signed with keys we know.
func (p *Provider) fallback(cached map[string]remoteKey, kid, alg string, err error) (any, error) {
	if k, ok := cached[kid]; ok {
		return pick(k, kid, alg)
	}
	if cached != nil {
		return nil, fmt.Errorf("%w: no key %q among those fetched before (fetching again failed: %v)", ErrUnknownKey, kid, err)
	}
	return nil, fmt.Errorf("%w: %v", ErrProviderUnavailable, err)
}

func pick(k remoteKey, kid, alg string) (any, error) {
	if string(k.alg) != alg {
		return nil, fmt.Errorf("%w: provider key %s is for %s, token says %s", ErrAlgorithm, kid, k.alg, alg)
	}
	return k.public, nil
}

// fetch runs one fetch for call and publishes its outcome.
func (p *Provider) fetch(ctx context.Context, call *fetchCall) {
	ctx, cancel := context.WithTimeout(ctx, p.fetchTimeout)
	defer cancel()
	p.mu.Lock()
	jwksURL := p.jwksURL
	p.mu.Unlock()
	keys, jwksURL, err := p.load(ctx, jwksURL)
	now := p.now()
	p.mu.Lock()
	if err == nil {
		p.keys, p.fetched, p.failed, p.lastErr, p.jwksURL = keys, now, time.Time{}, nil, jwksURL
	} else {
		p.failed, p.lastErr = now, err
		p.logger.LogAttrs(ctx, slog.LevelWarn, "tokens: fetching provider keys failed",
			slog.String("issuer", p.issuer), slog.String("error", err.Error()))
	}
	p.inflight = nil
	call.keys, call.err = keys, err
	p.mu.Unlock()
	close(call.done)
}

// load fetches the keys, discovering their URL first if it is not known.
func (p *Provider) load(ctx context.Context, jwksURL string) (map[string]remoteKey, string, error) {
	if jwksURL == "" {
		var doc struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := p.getJSON(ctx, p.discoveryURL, &doc); err != nil {
			return nil, "", fmt.Errorf("tokens: discovery: %w", err)
		}
		if doc.Issuer != p.issuer {
			return nil, "", fmt.Errorf("tokens: discovery: document is for issuer %q, not %q", doc.Issuer, p.issuer)
		}
		if err := p.checkURL("jwks_uri", doc.JWKSURI); err != nil {
			return nil, "", fmt.Errorf("tokens: discovery: %w", err)
		}
		jwksURL = doc.JWKSURI
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := p.getJSON(ctx, jwksURL, &set); err != nil {
		return nil, "", fmt.Errorf("tokens: keys: %w", err)
	}
	keys := make(map[string]remoteKey, len(set.Keys))
	for i, raw := range set.Keys {
		var j JWK
		if err := json.Unmarshal(raw, &j); err != nil {
			p.logger.Debug("tokens: provider key skipped", "index", i, "error", err.Error())
			continue
		}
		if j.KeyID == "" || (j.Use != "" && j.Use != "sig") {
			continue
		}
		pub, alg, err := j.publicKey()
		if err != nil {
			p.logger.Debug("tokens: provider key skipped", "kid", j.KeyID, "error", err.Error())
			continue
		}
		if !slices.Contains(p.algorithms, string(alg)) {
			continue
		}
		if _, dup := keys[j.KeyID]; dup {
			return nil, "", fmt.Errorf("tokens: keys: kid %q appears twice", j.KeyID)
		}
		keys[j.KeyID] = remoteKey{public: pub, alg: alg}
	}
	if len(keys) == 0 {
		return nil, "", fmt.Errorf("tokens: keys: %s has no usable signing key for %v", jwksURL, p.algorithms)
	}
	return keys, jwksURL, nil
}

func (p *Provider) getJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxProviderDocument))
		return fmt.Errorf("GET %s: status %s", u, resp.Status)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		return fmt.Errorf("GET %s: content type %q is not JSON", u, mt)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxProviderDocument+1))
	if err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	if len(body) > maxProviderDocument {
		return fmt.Errorf("GET %s: larger than %d bytes", u, maxProviderDocument)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	return nil
}
