package management

import (
	"errors"
	"net/http"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry/drift"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring"
)

// driftJSON is the answer of GET …/drift.
type driftJSON struct {
	Endpoint process.EndpointRef `json:"endpoint"`
	// Model is the reference the endpoint names, Version the version it
	// names now, whose reference the rows are compared with.
	Model   string `json:"model"`
	Version string `json:"version"`
	// Window and MaxRows bound the rows measured: those scored within the
	// window, the newest MaxRows at most.
	Window  string `json:"window"`
	MaxRows int    `json:"maxRows"`
	// Rows counts the rows measured.
	Rows       int64          `json:"rows"`
	Features   []featureDrift `json:"features"`
	Prediction *featureDrift  `json:"prediction"`
}

// featureDrift is one column's figures with the bins its histograms
// count: a number column's inner edges, a text column's categories and
// then "other".
type featureDrift struct {
	drift.FeatureReport `json:",inline"`
	Edges               []float64 `json:"edges,omitzero"`
	Categories          []string  `json:"categories,omitzero"`
}

// getEndpointDrift is GET /api/v1/endpoints/{group}/{path}/{alias}/drift:
// how the rows the endpoint scored in the last hour, and its model's
// answers, differ from the rows its version was verified with. A caller
// who may not see the endpoint's group gets a 404, as for the
// endpoint's other routes; so does an endpoint whose version has no
// reference (it was uploaded without verification rows) or that has
// scored no row since.
func (h *Handler) getEndpointDrift(w http.ResponseWriter, r *http.Request) error {
	group, path, alias := r.PathValue("group"), r.PathValue("path"), r.PathValue("alias")
	st := h.reg.Snapshot().State()
	d, ok := st.Deployment(group, path)
	if !ok || !viewerOf(r, st).group(group) {
		return notFound("deployment", group+"/"+path)
	}
	e, ok := d.Endpoint(alias)
	if !ok {
		return httperr.Newf(problem.NotFound, "deployment %q has no endpoint %q", group+"/"+path, alias)
	}
	if e.Model == "" {
		return httperr.Newf(problem.NotFound, "endpoint %q runs a process: drift is measured for a model endpoint", group+"/"+path+"/"+alias)
	}
	ref := process.EndpointRef{Group: group, Path: path, Alias: alias}
	report, profile, version, err := h.queues.Drift(st, ref, e.Model)
	switch {
	case errors.Is(err, scoring.ErrNotMonitored), errors.Is(err, drift.ErrNoRows):
		return httperr.Newf(problem.NotFound,
			"the drift of endpoint %q is not measured yet: its model's version must be uploaded with verification rows, its reference, and the endpoint must have scored rows since", group+"/"+path+"/"+alias)
	case err != nil:
		return err
	}
	out := driftJSON{Endpoint: ref, Model: e.Model, Version: version, Window: shortDuration(scoring.MonitorWindow), MaxRows: scoring.MonitorRows,
		Rows: report.Rows, Features: make([]featureDrift, 0, len(report.Features))}
	for i, f := range report.Features {
		out.Features = append(out.Features, withBins(f, &profile.Features[i]))
	}
	if p := report.Prediction; p != nil && profile.Prediction != nil {
		fd := withBins(*p, profile.Prediction)
		out.Prediction = &fd
	}
	return writeJSON(w, http.StatusOK, out)
}

// withBins is r with the bins of f, the profile's column r reports on.
func withBins(r drift.FeatureReport, f *drift.Feature) featureDrift {
	return featureDrift{FeatureReport: r, Edges: f.Edges, Categories: f.Categories}
}
