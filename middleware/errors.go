package middleware

import (
	"strings"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/tokens"
)

// RFC 6750 §3.1 error codes, as they appear in the challenge's error
// attribute.
const (
	codeInvalidRequest    = "invalid_request"
	codeInvalidToken      = "invalid_token"
	codeInsufficientScope = "insufficient_scope"
)

// msgWhereTokens tells a client without a token where one comes from.
const msgWhereTokens = "GET " + tokens.PathTokenService + " with Basic credentials issues one"

// Client-facing sentences. They double as RFC 6750 error_description
// values, which may not contain '"' or '\\' (a test holds them to that).
const (
	msgMissing   = "this request needs a bearer token in the Authorization header; " + msgWhereTokens
	msgScheme    = "the Authorization header must use the Bearer scheme"
	msgQuery     = "access tokens are not accepted in the URL query; send them in the Authorization header"
	msgForm      = "access tokens are not accepted in the request body; send them in the Authorization header"
	msgMultiple  = "the request has more than one Authorization header"
	msgMalformed = "the Authorization header must be the word Bearer, one space and one token"
	msgNoBearer  = "the Authorization header carries no token: Bearer is followed by nothing, or by null, undefined or None; check that the variable meant to hold the token is set"
	msgBodyRead  = "the request body could not be read"
	msgExpired   = "the token expired"
	msgNotYet    = "the token is not valid yet"
	msgInvalid   = "the token is invalid"
	msgRevoked   = "the token was revoked"
	msgAdmin     = "this request needs an administrator's token"
	msgGroup     = "the token's holder is not in a user group allowed here"

	msgGroupUser     = "the user of the Basic credentials is not in a user group allowed here"
	msgGroupAPIToken = "the owner of the API token is not in a user group allowed here"

	msgHeaderSyntax    = "the Authorization header must be a scheme, one space and the credentials"
	msgBasicSyntax     = "the Basic credentials must be the base64 of a user name, a colon and a password"
	msgBadPassword     = "the user name or password is not correct"
	msgTooManyFailures = "too many failed attempts; retry later"
	msgAPITokenSyntax  = "the Authorization header must be the word apitoken, one space and one token"
	msgNoAPIToken      = "the Authorization header carries no API token: apitoken is followed by nothing, or by null, undefined or None; check that the variable meant to hold the token is set"
	msgAPITokenInvalid = "the API token is not valid"
	msgAPITokenExpired = "the API token expired"
	msgAPITokenRevoked = "the API token was revoked: its owner was removed or changed"
	msgAPITokenGroup   = "this API token may not call the web API group "
	msgProviderDown    = "the identity provider cannot be reached to check the token; retry later"
)

// noToken reports whether the credentials after an Authorization scheme
// are none at all: nothing, or what a client's unset variable turns into
// (null, undefined, None, nil), so that the refusal says so rather than
// that a token is malformed or invalid.
func noToken(value string) bool {
	switch strings.ToLower(value) {
	case "", "null", "undefined", "none", "nil":
		return true
	}
	return false
}

// newAuthError is a request refused for its credentials: the answer the
// client gets, WWW-Authenticate challenge included, as one value that
// httperr.Write sends. A refusal of a token keeps the verification error
// as its cause (Wrap), so that errors.Is(err, tokens.ErrExpired) holds and
// the log says why.
func newAuthError(typ problem.Code, message, challenge string) *problem.Error {
	return httperr.New(typ, message).WithChallenge(challenge)
}

// printableASCII reports whether s is non-empty and holds only the
// characters a header's quoted-string can carry without ambiguity.
func printableASCII(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
