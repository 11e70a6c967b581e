package management

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/middleware"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/tokens"
	"github.com/scorehub/scorehub/tokens/accounts"
)

// accountRoutes are the routes of users and API tokens, served when
// [Config.Accounts] is set.
func accountRoutes() []route {
	return []route{
		{http.MethodGet, "/api/v1/users", adminReadAccess, (*Handler).listUsers},
		{http.MethodPost, "/api/v1/users", writeAccess, (*Handler).createUser},
		{http.MethodGet, "/api/v1/users/{name}", ownReadAccess, (*Handler).getUser},
		{http.MethodPut, "/api/v1/users/{name}", writeAccess, (*Handler).putUser},
		{http.MethodPatch, "/api/v1/users/{name}", ownWriteAccess, (*Handler).patchUser},
		{http.MethodDelete, "/api/v1/users/{name}", writeAccess, (*Handler).deleteUser},

		{http.MethodGet, "/api/v1/apitokens", ownReadAccess, (*Handler).listAPITokens},
		{http.MethodPost, "/api/v1/apitokens", ownWriteAccess, (*Handler).createAPIToken},
		{http.MethodGet, apiTokenPattern, ownReadAccess, (*Handler).getAPIToken},
		{http.MethodDelete, apiTokenPattern, ownWriteAccess, (*Handler).deleteAPIToken},
	}
}

// apiTokenPattern is the address of one API token, which
// [hideSecretInPath] guards.
const apiTokenPattern = "/api/v1/apitokens/{id}"

// maxPasswordBytes is the longest password bcrypt reads; accounts.Book
// refuses longer ones rather than ignore the rest.
const maxPasswordBytes = 72

// userJSON is a user as the API shows it: never the password. A user of
// the users file has revision 0 and null times.
type userJSON struct {
	Name      string     `json:"name"`
	Admin     bool       `json:"admin"`
	Groups    []string   `json:"groups"`
	Source    string     `json:"source"`
	Revision  uint64     `json:"revision"`
	CreatedAt *time.Time `json:"createdAt"`
	UpdatedAt *time.Time `json:"updatedAt"`
}

func userView(a accounts.Account) userJSON {
	v := userJSON{Name: a.Name, Admin: a.Admin, Groups: a.Groups, Source: a.Source, Revision: a.Revision}
	if v.Groups == nil {
		v.Groups = []string{}
	}
	v.CreatedAt, v.UpdatedAt = timeOrNull(a.CreatedAt), timeOrNull(a.UpdatedAt)
	return v
}

// setUserETag sends a stored user's revision as its ETag; a user of the
// users file has none.
func setUserETag(w http.ResponseWriter, a accounts.Account) {
	if a.Source == accounts.SourceAPI {
		setETag(w, a.Revision)
	}
}

// userInput is the body of POST /api/v1/users and PUT
// /api/v1/users/{name}, and what a PATCH's members are read as. The
// password is required to create a user; a PUT without one keeps it.
type userInput struct {
	Name     string   `json:"name" validate:"required,username"`
	Password *string  `json:"password" validate:"omitnil,password"`
	Admin    bool     `json:"admin"`
	Groups   []string `json:"groups" validate:"max=1000,unique,dive,required,max=256,nocontrol"`
	Revision uint64   `json:"revision"`

	// CurrentPassword is read from a PATCH only; elsewhere it is unknown.
	CurrentPassword *string `json:"currentPassword" validate:"omitnil,password"`

	Source    jsontext.Value `json:"source" validate:"-"`
	CreatedAt jsontext.Value `json:"createdAt" validate:"-"`
	UpdatedAt jsontext.Value `json:"updatedAt" validate:"-"`

	Unknown map[string]jsontext.Value `json:",unknown" validate:"-"`

	patch bool // read from a PATCH: currentPassword is a member
}

func (in *userInput) unknown() []problem.FieldError {
	out := unknownMembers("", in.Unknown)
	if in.CurrentPassword != nil && !in.patch {
		out = append(out, problem.FieldError{Pointer: "/currentPassword", Message: "is not a member of this object; it is sent in a PATCH"})
	}
	return out
}

// groups returns the user groups the body gives, none for null.
func (in *userInput) groups() []string {
	if in.Groups == nil {
		return []string{}
	}
	return in.Groups
}

// validUserName is the rule of tokens for user names: at most 256 bytes
// of UTF-8, no colon (which ends the name in HTTP Basic) and no control
// characters.
func validUserName(s string) bool {
	return len(s) <= 256 && utf8.ValidString(s) && !strings.Contains(s, ":") &&
		strings.IndexFunc(s, unicode.IsControl) < 0
}

