package tokens

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"unicode"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/problem"
)

// serveTokenService is GET PathTokenService: HTTP Basic credentials in, a
// token out as {"idToken":…,"expirationDate":…}.
//
// Rate limits are checked before any password is: attempts per client
// address, then the failure limits of package loginlimit (per address,
// per user name and address, and per user name across addresses, the last
// waived for an address the user logged in from before); a request past
// any is answered 429 without touching the password. Only a failure is
// charged to the failure limits, after the check, so a user's right
// password is refused from an address the user has logged in from only
// when that address has failed too often itself. Password checks queue for one of MaxConcurrentChecks slots,
// so a burst of logins cannot take every core.
func (h *Service) serveTokenService(w http.ResponseWriter, r *http.Request) {
	if len(r.Header.Values("Authorization")) > 1 {
		httperr.Write(w, r, h.logger, httperr.New(problem.InvalidRequest, "the request has more than one Authorization header"))
		h.observe(PathTokenService, OutcomeBadCredentials)
		return
	}
	name, password, ok := r.BasicAuth()
	if !ok || name == "" {
		httperr.Write(w, r, h.logger, h.basicChallenge("HTTP Basic credentials are required"))
		h.observe(PathTokenService, OutcomeBadCredentials)
		return
	}
	if !h.limitAddr(w, r) {
		h.observe(PathTokenService, OutcomeRateLimited)
		return
	}
	client := h.client(r)
	if d, ok := h.failures.Check(name, client, h.now()); !ok {
		httperr.Write(w, r, h.logger, tooMany(d))
		h.observe(PathTokenService, OutcomeRateLimited)
		return
	}

	select {
	case h.checks <- struct{}{}:
	case <-r.Context().Done():
		httperr.Write(w, r, h.logger, r.Context().Err())
		h.observe(PathTokenService, OutcomeError)
		return
	}
	p, err := h.users.Authenticate(r.Context(), name, password)
	<-h.checks

	switch {
	case errors.Is(err, ErrBadCredentials):
		h.failures.Failed(name, client, h.now())
		h.logger.LogAttrs(r.Context(), slog.LevelInfo, "tokens: authentication failed",
			slog.String("user_prefix", namePrefix(name)), slog.String("user_ref", h.nameRef(name)),
			slog.String("client", client))
		httperr.Write(w, r, h.logger, h.basicChallenge("the user name or password is not correct"))
		h.observe(PathTokenService, OutcomeBadCredentials)
		return
	case err != nil:
		httperr.Write(w, r, h.logger, err)
		h.observe(PathTokenService, OutcomeError)
		return
	}
	h.failures.Succeeded(name, client)
	h.observe(PathTokenService, h.issue(w, r, p, "basic", true))
}

// basicChallenge is the 401 with a Basic challenge. message is the same
// whether the user exists or not.
func (h *Service) basicChallenge(message string) error {
	return httperr.New(problem.Unauthorized, message).WithChallenge(`Basic realm="` + h.realm + `", charset="UTF-8"`)
}

// namePrefixRunes is how much of a refused user name is logged. A name
// that failed may be a password typed into the wrong field, so no more is
// kept than an operator needs to recognise a name they know.
const namePrefixRunes = 2

// namePrefix is the start of a refused user name for the log: at most
// namePrefixRunes runes, with anything unprintable replaced, so that a
// name of any size or content makes a short line that cannot forge others.
func namePrefix(name string) string {
	var b strings.Builder
	n := 0
	for _, r := range name {
		if n == namePrefixRunes {
			b.WriteString("…")
			break
		}
		if !unicode.IsPrint(r) {
			r = '?'
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// nameRef is a short keyed hash of a refused user name for the log: the
// failures of one name share it, so they can be counted and followed,
// while the name cannot be recovered or guessed from it offline. The key
// is drawn when the Service is made, so refs change on a restart.
func (h *Service) nameRef(name string) string {
	m := hmac.New(sha256.New, h.refKey[:])
	m.Write([]byte(name))
	return hex.EncodeToString(m.Sum(nil)[:8])
}
