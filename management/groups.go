package management

import (
	"net/http"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
)

// groupJSON is a web API group as the API shows it.
type groupJSON struct {
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Auth        authJSON  `json:"auth"`
	Revision    uint64    `json:"revision"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// authJSON is a group's scoring access policy: mode "public" (anyone) or
// "token" (valid credentials of a kind schemes lists, of a holder in one of
// groups when groups is not empty).
type authJSON struct {
	Mode    string   `json:"mode"`
	Groups  []string `json:"groups"`
	Schemes []string `json:"schemes"`
}

func groupView(g registry.Group) groupJSON {
	mode := g.Auth.Mode
	if mode == "" {
		mode = registry.Public
	}
	groups := g.Auth.Groups
	if groups == nil {
		groups = []string{}
	}
	schemes := []string{}
	if mode == registry.TokenRequired {
		for _, s := range g.Auth.Accepted() {
			schemes = append(schemes, string(s))
		}
	}
	return groupJSON{
		Name:        g.Name,
		Description: g.Description,
		Auth:        authJSON{Mode: string(mode), Groups: groups, Schemes: schemes},
		Revision:    g.Revision,
		CreatedAt:   g.CreatedAt,
		UpdatedAt:   g.UpdatedAt,
	}
}

// groupInput is the body of POST /api/v1/webapigroups and PUT
// /api/v1/webapigroups/{group}. Its tags say what the wire requires; the
// rules of a group are [registry.Group.Faults].
type groupInput struct {
	Name        string    `json:"name" validate:"required"`
	Description string    `json:"description" validate:"max=4096"`
	Auth        authInput `json:"auth"`
	Revision    uint64    `json:"revision"`

	CreatedAt jsontext.Value `json:"createdAt" validate:"-"`
	UpdatedAt jsontext.Value `json:"updatedAt" validate:"-"`

	Unknown map[string]jsontext.Value `json:",unknown" validate:"-"`
}

// authInput is a group's policy in a body; an absent mode is public, and a
// token group without schemes takes every kind of credential.
type authInput struct {
	Mode    string   `json:"mode"`
	Groups  []string `json:"groups" validate:"max=1000,dive,max=256,nocontrol"`
	Schemes []string `json:"schemes"`

	Unknown map[string]jsontext.Value `json:",unknown" validate:"-"`
}

func (in *groupInput) unknown() []problem.FieldError {
	return append(unknownMembers("", in.Unknown), unknownMembers("/auth", in.Auth.Unknown)...)
}

// group is the group the body gives, as it gives it, for the registry's
// rules to judge; record fills in what it leaves out.
func (in *groupInput) group() registry.Group {
	var schemes []registry.Scheme
	for _, s := range in.Auth.Schemes {
		schemes = append(schemes, registry.Scheme(s))
	}
	return registry.Group{
		Name:        in.Name,
		Description: in.Description,
		Auth:        registry.AuthPolicy{Mode: registry.AuthMode(in.Auth.Mode), Groups: in.Auth.Groups, Schemes: schemes},
	}
}

func (in *groupInput) record(rev uint64) registry.Group {
	g := in.group()
	g.Revision = rev
	switch g.Auth.Mode {
	case "":
		g.Auth.Mode = registry.Public
	case registry.TokenRequired:
		// A protected group lists the kinds it takes, every kind unless
		// the body names some, so that a kind added later is not taken
		// without the group's say.
		if len(g.Auth.Schemes) == 0 {
			g.Auth.Schemes = registry.AllSchemes()
		}
	}
	return g
}

// listGroups is GET /api/v1/webapigroups: every group the caller may see
// (see viewer), sorted by name.
func (h *Handler) listGroups(w http.ResponseWriter, r *http.Request) error {
	st := h.reg.Snapshot().State()
	v := viewerOf(r, st)
	out := []groupJSON{}
	for _, g := range st.Groups() {
		if v.group(g.Name) {
			out = append(out, groupView(g))
		}
	}
	return writeJSON(w, http.StatusOK, out)
}

// getGroup is GET /api/v1/webapigroups/{group}; 404 for a group the caller
// may not see.
func (h *Handler) getGroup(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("group")
	st := h.reg.Snapshot().State()
	g, ok := st.Group(name)
	if !ok || !viewerOf(r, st).group(name) {
		return notFound("web API group", name)
	}
	setETag(w, g.Revision)
	return writeJSON(w, http.StatusOK, groupView(g))
}

// decodeGroup reads a group body. urlName, when not empty, is the name the
// URL gives, which the body may leave out but not contradict.
func (h *Handler) decodeGroup(r *http.Request, urlName string) (*groupInput, error) {
	data, err := readBody(r, mediaJSON)
	if err != nil {
		return nil, err
	}
	in := &groupInput{}
	if err := decodeStrict(data, in); err != nil {
		return nil, err
	}
	var extra []problem.FieldError
	if urlName != "" {
		switch {
		case in.Name == "":
			in.Name = urlName
		case in.Name != urlName:
			extra = append(extra, problem.FieldError{Pointer: "/name", Message: "must be the name in the URL, " + quote(urlName)})
		}
	}
	g := in.group()
	fields, joint := g.Faults()
	if err := h.checkRecord(in, fields, joint, extra...); err != nil {
		return nil, err
	}
	return in, nil
}

// createGroup is POST /api/v1/webapigroups: 201 with Location, or 409
// already_exists.
func (h *Handler) createGroup(w http.ResponseWriter, r *http.Request) error {
	in, err := h.decodeGroup(r, "")
	if err != nil {
		return err
	}
	if in.Revision != 0 {
		return validationFailed([]problem.FieldError{{Pointer: "/revision", Message: "must be absent or 0 when creating"}})
	}
	g, err := h.reg.PutGroup(r.Context(), in.record(0))
	if err != nil {
		return err
	}
	w.Header().Set("Location", "webapigroups/"+g.Name)
	setETag(w, g.Revision)
	return writeJSON(w, http.StatusCreated, groupView(g))
}

// putGroup is PUT /api/v1/webapigroups/{group}: create or replace.
func (h *Handler) putGroup(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("group")
	in, err := h.decodeGroup(r, name)
	if err != nil {
		return err
	}
	pre, err := parsePrecondition(r, in.Revision, "/revision")
	if err != nil {
		return err
	}
	var stored registry.Group
	err = h.reg.Update(r.Context(), func(tx *registry.Tx) error {
		cur, exists := tx.State().Group(name)
		want, err := pre.revision("web API group", name, exists, cur.Revision, registry.AnyRevision)
		if err != nil {
			return err
		}
		stored, err = tx.PutGroup(in.record(want))
		return err
	})
	if err != nil {
		return err
	}
	setETag(w, stored.Revision)
	return writeJSON(w, createdOrOK(stored.Revision), groupView(stored))
}

// deleteGroup is DELETE /api/v1/webapigroups/{group}. DEFAULT and groups
// that still have deployments cannot be removed (409 in_use).
func (h *Handler) deleteGroup(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("group")
	pre, err := parsePrecondition(r, 0, "")
	if err != nil {
		return err
	}
	err = h.reg.Update(r.Context(), func(tx *registry.Tx) error {
		cur, exists := tx.State().Group(name)
		if !exists {
			return notFound("web API group", name)
		}
		want, err := pre.revision("web API group", name, true, cur.Revision, registry.AnyRevision)
		if err != nil {
			return err
		}
		return tx.DeleteGroup(name, want)
	})
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
