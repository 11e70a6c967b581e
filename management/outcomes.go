package management

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/middleware"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/outcomes"
	"github.com/scorehub/scorehub/registry/process"
)

// outcomeRoutes are served when Config.Outcomes keeps predictions.
func outcomeRoutes() []route {
	return []route{
		{http.MethodPost, "/api/v1/endpoints/{group}/{path}/{alias}/feedback", feedbackAccess, (*Handler).postFeedback},
		{http.MethodGet, "/api/v1/endpoints/{group}/{path}/{alias}/performance", readAccess, (*Handler).getPerformance},
	}
}

// MaxFeedbackRows bounds the outcomes of one feedback batch.
const MaxFeedbackRows = 10_000

// DefaultPerformanceWindow is the sliding window of the performance route
// when it names none.
const DefaultPerformanceWindow = time.Hour

// feedbackTarget is a model endpoint that keeps predictions: its record,
// and the classes of its model (nil for a regressor).
type feedbackTarget struct {
	ref      process.EndpointRef
	endpoint registry.Endpoint
	classes  []string
	group    registry.Group
}

// outcomeTarget finds the endpoint of r's path for the outcome routes: a
// model endpoint with a row-ID column, in a group the caller sees.
func (h *Handler) outcomeTarget(r *http.Request) (feedbackTarget, error) {
	snap := h.reg.Snapshot()
	st := snap.State()
	_, e, ref, err := endpointOf(r, st)
	if err != nil {
		return feedbackTarget{}, err
	}
	if e.Model == "" || e.RowID == "" {
		return feedbackTarget{}, httperr.Newf(problem.NotFound,
			"endpoint %q keeps no predictions to feed back to: a model endpoint names its row-ID column in rowId", ref.Group+"/"+ref.Path+"/"+ref.Alias)
	}
	g, _ := st.Group(ref.Group)
	t := feedbackTarget{ref: ref, endpoint: e, group: g}
	if p, err := snap.EndpointProcess(e); err == nil {
		for _, o := range p.Output {
			if cls, ok := process.ConfidenceClass(o.Name); ok {
				t.classes = append(t.classes, cls)
			}
		}
	}
	return t, nil
}

// feedbackInput is the body of a feedback batch.
type feedbackInput struct {
	Data    []map[string]jsontext.Value `json:"data"`
	Unknown map[string]jsontext.Value   `json:",unknown"`
}

// postFeedback is POST /api/v1/endpoints/{group}/{path}/{alias}/feedback:
// the actual outcomes of rows the endpoint scored, by their IDs, applied
// whole or not at all. The caller needs the endpoint group's scoring
// credential when the group is protected.
func (h *Handler) postFeedback(w http.ResponseWriter, r *http.Request) error {
	t, err := h.outcomeTarget(r)
	if err != nil {
		return err
	}
	if t.group.Auth.Mode == registry.TokenRequired {
		if h.credentials == nil {
			return httperr.New(problem.Forbidden, "the endpoint's group takes its scoring credentials, which this server does not check here")
		}
		if err := h.credentials.Authorize(r, t.group.Name, t.group.Auth); err != nil {
			return err
		}
	}
	data, err := readBody(r, mediaJSON)
	if err != nil {
		return err
	}
	var in feedbackInput
	if err := decodeStrict(data, &in); err != nil {
		return err
	}
	outs, err := t.outcomes(&in)
	if err != nil {
		return err
	}
	// The predictions of rows answered before this request are in the
	// store before their outcomes are matched with them.
	if err := h.queues.FlushPredictions(r.Context()); err != nil {
		return err
	}
	applied, err := h.outcomes.Feedback(r.Context(), t.ref, outs, time.Now())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, applied)
}

// outcomes reads in's rows as outcomes: each must hold the endpoint's
// row-ID column (text or a number) and actual (a class of the model,
// for a classifier, as text or as the number that names it; a number for
// a regressor), and nothing else.
func (t feedbackTarget) outcomes(in *feedbackInput) ([]outcomes.Outcome, error) {
	var fields []problem.FieldError
	fields = append(fields, unknownMembers("", in.Unknown)...)
	switch {
	case in.Data == nil:
		fields = append(fields, problem.FieldError{Pointer: "/data", Message: "is required: an array of {\"" + t.endpoint.RowID + "\": …, \"actual\": …}"})
	case len(in.Data) > MaxFeedbackRows:
		return nil, httperr.Newf(problem.TooManyRows, "a feedback batch holds at most %d rows, not %d", MaxFeedbackRows, len(in.Data))
	}
	outs := make([]outcomes.Outcome, 0, len(in.Data))
	for i, row := range in.Data {
		p := "/data/" + strconv.Itoa(i)
		var o outcomes.Outcome
		for name, v := range row {
			switch name {
			case t.endpoint.RowID:
				id, ok := idText(v)
				if !ok {
					fields = append(fields, problem.FieldError{Pointer: p + "/" + escapePointer(name), Message: "must be the row's ID: text or a number"})
				}
				o.RowID = id
			case "actual":
				if msg := t.actual(v, &o); msg != "" {
					fields = append(fields, problem.FieldError{Pointer: p + "/actual", Message: msg})
				}
			default:
				fields = append(fields, problem.FieldError{Pointer: p + "/" + escapePointer(name), Message: "is not a member of an outcome: send " + strconv.Quote(t.endpoint.RowID) + " and \"actual\""})
			}
		}
		if _, ok := row[t.endpoint.RowID]; !ok {
			fields = append(fields, problem.FieldError{Pointer: p, Message: "has no " + strconv.Quote(t.endpoint.RowID) + ": the endpoint's row-ID column"})
		}
		if _, ok := row["actual"]; !ok {
			fields = append(fields, problem.FieldError{Pointer: p, Message: "has no \"actual\": the row's outcome"})
		}
		outs = append(outs, o)
		if len(fields) > maxListedFields {
			break
		}
	}
	if len(fields) > 0 {
		return nil, validationFailed(fields)
	}
	return outs, nil
}