// decodeUser reads a user body. urlName, when not empty, is the name the
// URL gives, which the body may leave out but not contradict.
func (h *Handler) decodeUser(data []byte, urlName string, extra func(in *userInput) []problem.FieldError) (*userInput, error) {
	in := &userInput{}
	if err := decodeStrict(data, in); err != nil {
		return nil, err
	}
	var fields []problem.FieldError
	if urlName != "" {
		switch {
		case in.Name == "":
			in.Name = urlName
		case in.Name != urlName:
			fields = append(fields, problem.FieldError{Pointer: "/name", Message: "must be the name in the URL, " + quote(urlName) + ": a user cannot be renamed"})
		}
	}
	if extra != nil {
		fields = append(fields, extra(in)...)
	}
	if err := h.check(in, fields...); err != nil {
		return nil, err
	}
	return in, nil
}

// claimsOf returns the claims of the token Bearer accepted for r.
func claimsOf(r *http.Request) (*tokens.Claims, error) {
	c, _ := middleware.ClaimsFrom(r.Context())
	if c == nil {
		return nil, errNoClaims
	}
	return c, nil
}

// listUsers is GET /api/v1/users: the stored users and those of the users
// file, sorted by name, one page at a time (?page=, from 0, and ?size=, 20
// by default and at most 1000).
func (h *Handler) listUsers(w http.ResponseWriter, r *http.Request) error {
	page, size, err := pageParams(r.URL.Query())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, pageOf(h.accounts.Users(), page, size, userView))
}

// getUser is GET /api/v1/users/{name}: an admin reads any user, anyone
// else only themself.
func (h *Handler) getUser(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	c, err := claimsOf(r)
	if err != nil {
		return err
	}
	if !c.Admin && c.Subject != name {
		return errOtherUser
	}
	a, ok := h.accounts.User(name)
	if !ok {
		return notFound("user", name)
	}
	setUserETag(w, a)
	return writeJSON(w, http.StatusOK, userView(a))
}

// createUser is POST /api/v1/users: 201 with Location, or 409
// already_exists, also for the name of a user of the users file.
func (h *Handler) createUser(w http.ResponseWriter, r *http.Request) error {
	data, err := readBody(r, mediaJSON)
	if err != nil {
		return err
	}
	in, err := h.decodeUser(data, "", func(in *userInput) []problem.FieldError {
		var out []problem.FieldError
		if in.Password == nil {
			out = append(out, problem.FieldError{Pointer: "/password", Message: "is required"})
		}
		if in.Revision != 0 {
			out = append(out, problem.FieldError{Pointer: "/revision", Message: "must be absent or 0 when creating"})
		}
		return out
	})
	if err != nil {
		return err
	}
	a, err := h.accounts.CreateUser(r.Context(), accounts.NewUser{Name: in.Name, Password: *in.Password, Admin: in.Admin, Groups: in.groups()})
	if err != nil {
		return err
	}
	w.Header().Set("Location", "users/"+url.PathEscape(a.Name))
	setUserETag(w, a)
	return writeJSON(w, http.StatusCreated, userView(a))
}

// putUser is PUT /api/v1/users/{name}: replace a user's admin flag and
// groups, and its password when the body gives one. POST creates users.
func (h *Handler) putUser(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	data, err := readBody(r, mediaJSON)
	if err != nil {
		return err
	}
	in, err := h.decodeUser(data, name, nil)
	if err != nil {
		return err
	}
	c, err := claimsOf(r)
	if err != nil {
		return err
	}
	if c.Subject == name && !in.Admin {
		return errSelfDemote
	}
	pre, err := parsePrecondition(r, in.Revision, "/revision")
	if err != nil {
		return err
	}
	groups := in.groups()
	return h.updateUser(w, r, name, pre, accounts.UserUpdate{Password: in.Password, Admin: &in.Admin, Groups: &groups})
}

// updateUser applies u to the user name under pre and answers with the
// user. pre is checked on the user as the update finds it, again after a
// write that came in between, so that If-Match names the revision changed.
func (h *Handler) updateUser(w http.ResponseWriter, r *http.Request, name string, pre precondition, u accounts.UserUpdate) error {
	stored, err := h.accounts.UpdateUserIf(r.Context(), name, pre.user(name), u)
	if err != nil {
		return userError(err, name)
	}
	setUserETag(w, stored)
	return writeJSON(w, http.StatusOK, userView(stored))
}

