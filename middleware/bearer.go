package middleware

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/internal/keyedlimit"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/tokens"
)

// TokenVerifier checks a raw bearer token and returns what it says: the
// pure check [Bearer] and [Credentials] put in front of handlers.
// *tokens.Verifier implements it. Errors match the tokens package's
// sentinels (tokens.ErrExpired, tokens.ErrSignature, …); any other error is
// taken as a failure of the verifier itself. Implementations must be safe
// for concurrent use.
type TokenVerifier interface {
	Verify(ctx context.Context, raw string) (*tokens.Claims, error)
}

var _ TokenVerifier = (*tokens.Verifier)(nil)

// DefaultRealm is the realm of challenges when [BearerConfig.Realm] is
// empty.
const DefaultRealm = "scorehub"

// maxFormScan bounds how much of a form-encoded body is read to look for a
// refused access_token field.
const maxFormScan = 64 << 10

// BearerConfig configures bearer-token authentication: [Bearer] in front of
// handlers, [CredentialsConfig] in front of the scoring handler's groups.
type BearerConfig struct {
	// Verifier checks tokens. Required.
	Verifier TokenVerifier
	// Realm names the protection space in WWW-Authenticate challenges.
	// Empty means DefaultRealm. It must be printable ASCII.
	Realm string
	// Logger receives refused credentials (401, 403, and 400 for a token
	// sent the wrong way): at warn level for a token presented and refused,
	// at info level for a request without usable credentials, naming the
	// route, the reason, the client and the subject when known, never the
	// token. It also receives failures of the verifier (at error level). Nil
	// means slog.Default().
	Logger *slog.Logger
	// TrustedProxies are the reverse proxies whose X-Forwarded-For entries
	// are believed when a refusal's record names the client: it is the
	// last address before them. None by default: the client is the
	// request's RemoteAddr, as any client can send X-Forwarded-For.
	TrustedProxies []netip.Prefix
}

// authenticator checks the bearer token of requests (RFC 6750, header
// method only) for [Bearer] and [Credentials], with the refusals [Bearer]
// lists. It is safe for concurrent use.
type authenticator struct {
	verifier TokenVerifier
	realm    string
	logger   *slog.Logger
	trusted  []netip.Prefix

	errMissing, errScheme                             *problem.Error
	errQuery, errForm, errMultiple, errMalformed      *problem.Error
	errNoToken                                        *problem.Error
	errBodyRead                                       *problem.Error
	errExpired, errNotYet, errInvalid, errNotInGroups *problem.Error
	errRevoked                                        *problem.Error
}

// newAuthenticator returns an authenticator for cfg. It fails if the
// verifier is missing or the realm cannot be sent in a header.
func newAuthenticator(cfg BearerConfig) (*authenticator, error) {
	if cfg.Verifier == nil {
		return nil, errors.New("middleware: bearer authentication needs a Verifier")
	}
	realm := cfg.Realm
	if realm == "" {
		realm = DefaultRealm
	}
	if !printableASCII(realm) {
		return nil, fmt.Errorf("middleware: realm %q must be printable ASCII", realm)
	}
	if err := keyedlimit.CheckProxies(cfg.TrustedProxies); err != nil {
		return nil, fmt.Errorf("middleware: %w", err)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	bare := httperr.BearerChallenge(realm, "", "")
	badRequest := func(msg string) *problem.Error {
		return newAuthError(problem.InvalidRequest, msg, httperr.BearerChallenge(realm, codeInvalidRequest, msg))
	}
	badToken := func(msg string) *problem.Error {
		return newAuthError(problem.InvalidToken, msg, httperr.BearerChallenge(realm, codeInvalidToken, msg))
	}
	return &authenticator{
		verifier:       cfg.Verifier,
		realm:          realm,
		logger:         logger,
		trusted:        slices.Clone(cfg.TrustedProxies),
		errMissing:     newAuthError(problem.Unauthorized, msgMissing, bare),
		errScheme:      newAuthError(problem.Unauthorized, msgScheme, bare),
		errQuery:       badRequest(msgQuery),
		errForm:        badRequest(msgForm),
		errMultiple:    badRequest(msgMultiple),
		errMalformed:   badRequest(msgMalformed),
		errNoToken:     badRequest(msgNoBearer),
		errBodyRead:    badRequest(msgBodyRead),
		errExpired:     badToken(msgExpired),
		errNotYet:      badToken(msgNotYet),
		errInvalid:     badToken(msgInvalid),
		errRevoked:     badToken(msgRevoked),
		errNotInGroups: forbidden(realm, msgGroup),
	}, nil
}

// Bearer returns middleware that lets a request through only with a valid
// bearer token (RFC 6750, header method only), and gives the handler its
// claims ([ClaimsFrom]). It fails if the verifier is missing or the realm
// cannot be sent in a header. The middleware is safe for concurrent use.
//
// Refusals, all written as JSON errors:
//
//   - no Authorization header, or one with another scheme (Basic …):
//     401 unauthorized, WWW-Authenticate: Bearer realm="…" with no error
//     attribute (RFC 6750 §3.1: a client that did not try Bearer gets no
//     error information);
//   - an access_token in the URL query or in a form-encoded body, more than
//     one Authorization header, or a header that is not "Bearer" plus one
//     token (RFC 6750 b64token syntax): 400 invalid_request; a token in the
//     URL is never used, since URLs end up in logs and browser history;
//   - a token the verifier refuses: 401 invalid_token, with
//     error_description "the token expired", "the token is not valid yet",
//     "the token was revoked" (its holder was removed or changed password)
//     or "the token is invalid" and nothing more about why;
//   - a verifier that fails for any other reason: 500 internal_error (the
//     cause is logged), or the status of a context error.
//
// Each refusal is logged as [BearerConfig.Logger] says.
//
// When r has a form-encoded body, Bearer reads up to 64 KiB of it to look
// for an access_token field and puts what it read back in front of r.Body.
// On success it tells an enclosing [AccessLog] the token's subject.
func Bearer(cfg BearerConfig) (func(http.Handler) http.Handler, error) {
	a, err := newAuthenticator(cfg)
	if err != nil {
		return nil, err
	}
	return a.middleware, nil
}

// middleware lets a request through to next only with a valid bearer token,
// with the token's claims in its context ([ClaimsFrom]).
func (a *authenticator) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		claims, err := a.authenticate(r)
		if err != nil {
			logger := a.logger
			if a.logRefusal(r, err, "") {
				logger = discard // logged above, at its own level
			}
			httperr.Write(w, r, logger, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(withAuth(r.Context(), claims, a)))
	})
}

