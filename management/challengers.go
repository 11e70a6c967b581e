package management

import (
	"math"
	"net/http"
	"slices"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring"
)

// challengersJSON is the answer of GET
// /api/v1/endpoints/{group}/{path}/{alias}/challengers: the endpoint's
// champion and, for each challenger, what the two did on this server.
type challengersJSON struct {
	Endpoint    process.EndpointRef `json:"endpoint"`
	Champion    championJSON        `json:"champion"`
	Challengers []comparisonJSON    `json:"challengers"`
}

// championJSON is the endpoint's model: the reference it names, the
// version that resolves to now, and, when the reference is an alias, the
// alias's ETag, which the If-Match of the move that promotes a challenger
// needs (PUT /api/v1/models/{name}/aliases/{alias}).
type championJSON struct {
	Model     string `json:"model"`
	Version   string `json:"version"`
	AliasETag string `json:"aliasETag,omitzero"`
	// ETag is the If-Match of POST …/promote: the alias's when the
	// endpoint names its model by an alias, else the deployment's.
	ETag string `json:"etag"`
}

// comparisonJSON is one challenger and what it did beside the champion
// (see [scoring.Comparison]).
type comparisonJSON struct {
	Model   string  `json:"model"`
	Mode    string  `json:"mode"`
	Percent float64 `json:"percent,omitzero"`
	// Version is the version Model resolves to now; empty, with Error
	// saying why, for a challenger that cannot score.
	Version string `json:"version"`
	Error   string `json:"error,omitzero"`
	// AgreementRate is Agreed / Compared; null before a row is compared.
	AgreementRate     *float64          `json:"agreementRate"`
	Compared          uint64            `json:"compared"`
	Agreed            uint64            `json:"agreed"`
	Delta             scoring.Histogram `json:"delta"`
	Answered          uint64            `json:"answered"`
	Skipped           uint64            `json:"skipped"`
	Errors            uint64            `json:"errors"`
	Unavailable       uint64            `json:"unavailable"`
	ChampionLatency   scoring.Histogram `json:"championLatency"`
	ChallengerLatency scoring.Histogram `json:"challengerLatency"`
}

// getEndpointChallengers is GET
// /api/v1/endpoints/{group}/{path}/{alias}/challengers: the comparison of
// the endpoint's model with each of its challengers, on the rows this
// server scored since the pair was deployed. A caller who may not see the
// endpoint's group gets a 404, as for the endpoint's other routes.
func (h *Handler) getEndpointChallengers(w http.ResponseWriter, r *http.Request) error {
	snap := h.reg.Snapshot()
	st := snap.State()
	d, e, ref, err := endpointOf(r, st)
	if err != nil {
		return err
	}
	if e.Model == "" {
		return httperr.Newf(problem.NotFound, "endpoint %q runs a process: only a model endpoint has challengers", ref.Group+"/"+ref.Path+"/"+ref.Alias)
	}
	out := challengersJSON{
		Endpoint:    ref,
		Champion:    championJSON{Model: e.Model},
		Challengers: []comparisonJSON{},
	}
	out.Champion.Version, _ = st.ResolveModel(e.Model)
	out.Champion.ETag = etag(d.Revision)
	if ref, err := registry.ParseModelRef(e.Model); err == nil && ref.Alias != "" {
		if m, ok := st.Model(ref.Model); ok {
			if a, ok := m.Alias(ref.Alias); ok {
				out.Champion.AliasETag = etag(a.Revision)
				out.Champion.ETag = out.Champion.AliasETag
			}
		}
	}
	figures := map[[2]string]scoring.Comparison{}
	cs, err := h.queues.Comparisons(r.Context(), out.Endpoint)
	if err != nil {
		return err
	}
	for _, c := range cs {
		if c.Champion == out.Champion.Version {
			figures[[2]string{c.Challenger, c.Mode}] = c
		}
	}
	targets, err := snap.EndpointChallengers(e)
	if err != nil {
		targets = nil // the champion cannot be had: the challengers are listed as recorded
	}
	for i, c := range e.Challengers {
		v := comparisonJSON{Model: c.Model, Mode: c.Mode, Percent: c.Percent}
		v.Version, _ = st.ResolveModel(c.Model)
		if targets != nil && targets[i].Err != nil {
			v.Error = unavailableMessage(targets[i].Err)
		}
		name := v.Version
		if name == "" {
			name = c.Model
		}
		f, ok := figures[[2]string{name, c.Mode}]
		if !ok {
			f = scoring.NoComparison(out.Champion.Version, name, c.Mode)
		}
		if rate := f.AgreementRate(); !math.IsNaN(rate) {
			v.AgreementRate = &rate
		}
		v.Compared, v.Agreed, v.Delta, v.Answered, v.Skipped = f.Compared, f.Agreed, f.Delta, f.Answered, f.Skipped
		v.Errors, v.Unavailable, v.ChampionLatency, v.ChallengerLatency = f.Errors, f.Unavailable, f.ChampionLatency, f.ChallengerLatency
		out.Challengers = append(out.Challengers, v)
	}
	return writeJSON(w, http.StatusOK, out)
}

