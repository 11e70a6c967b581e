// Package middleware holds scorehub's composable HTTP pieces, each a
// func(http.Handler) http.Handler a host puts between its mux and
// scorehub's handlers:
//
//   - [Bearer] authenticates requests by an idToken in the Authorization
//     header (RFC 6750) and hands the verified claims to the handler
//     ([ClaimsFrom]); [RequireAdmin] checks them. The
//     check of the token itself is the pure [TokenVerifier] it is given,
//     tokens.Verifier.Verify(ctx, raw).
//   - [Credentials] checks every kind of credential AI Hub's clients send
//     against a web API group's policy ([registry.AuthPolicy]): HTTP Basic
//     (through an accounts.PasswordCache, so bcrypt runs once a minute per
//     user), "apitoken <token>" and Bearer (an idToken, or an access token
//     of an OpenID Connect provider). [Credentials.Authorize] is the one
//     check for scoring and jobs; [Credentials.Middleware] takes any kind in
//     front of a route. Public groups stay open; protected ones take the
//     kinds they list, of a caller in one of their user groups if they name
//     any. A service that takes bearer idTokens only configures no other
//     kind.
//   - [BodyLimit], [AccessLog] (log/slog, or text lines it writes itself),
//     [CORS] and [CleanPath] (a JSON 404 for paths with dot segments,
//     where a mux would redirect).
//   - [LogWriter] is not middleware but the writer for its output: it
//     joins the log lines that arrive while one is being written, so that
//     an access record per request does not cost a system call each.
//   - [CloseChunked] closes an HTTP/1.1 connection after a request with a
//     Transfer-Encoding, as RFC 9112 §6.1 requires when one also carries a
//     Content-Length, which net/http does not do and hides from handlers.
//     Hosts serving HTTP/1.1 should put it outermost: without it a request
//     framed both ways can smuggle another behind it past a proxy that
//     frames by Content-Length.
//
// Where it sits in the data flow:
//
//	CloseChunked → host mux → AccessLog → CORS → BodyLimit → Bearer → RequireAdmin
//	         → management handler
//	host mux → … → scoring handler → Credentials.Authorize (only for protected groups)
//
// That order is the one to prefer: the access log sees every request, and
// CORS preflights (which carry no credentials) are answered before
// authentication. The pieces do not depend on their order for
// correctness: the access log learns the token's subject even when Bearer
// runs inside it.
//
// Every refusal is one [*problem.Error] that carries its whole answer,
// written through internal/httperr as {"error":{"type":…,"message":…}},
// and the headers it needs: the WWW-Authenticate challenge of an
// authentication refusal, the Retry-After of a rate limit. The scoring
// handler writes Credentials' refusals the same way; their 401s carry one
// challenge per kind the group takes. The codes of the refusals, besides
// body_too_large and internal_error:
//
//	unauthorized     401 no credentials the resource accepts (a bare Bearer challenge)
//	invalid_request  400 credentials malformed or sent in a way that is refused (RFC 6750 invalid_request)
//	invalid_token    401 the token expired, is not valid yet, or is not valid at all (RFC 6750 invalid_token)
//	forbidden        403 the token is valid but does not grant what the request needs (RFC 6750 insufficient_scope)
//	rate_limited     429 too many requests, with Retry-After
//	cors_rejected    403 a CORS preflight asked for an origin, method or header that is not allowed
//
// Every middleware the package returns is safe for concurrent use by any
// number of requests; configurations are read once, at construction.
//
// The package depends on tokens for the claims, the verification errors and
// the shape of a rate limit, and on a [TokenVerifier] interface that
// *tokens.Verifier satisfies, so it can be tested with fakes.
package middleware