// patchUser is PATCH /api/v1/users/{name}: a JSON merge patch (RFC 7396)
// of the user as GET shows it, plus password and currentPassword. An admin
// may change any member of any user; anyone else only their own password,
// sending password and currentPassword alone. A null admin is false, null
// groups are none; a password cannot be removed.
func (h *Handler) patchUser(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	c, err := claimsOf(r)
	if err != nil {
		return err
	}
	if !c.Admin && c.Subject != name {
		return errOtherUser
	}
	data, err := readBody(r, mediaMergePatch)
	if err != nil {
		return err
	}
	patch, err := decodePatch(data)
	if err != nil {
		return err
	}
	if !c.Admin {
		for m := range patch {
			if m != "password" && m != "currentPassword" {
				return errOwnPasswordOnly
			}
		}
	}
	patchRev, err := patchRevision(patch)
	if err != nil {
		return err
	}
	in, err := h.decodeUserPatch(patch, name, !c.Admin)
	if err != nil {
		return err
	}
	if c.Subject == name && hasMember(patch, "admin") && !in.Admin {
		return errSelfDemote
	}
	pre, err := parsePrecondition(r, patchRev, "/revision")
	if err != nil {
		return err
	}
	if in.CurrentPassword != nil {
		if _, exists := h.accounts.User(name); !exists {
			return notFound("user", name)
		}
		if d, ok := h.wrongPasswords.Check(name, time.Now()); !ok {
			return httperr.New(problem.RateLimited, "too many wrong current passwords; retry later").
				WithRetryAfter(int((d + time.Second - 1) / time.Second))
		}
		if err := h.accounts.CheckPassword(r.Context(), name, *in.CurrentPassword); err != nil {
			if errors.Is(err, tokens.ErrBadCredentials) {
				h.wrongPasswords.Charge(name, time.Now())
				return errWrongPassword
			}
			return err
		}
	}
	var u accounts.UserUpdate
	u.Password = in.Password
	if hasMember(patch, "admin") {
		u.Admin = &in.Admin
	}
	if hasMember(patch, "groups") {
		groups := in.groups()
		u.Groups = &groups
	}
	return h.updateUser(w, r, name, pre, u)
}

// hasMember reports whether a patch has the member name, null or not.
func hasMember(patch map[string]any, name string) bool {
	_, ok := patch[name]
	return ok
}

// decodeUserPatch reads the members of a user's merge patch as a user
// body, with null read as the member's default (false, no groups) and a
// null password refused. self says the caller changes their own password
// without the admin claim, who must send currentPassword.
func (h *Handler) decodeUserPatch(patch map[string]any, name string, self bool) (*userInput, error) {
	var fields []problem.FieldError
	members := make(map[string]any, len(patch))
	for m, v := range patch {
		switch {
		case v != nil:
			members[m] = v
		case m == "admin":
			members[m] = false
		case m == "groups":
			members[m] = []any{}
		case m == "password":
			fields = append(fields, problem.FieldError{Pointer: "/password", Message: "cannot be removed; send a new one"})
		}
	}
	data, err := json.Marshal(members, json.Deterministic(true))
	if err != nil {
		return nil, err
	}
	in := &userInput{patch: true}
	if err := decodeStrict(data, in); err != nil {
		return nil, err
	}
	switch {
	case in.Name == "":
		in.Name = name
	case in.Name != name:
		fields = append(fields, problem.FieldError{Pointer: "/name", Message: "must be the name in the URL, " + quote(name) + ": a user cannot be renamed"})
	}
	if self && in.CurrentPassword == nil {
		fields = append(fields, problem.FieldError{Pointer: "/currentPassword", Message: "is required to change one's own password"})
	}
	if (self || in.CurrentPassword != nil) && !hasMember(patch, "password") {
		fields = append(fields, problem.FieldError{Pointer: "/password", Message: "is required with currentPassword: it is the new password"})
	}
	if err := h.check(in, fields...); err != nil {
		return nil, err
	}
	return in, nil
}

// deleteUser is DELETE /api/v1/users/{name}: the user, their API tokens and
// what was issued to them go. An admin cannot remove themself.
func (h *Handler) deleteUser(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	c, err := claimsOf(r)
	if err != nil {
		return err
	}
	if c.Subject == name {
		return errSelfDelete
	}
	pre, err := parsePrecondition(r, 0, "")
	if err != nil {
		return err
	}
	if err := h.accounts.DeleteUserIf(r.Context(), name, pre.user(name)); err != nil {
		return userError(err, name)
	}
	// The user's jobs end with them. The deletion stands if they cannot be
	// stopped now: a user made later with the name does not see them
	// (scoring.Caller.Since), and they end at their timeout.
	if h.jobs != nil {
		if _, err := h.jobs.StopOwner(r.Context(), name); err != nil {
			h.logger.WarnContext(r.Context(), "management: the jobs of a deleted user were not all stopped",
				"user", name, "cause", err.Error())
		}
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

var (
	errOtherUser = httperr.New(problem.Forbidden,
		"only an administrator may read or change another user")
	errOwnPasswordOnly = httperr.New(problem.Forbidden,
		"without the admin claim a user may change only their own password, sending password and currentPassword and nothing else")
	errWrongPassword = httperr.New(problem.Forbidden,
		"currentPassword is not the user's password").At("/currentPassword")
	errSelfDelete = httperr.New(problem.Conflict,
		"an administrator cannot remove their own account; another administrator can")
	errSelfDemote = httperr.New(problem.Conflict,
		"an administrator cannot take away their own admin flag; another administrator can")
)