// promoteInput is the body of POST …/promote.
type promoteInput struct {
	// Challenger is the reference of the challenger promoted, as the
	// endpoint's challengers name it.
	Challenger string `json:"challenger" validate:"required"`

	Unknown map[string]jsontext.Value `json:",unknown" validate:"-"`
}

func (in *promoteInput) unknown() []problem.FieldError { return unknownMembers("", in.Unknown) }

// promoteJSON is the answer of POST …/promote: the endpoint's deployment
// and the model's aliases, as they are after the write (the one the
// write did not change as it was).
type promoteJSON struct {
	Deployment deploymentJSON   `json:"deployment"`
	Aliases    []modelAliasJSON `json:"aliases"`
}

// promoteEndpointChallenger is POST
// /api/v1/endpoints/{group}/{path}/{alias}/promote: the challenger named
// and the endpoint's model trade places, in one write, so that the former
// champion is the challenger (in the promoted one's mode and share) from
// the same moment on. When both are aliases of one model
// (churn@production and churn@candidate) the two aliases swap versions,
// and every endpoint naming either moves with it, as an alias move does;
// If-Match is then the champion's alias's ETag. When the endpoint names
// a version, the endpoint and its challenger trade references in the
// deployment, whose ETag If-Match is. A champion named by an alias with a
// challenger named otherwise cannot be swapped in one write: 409.
func (h *Handler) promoteEndpointChallenger(w http.ResponseWriter, r *http.Request) error {
	group, path, alias := r.PathValue("group"), r.PathValue("path"), r.PathValue("alias")
	data, err := readBody(r, mediaJSON)
	if err != nil {
		return err
	}
	var in promoteInput
	if err := decodeStrict(data, &in); err != nil {
		return err
	}
	if err := h.check(&in); err != nil {
		return err
	}
	pre, err := parsePrecondition(r, 0, "")
	if err != nil {
		return err
	}
	// The version the write names loads before it, which then finds it
	// loaded (one that cannot be loaded is refused there).
	_, _ = h.reg.Snapshot().EndpointProcess(registry.Endpoint{Model: in.Challenger})
	var out promoteJSON
	err = h.reg.Update(r.Context(), func(tx *registry.Tx) error {
		st := tx.State()
		d, ok := st.Deployment(group, path)
		if !ok {
			return notFound("deployment", group+"/"+path)
		}
		i := slices.IndexFunc(d.Endpoints, func(e registry.Endpoint) bool { return e.Alias == alias })
		if i < 0 {
			return httperr.Newf(problem.NotFound, "deployment %q has no endpoint %q", group+"/"+path, alias)
		}
		e := d.Endpoints[i]
		j := slices.IndexFunc(e.Challengers, func(c registry.Challenger) bool { return c.Model == in.Challenger })
		if j < 0 {
			return httperr.Newf(problem.InvalidReference, "endpoint %q has no challenger %q", group+"/"+path+"/"+alias, in.Challenger).At("/challenger")
		}
		out.Deployment = deploymentView(d)
		champ, err := registry.ParseModelRef(e.Model)
		if err != nil {
			return err
		}
		next, _ := registry.ParseModelRef(in.Challenger)
		switch {
		case champ.Alias != "" && next.Alias != "" && champ.Model == next.Model:
			m, _ := st.Model(champ.Model)
			cur, exists := m.Alias(champ.Alias)
			rev, err := pre.revision("alias", e.Model, exists, cur.Revision, registry.AnyRevision)
			if err != nil {
				return err
			}
			a, b, err := tx.SwapModelAliases(champ.Model, champ.Alias, next.Alias, rev)
			if err != nil {
				return err
			}
			out.Aliases = []modelAliasJSON{modelAliasView(champ.Model, a), modelAliasView(champ.Model, b)}
			return nil
		case champ.Alias != "":
			return httperr.Newf(problem.Conflict,
				"the endpoint names its model by the alias %q: name the challenger by another alias of model %q, and promoting swaps the two aliases in one write", e.Model, champ.Model).At("/challenger")
		}
		if _, err := pre.revision("deployment", group+"/"+path, true, d.Revision, 0); err != nil {
			return err
		}
		e.Challengers = slices.Clone(e.Challengers)
		e.Model, e.Challengers[j].Model = in.Challenger, e.Model
		d.Endpoints = slices.Clone(d.Endpoints)
		d.Endpoints[i] = e
		stored, err := tx.PutDeployment(d)
		if err != nil {
			return err
		}
		out.Deployment = deploymentView(stored)
		out.Aliases = []modelAliasJSON{}
		return nil
	})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, out)
}