// authenticate returns the claims of r's bearer token. A refusal is an
// *problem.Error with its challenge; any other error is a failure of the
// verifier, to be answered as httperr maps it.
func (a *authenticator) authenticate(r *http.Request) (*tokens.Claims, error) {
	raw, err := a.credentials(r)
	if err != nil {
		return nil, err
	}
	claims, err := a.verifier.Verify(r.Context(), raw)
	if err != nil {
		return nil, a.refuseToken(err)
	}
	if claims == nil {
		return nil, errors.New("middleware: verifier returned neither claims nor an error")
	}
	if li := logInfoFrom(r.Context()); li != nil {
		li.subject = claims.Subject
	}
	return claims, nil
}

// credentials returns the token r carries in its one Authorization header,
// or the refusal.
func (a *authenticator) credentials(r *http.Request) (string, error) {
	if hasAccessToken(r.URL.RawQuery, true) {
		return "", a.errQuery
	}
	h := r.Header["Authorization"]
	if len(h) > 1 {
		return "", a.errMultiple
	}
	inForm, err := formHasAccessToken(r)
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) || httperr.From(err).Status == http.StatusRequestTimeout {
			return "", err // 413, or 408 for the server's read timeout
		}
		return "", a.errBodyRead.Wrap(err)
	}
	if inForm {
		return "", a.errForm
	}
	if len(h) == 0 {
		return "", a.errMissing
	}
	scheme, rest, _ := strings.Cut(h[0], " ")
	if !isToken(scheme) {
		return "", a.errMalformed
	}
	if !strings.EqualFold(scheme, "Bearer") {
		return "", a.errScheme
	}
	raw := strings.TrimLeft(rest, " ")
	if noToken(raw) {
		return "", a.errNoToken
	}
	if !isB64Token(raw) {
		return "", a.errMalformed
	}
	return raw, nil
}

// refuseToken maps a verification error to what the client is told.
func (a *authenticator) refuseToken(err error) error {
	if refusal := a.tokenRefusal(err); refusal != nil {
		return refusal
	}
	return fmt.Errorf("middleware: verify token: %w", err)
}

// tokenRefusal is the refusal of a token that err says is bad, or nil when
// err is a failure of the verifier, whatever code that error carries.
func (a *authenticator) tokenRefusal(err error) *problem.Error {
	switch {
	case errors.Is(err, tokens.ErrExpired):
		return a.errExpired.Wrap(err)
	case errors.Is(err, tokens.ErrNotYetValid):
		return a.errNotYet.Wrap(err)
	case errors.Is(err, tokens.ErrMissing):
		return a.errMissing.Wrap(err)
	case errors.Is(err, tokens.ErrRevoked):
		return a.errRevoked.Wrap(err)
	case errors.Is(err, tokens.ErrTooLarge), errors.Is(err, tokens.ErrMalformed),
		errors.Is(err, tokens.ErrAlgorithm), errors.Is(err, tokens.ErrUnknownKey),
		errors.Is(err, tokens.ErrSignature), errors.Is(err, tokens.ErrIssuer),
		errors.Is(err, tokens.ErrAudience), errors.Is(err, tokens.ErrClaims):
		return a.errInvalid.Wrap(err)
	}
	return nil
}

