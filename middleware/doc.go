// Package middleware holds scorehub's composable HTTP pieces, each a
// func(http.Handler) http.Handler a host puts between its mux and
// scorehub's handlers:
//
//   - [Bearer] authenticates requests by an idToken in the Authorization
//     header (RFC 6750) and hands the verified claims to the handler
//     ([ClaimsFrom]); [RequireAdmin] and [RequireGroup] check them. The
//     check of the token itself is the pure [TokenVerifier] it is given,
//     tokens.Verifier.Verify(ctx, raw).
//   - [ScoringAuth] is the same check shaped for the scoring handler's
//     per-group policy ([registry.AuthPolicy]): public groups stay open,
//     token-only groups need a valid idToken, in one of the listed user
//     groups if the group names any.
//   - [RateLimit] (a token bucket per client, the client named and the
//     bucket shaped as the token service's own limits), [BodyLimit], [RequestID],
//     [AccessLog] (log/slog), [Recover] (a panic becomes a JSON 500),
//     [CORS] and [CleanPath] (a JSON 404 for paths with dot segments,
//     where a mux would redirect).
//
// Where it sits in the data flow:
//
//	host mux → RequestID → AccessLog → Recover → CORS → RateLimit → BodyLimit
//	         → Bearer → RequireAdmin / RequireGroup → management handler
//	host mux → … → scoring handler → ScoringAuth (only for token-only groups)
//
// That order is the one [Chain] reads best in and the one to prefer: the
// request ID and access log see every request, panics anywhere below are
// answered in JSON, CORS preflights (which carry no credentials) are
// answered before authentication, and the rate limit caps how much token
// verification an anonymous client can cause. The pieces do not depend on
// their order for correctness: the access log learns the request ID and the
// token's subject even when RequestID and Bearer run inside it.
//
// Every refusal is one error value that carries its whole answer, written
// through internal/httperr as {"error":{"type":…,"message":…}} with one of
// the stable codes below or httperr's own, and the headers it needs: the
// WWW-Authenticate challenge of an authentication refusal, the Retry-After
// of a rate limit. The scoring handler writes ScoringAuth's refusals the
// same way, so it sends the same challenge Bearer does.
//
// Every middleware the package returns is safe for concurrent use by any
// number of requests; configurations are read once, at construction.
//
// The package depends on tokens for the claims, the verification errors and
// the shape of a rate limit, and on a [TokenVerifier] interface that
// *tokens.Verifier satisfies, so it can be tested with fakes.
package middleware