// maxListedFields bounds the faults a refused feedback batch lists.
const maxListedFields = 50

// actual reads v as the outcome o of t's model, or says why it cannot.
func (t feedbackTarget) actual(v jsontext.Value, o *outcomes.Outcome) string {
	switch v.Kind() {
	case '"':
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return "must be a string or a number"
		}
		if t.classes == nil {
			return "must be a number: the model is a regressor"
		}
		if !slices.Contains(t.classes, s) {
			return "is not one of the model's classes " + quoteAll(t.classes)
		}
		o.IsLabel, o.Label = true, s
	case '0':
		var f float64
		if err := json.Unmarshal(v, &f); err != nil {
			return "must be a number within range"
		}
		if t.classes == nil {
			o.Value = f
			return ""
		}
		s := strconv.FormatFloat(f, 'g', -1, 64)
		if !slices.Contains(t.classes, s) {
			return "must be one of the model's classes " + quoteAll(t.classes) + ": the model is a classifier"
		}
		o.IsLabel, o.Label = true, s
	default:
		if t.classes == nil {
			return "must be a number: the model is a regressor"
		}
		return "must be one of the model's classes " + quoteAll(t.classes)
	}
	return ""
}

// idText reads a row ID: text, or a number in its shortest form, as the
// scoring path keeps it.
func idText(v jsontext.Value) (string, bool) {
	switch v.Kind() {
	case '"':
		var s string
		return s, json.Unmarshal(v, &s) == nil && s != ""
	case '0':
		var f float64
		if json.Unmarshal(v, &f) != nil {
			return "", false
		}
		return outcomes.NumberID(f), true
	}
	return "", false
}

func quoteAll(s []string) string {
	out := "["
	for i, v := range s {
		if i > 0 {
			out += ", "
		}
		out += strconv.Quote(v)
	}
	return out + "]"
}

// performanceJSON is the answer of GET …/performance.
type performanceJSON struct {
	Endpoint            process.EndpointRef     `json:"endpoint"`
	Task                string                  `json:"task"`
	Window              string                  `json:"window"`
	RowsWithFeedback    int                     `json:"rowsWithFeedback"`
	RowsWithoutFeedback int                     `json:"rowsWithoutFeedback"`
	Models              []outcomes.ModelFigures `json:"models"`
}

// getPerformance is GET /api/v1/endpoints/{group}/{path}/{alias}/performance:
// each model version's live performance from the outcomes fed back, over
// the window (?window=, a duration; 1h by default) and in total. Figures
// of a protected group are for administrators.
func (h *Handler) getPerformance(w http.ResponseWriter, r *http.Request) error {
	t, err := h.outcomeTarget(r)
	if err != nil {
		return err
	}
	if t.group.Auth.Mode == registry.TokenRequired {
		if c, _ := middleware.ClaimsFrom(r.Context()); c == nil || !c.Admin {
			return httperr.New(problem.Forbidden, "the live performance of a protected group's models is for administrators")
		}
	}
	window := DefaultPerformanceWindow
	if q := r.URL.Query().Get("window"); q != "" {
		d, err := time.ParseDuration(q)
		if err != nil || d <= 0 {
			return httperr.New(problem.InvalidRequest, "window must be a positive duration, such as 1h or 15m").At("/window")
		}
		window = d
	}
	joined, err := h.outcomes.Joined(r.Context(), t.ref, time.Time{})
	if err != nil {
		return err
	}
	pending, err := h.outcomes.Pending(r.Context(), t.ref)
	if err != nil {
		return err
	}
	out := performanceJSON{Endpoint: t.ref, Task: "regression", Window: shortDuration(window), RowsWithoutFeedback: pending}
	if t.classes != nil {
		out.Task = "classification"
	}
	out.Models, out.RowsWithFeedback = outcomes.ByModel(joined, time.Now().Add(-window))
	return writeJSON(w, http.StatusOK, out)
}

// shortDuration writes d as time.Duration does, without its zero minutes
// and seconds: 1h, 15m, 1h30m.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
