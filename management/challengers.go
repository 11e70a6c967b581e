package management

import (
	"math"
	"net/http"

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
	group, path, alias := r.PathValue("group"), r.PathValue("path"), r.PathValue("alias")
	snap := h.reg.Snapshot()
	st := snap.State()
	d, ok := st.Deployment(group, path)
	if !ok || !viewerOf(r, st).group(group) {
		return notFound("deployment", group+"/"+path)
	}
	e, ok := d.Endpoint(alias)
	if !ok {
		return httperr.Newf(problem.NotFound, "deployment %q has no endpoint %q", group+"/"+path, alias)
	}
	if e.Model == "" {
		return httperr.Newf(problem.NotFound, "endpoint %q runs a process: only a model endpoint has challengers", group+"/"+path+"/"+alias)
	}
	out := challengersJSON{
		Endpoint:    process.EndpointRef{Group: group, Path: path, Alias: alias},
		Champion:    championJSON{Model: e.Model},
		Challengers: []comparisonJSON{},
	}
	out.Champion.Version, _ = st.ResolveModel(e.Model)
	if ref, err := registry.ParseModelRef(e.Model); err == nil && ref.Alias != "" {
		if m, ok := st.Model(ref.Model); ok {
			if a, ok := m.Alias(ref.Alias); ok {
				out.Champion.AliasETag = etag(a.Revision)
			}
		}
	}
	figures := map[[2]string]scoring.Comparison{}
	for _, c := range h.queues.Challenges().Compare(st, out.Endpoint) {
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
