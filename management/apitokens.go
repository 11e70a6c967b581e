package management

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/tokens/accounts"
)

// apiTokenJSON is an API token as the API shows it: never its secret.
// expiresAt is null for a token that never expires, lastUsedAt for one
// never used.
type apiTokenJSON struct {
	ID           string     `json:"id"`
	Name         string     `json:"name"`
	Owner        string     `json:"owner"`
	WebAPIGroups []string   `json:"webApiGroups"`
	CreatedAt    time.Time  `json:"createdAt"`
	ExpiresAt    *time.Time `json:"expiresAt"`
	LastUsedAt   *time.Time `json:"lastUsedAt"`
}

// apiTokenCreatedJSON is the answer to POST /api/v1/apitokens: the token
// and, this once, its secret.
type apiTokenCreatedJSON struct {
	apiTokenJSON `json:",inline"`
	Token        string `json:"token"`
}

func apiTokenView(t accounts.APIToken) apiTokenJSON {
	v := apiTokenJSON{ID: t.ID, Name: t.Name, Owner: t.Owner, WebAPIGroups: t.WebAPIGroups, CreatedAt: t.CreatedAt}
	if v.WebAPIGroups == nil {
		v.WebAPIGroups = []string{}
	}
	v.ExpiresAt, v.LastUsedAt = timeOrNull(t.ExpiresAt), timeOrNull(t.LastUsedAt)
	return v
}

// apiTokenInput is the body of POST /api/v1/apitokens. An empty owner is
// the caller; a null or absent expiresAt never expires; no webApiGroups
// means any group.
type apiTokenInput struct {
	Name         string   `json:"name" validate:"required,max=128,nocontrol"`
	Owner        string   `json:"owner" validate:"omitempty,username"`
	ExpiresAt    *string  `json:"expiresAt" validate:"omitnil,timestamp"`
	WebAPIGroups []string `json:"webApiGroups" validate:"max=1000,unique,dive,name"`

	Unknown map[string]jsontext.Value `json:",unknown" validate:"-"`
}

func (in *apiTokenInput) unknown() []problem.FieldError { return unknownMembers("", in.Unknown) }

// expiry returns when the token expires, zero for never. The validator
// checked the format.
func (in *apiTokenInput) expiry() time.Time {
	if in.ExpiresAt == nil {
		return time.Time{}
	}
	t, _ := time.Parse(time.RFC3339, *in.ExpiresAt)
	return t
}

// createAPIToken is POST /api/v1/apitokens: 201 with the token, its secret
// shown this once, and its Location. A user without the admin claim may
// create tokens for themself only.
func (h *Handler) createAPIToken(w http.ResponseWriter, r *http.Request) error {
	c, err := claimsOf(r)
	if err != nil {
		return err
	}
	data, err := readBody(r, mediaJSON)
	if err != nil {
		return err
	}
	var in apiTokenInput
	if err := decodeStrict(data, &in); err != nil {
		return err
	}
	if err := h.check(&in); err != nil {
		return err
	}
	if in.Owner == "" {
		in.Owner = c.Subject
	}
	if !c.Admin && in.Owner != c.Subject {
		return errOtherOwner
	}
	st := h.reg.Snapshot().State()
	var missing []problem.FieldError
	for i, g := range in.WebAPIGroups {
		if _, ok := st.Group(g); !ok {
			missing = append(missing, problem.FieldError{Pointer: "/webApiGroups/" + strconv.Itoa(i), Message: "names no web API group: " + quote(g)})
		}
	}
	if len(missing) > 0 {
		return invalidReferences(missing)
	}
	t, secret, err := h.accounts.CreateAPIToken(r.Context(), accounts.NewAPIToken{
		Name: in.Name, Owner: in.Owner, ExpiresAt: in.expiry(), WebAPIGroups: in.WebAPIGroups,
	})
	if err != nil {
		return err
	}
	w.Header().Set("Location", "apitokens/"+t.ID)
	return writeJSON(w, http.StatusCreated, apiTokenCreatedJSON{apiTokenJSON: apiTokenView(t), Token: secret})
}

// listAPITokens is GET /api/v1/apitokens: sorted by owner, then creation,
// of one owner with ?owner=, one page at a time (?page=, from 0, and
// ?size=, 20 by default and at most 1000). Only an admin sees every
// owner's tokens; anyone else sees their own.
func (h *Handler) listAPITokens(w http.ResponseWriter, r *http.Request) error {
	c, err := claimsOf(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	page, size, err := pageParams(q)
	if err != nil {
		return err
	}
	owner := q.Get("owner")
	if _, given := q["owner"]; given && (owner == "" || !validUserName(owner)) {
		return httperr.New(problem.InvalidParameter, "the owner parameter must be a user name: 1 to 256 bytes, no colon and no control characters")
	}
	var all []accounts.APIToken
	for _, t := range h.accounts.APITokens() {
		if (owner == "" || t.Owner == owner) && (c.Admin || t.Owner == c.Subject) {
			all = append(all, t)
		}
	}
	return writeJSON(w, http.StatusOK, pageOf(all, page, size, apiTokenView))
}

// apiTokenOf returns the API token id if the caller may see it: its owner
// or an admin. To anyone else it does not exist (404), so that no one
// learns which IDs others hold.
func (h *Handler) apiTokenOf(r *http.Request, id string) (accounts.APIToken, error) {
	c, err := claimsOf(r)
	if err != nil {
		return accounts.APIToken{}, err
	}
	if id == hiddenSecret {
		return accounts.APIToken{}, errSecretInPath
	}
	if !registry.ValidName(id) {
		return accounts.APIToken{}, notFound("API token", id)
	}
	t, ok := h.accounts.APIToken(id)
	if !ok || !c.Admin && t.Owner != c.Subject {
		return accounts.APIToken{}, notFound("API token", id)
	}
	return t, nil
}

// getAPIToken is GET /api/v1/apitokens/{id}: the token without its secret.
func (h *Handler) getAPIToken(w http.ResponseWriter, r *http.Request) error {
	t, err := h.apiTokenOf(r, r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, apiTokenView(t))
}

// deleteAPIToken is DELETE /api/v1/apitokens/{id}: the token is refused
// from the next request on.
func (h *Handler) deleteAPIToken(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if _, err := h.apiTokenOf(r, id); err != nil {
		return err
	}
	if err := h.accounts.DeleteAPIToken(r.Context(), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// hideSecretInPath keeps an API token's secret sent in place of its ID
// (/api/v1/apitokens/scorehub_…) out of every log line: the request goes
// on with the secret cut from its path, and is answered 404.
func hideSecretInPath(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		if !strings.HasPrefix(id, accounts.APITokenPrefix) {
			next.ServeHTTP(w, r)
			return
		}
		r = r.Clone(r.Context())
		r.URL.Path = strings.TrimSuffix(r.URL.Path, id) + hiddenSecret
		r.URL.RawPath = ""
		r.SetPathValue("id", hiddenSecret)
		next.ServeHTTP(w, r)
	})
}

// hiddenSecret stands for a secret hideSecretInPath cut from a path; no
// ID is written so.
const hiddenSecret = accounts.APITokenPrefix + "(hidden)"

var errSecretInPath = httperr.New(problem.NotFound,
	"the path holds an API token's secret, not its ID; find the ID with GET /api/v1/apitokens, and revoke the token, as the secret has been sent in a URL")

var errOtherOwner = httperr.New(problem.Forbidden,
	"only an administrator may create an API token for another user").At("/owner")
