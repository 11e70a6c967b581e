package tokens

// Outcomes of a token request, as [Config.Observe] is told them. The set is
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

// Outcomes lists every outcome [Config.Observe] may be told.
func Outcomes() []string {
	return []string{OutcomeIssued, OutcomeBadCredentials, OutcomeInvalidToken, OutcomeRateLimited, OutcomeError}
}

// observe tells the host's Observe function, if any, how a request on
// route ended.
func (h *Handler) observe(route, outcome string) {
	if h.observeFn != nil {
		h.observeFn(route, outcome)
	}
}