// isToken reports whether s is an RFC 9110 token, as an auth-scheme is.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// b64TokenLo and b64TokenHi are the b64token characters other than '=' as
// bit sets over ASCII 0–63 and 64–127.
const (
	b64TokenLo uint64 = 1<<'+' | 1<<'-' | 1<<'.' | 1<<'/' | (1<<10-1)<<'0'
	b64TokenHi uint64 = (1<<26-1)<<('A'-64) | 1<<('_'-64) | (1<<26-1)<<('a'-64) | 1<<('~'-64)
)

// isB64Token reports whether s is an RFC 6750 b64token:
// 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func isB64Token(s string) bool {
	end := len(s)
	for end > 0 && s[end-1] == '=' {
		end--
	}
	if end == 0 {
		return false
	}
	for i := 0; i < end; i++ {
		c := s[i]
		set := b64TokenLo
		if c >= 64 {
			set = b64TokenHi
		}
		if c >= 128 || set>>(c&63)&1 == 0 {
			return false
		}
	}
	return true
}

// HasCredentials reports whether r carries credentials where a client may
// send them: an Authorization header, or an access_token in the query
// (which [Bearer] and [Credentials] refuse there). A route that anyone may
// call serves a request without them as the anonymous, and checks any
// other, so that credentials sent are never ignored.
func HasCredentials(r *http.Request) bool {
	return len(r.Header.Values("Authorization")) > 0 || hasAccessToken(r.URL.RawQuery, true)
}

// hasAccessToken reports whether the URL-encoded form q has an
// access_token field. Unless complete, the last field of q may be cut
// short and is not looked at.
func hasAccessToken(q string, complete bool) bool {
	if !complete {
		i := strings.LastIndexByte(q, '&')
		if i < 0 {
			return false
		}
		q = q[:i]
	}
	for q != "" {
		var field string
		field, q, _ = strings.Cut(q, "&")
		key, _, _ := strings.Cut(field, "=")
		if key == "access_token" {
			return true
		}
		if strings.ContainsAny(key, "%+") {
			if k, err := url.QueryUnescape(key); err == nil && k == "access_token" {
				return true
			}
		}
	}
	return false
}

// formHasAccessToken reports whether r has a form-encoded body with an
// access_token field in its first maxFormScan bytes. What it reads, it
// puts back in front of r.Body.
func formHasAccessToken(r *http.Request) (bool, error) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return false, nil
	}
	mediaType, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
	if !strings.EqualFold(strings.TrimSpace(mediaType), "application/x-www-form-urlencoded") {
		return false, nil
	}
	size := int64(maxFormScan)
	if r.ContentLength > 0 && r.ContentLength < size {
		size = r.ContentLength
	}
	buf := make([]byte, size)
	n, err := io.ReadFull(r.Body, buf)
	complete := err == io.EOF || err == io.ErrUnexpectedEOF
	if err != nil && !complete {
		return false, fmt.Errorf("middleware: read form body: %w", err)
	}
	buf = buf[:n]
	if !complete && int64(n) == r.ContentLength {
		complete = true
	}
	r.Body = &replayBody{Reader: io.MultiReader(bytes.NewReader(buf), r.Body), body: r.Body}
	return hasAccessToken(string(buf), complete), nil
}

// replayBody reads what was already read from body, then the rest of body.
type replayBody struct {
	io.Reader
	body io.ReadCloser
}

func (b *replayBody) Close() error { return b.body.Close() }

type authKey struct{}

// authInfo is what Bearer leaves in a request's context.
type authInfo struct {
	claims *tokens.Claims
	// auth is the Bearer that accepted the claims, whose realm and logger
	// the checks behind it use; nil when the tests put them there.
	auth *authenticator
}

// realm is the realm of challenges about the claims, "" when the tests put
// them there.
func (i *authInfo) realm() string {
	if i.auth == nil {
		return ""
	}
	return i.auth.realm
}

func withAuth(ctx context.Context, c *tokens.Claims, a *authenticator) context.Context {
	return context.WithValue(ctx, authKey{}, &authInfo{claims: c, auth: a})
}

// ClaimsFrom returns the claims [Bearer] put in ctx.
func ClaimsFrom(ctx context.Context) (*tokens.Claims, bool) {
	info := authFrom(ctx)
	if info == nil || info.claims == nil {
		return nil, false
	}
	return info.claims, true
}
