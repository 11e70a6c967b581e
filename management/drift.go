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
	// Rows counts the rows measured, and Replicas the replicas whose rows
	// they are.
	Rows     int64 `json:"rows"`
	Replicas int   `json:"replicas"`
	// Unmeasured names the inputs of the reference past the endpoint's
	// maxFeatures, which are not measured; RankedBy says how those
	// measured were picked: by "importance" or by "order".
	Unmeasured []string `json:"unmeasured"`
	RankedBy   string   `json:"rankedBy"`
	// Declared says the reference comes from what the model's file
	// declares of its inputs alone: its bins are ranges and categories,
	// with no reference counts, so PSI and JS are null.
	Declared   bool           `json:"declared"`
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
	// Values are a categorical number's known values, whose others
	// count as unseen.
	Values []float64 `json:"values,omitzero"`
	// Importance is the input's mean |contribution| on the reference
	// rows, where the model explains its predictions.
	Importance *float64 `json:"importance,omitzero"`
}

// getEndpointDrift is GET /api/v1/endpoints/{group}/{path}/{alias}/drift:
// how the rows the endpoint scored in its monitor's window, and its
// model's answers, differ from its version's reference, over every
// replica's rows while replicas share their figures. A caller who may
// not see the endpoint's group gets a 404, as for the endpoint's other
// routes; so does an endpoint whose version has no reference, whose
// monitor is off, or that has scored no row since.
func (h *Handler) getEndpointDrift(w http.ResponseWriter, r *http.Request) error {
	st := h.reg.Snapshot().State()
	_, e, ref, err := endpointOf(r, st)
	if err != nil {
		return err
	}
	name := ref.Group + "/" + ref.Path + "/" + ref.Alias
	if e.Model == "" {
		return httperr.Newf(problem.NotFound, "endpoint %q runs a process: drift is measured for a model endpoint", name)
	}
	m, err := h.queues.Drift(r.Context(), st, ref, e)
	switch {
	case errors.Is(err, scoring.ErrNotMonitored), errors.Is(err, drift.ErrNoRows):
		return httperr.Newf(problem.NotFound,
			"the drift of endpoint %q is not measured yet: its model's version needs a reference (reference rows or verification rows uploaded with it), its monitor must not be off, and it must have scored rows since", name)
	case err != nil:
		return err
	}
	report, profile := m.Report, m.Profile
	out := driftJSON{Endpoint: ref, Model: e.Model, Version: m.Version, Window: shortDuration(m.Monitor.Window), MaxRows: int(m.Monitor.MaxRows),
		Rows: report.Rows, Replicas: m.Replicas, Unmeasured: m.Unmeasured, RankedBy: m.RankedBy, Declared: profile.Declared, Features: make([]featureDrift, 0, len(report.Features))}
	if out.Unmeasured == nil {
		out.Unmeasured = []string{}
	}
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
	return featureDrift{FeatureReport: r, Edges: f.Edges, Categories: f.Categories, Values: f.Values, Importance: f.Importance}
}
