package tokens

// Observer is told about every request on [PathTokenService],
// [PathExchange] or [PathRenew] that reached its handler, once, after the answer is
// written: the route's path and one of the Outcome constants. It is
// called from many goroutines at once and should return quickly; the
// metrics package implements it, as it implements scoring's observer of
// the same shape.
type Observer interface {
	ObserveToken(route, outcome string)
}

// Outcomes of a token request, as an [Observer] is told them. The set is
// fixed, so that a metric labelled with them stays bounded.
const (
	// OutcomeIssued: a token was issued.
	OutcomeIssued = "issued"
	// OutcomeBadCredentials: the token service got no usable HTTP Basic
	// credentials, or a wrong user name or password.
	OutcomeBadCredentials = "bad_credentials"
	// OutcomeInvalidToken: the exchange got no usable Bearer access token,
	// or one the provider's keys and rules refuse.
	OutcomeInvalidToken = "invalid_token"
	// OutcomeRateLimited: the client address or user name had no attempts
	// left; the answer was 429.
	OutcomeRateLimited = "rate_limited"
	// OutcomeError: the request could not be decided (the provider was
	// unreachable, the user store or the signing failed, the client left).
	OutcomeError = "error"
)

// observe tells the host's Observer, if any, how a request on route
// ended.
func (h *Service) observe(route, outcome string) {
	if h.observer != nil {
		h.observer.ObserveToken(route, outcome)
	}
}
