package registry

import (
	"math"
	"slices"
	"time"

	"github.com/scorehub/scorehub/registry/process"
)

// Built-in names. The DEFAULT group and queue always exist: they can be
// changed but not deleted.
const (
	DefaultGroup = "DEFAULT"
	DefaultQueue = "DEFAULT"
)

// Defaults of the built-in DEFAULT queue until it is changed.
const (
	DefaultMaxConcurrent = 16
	DefaultMaxWaiting    = 1000
)

// AnyRevision, as a record's Revision in a write, writes whatever revision
// is stored (creating the record when there is none). As the revision of a
// delete, it deletes whatever is stored.
const AnyRevision = math.MaxUint64

// ValidName reports whether s may name a group, deployment path, endpoint
// alias, queue or process: ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$. No valid name
// is "." or "..", contains a slash, or needs escaping in a URL path. It is
// the catalog's rule for process names ([process.ValidName]), kept here for
// the records.
func ValidName(s string) bool { return process.ValidName(s) }

func checkName(pointer, s string) error {
	if !ValidName(s) {
		return invalid(pointer, "%q is not a valid name (letters, digits, '.', '_', '-'; starting with a letter or digit; at most 128)", s)
	}
	return nil
}

// AuthMode says who may call a group's scoring endpoints.
type AuthMode string

const (
	// Public groups take requests without credentials. It is the default.
	Public AuthMode = "public"
	// TokenRequired groups take requests with valid credentials only, of
	// a kind the policy's Schemes accept.
	TokenRequired AuthMode = "token"
)

// Scheme is a kind of credential a protected group may accept, named as
// the Authorization header's scheme.
type Scheme string

const (
	// SchemeBasic is HTTP Basic: a user name and password.
	SchemeBasic Scheme = "basic"
	// SchemeAPIToken is a long-lived API token: "Authorization: apitoken
	// <token>".
	SchemeAPIToken Scheme = "apitoken"
	// SchemeBearer is a bearer JWT: the service's own idToken, or an access
	// token of the configured OpenID Connect provider.
	SchemeBearer Scheme = "bearer"
)

// schemes are every [Scheme], in the order challenges list them.
var schemes = [...]Scheme{SchemeBasic, SchemeAPIToken, SchemeBearer}

// AllSchemes returns every [Scheme], in the order challenges list them.
func AllSchemes() []Scheme { return append([]Scheme(nil), schemes[:]...) }

// AuthPolicy is a group's scoring access rule.
type AuthPolicy struct {
	// Mode is Public (or empty) or TokenRequired.
	Mode AuthMode `json:"mode"`
	// Groups, with TokenRequired, lists user groups of which the caller
	// must be in at least one. Empty means any authenticated caller.
	Groups []string `json:"groups,omitempty"`
	// Schemes, with TokenRequired, lists the kinds of credentials the group
	// takes. Empty means every kind.
	Schemes []Scheme `json:"schemes,omitempty"`
}

// Accepts reports whether a caller presenting a credential of kind s may
// get through p, as far as the kind goes: every kind for a public policy
// or one that lists none, else the kinds listed.
func (p AuthPolicy) Accepts(s Scheme) bool {
	if p.Mode != TokenRequired || len(p.Schemes) == 0 {
		return true
	}
	for _, x := range p.Schemes {
		if x == s {
			return true
		}
	}
	return false
}

// Accepted returns the kinds of credentials p takes, in the order of
// [AllSchemes]: every kind when p lists none.
func (p AuthPolicy) Accepted() []Scheme {
	out := make([]Scheme, 0, len(schemes))
	for _, s := range schemes {
		if p.Accepts(s) {
			out = append(out, s)
		}
	}
	return out
}

// The JSON form of the record types ([Group], [AuthPolicy], [Deployment],
// [Endpoint], [Queue], [Model] and its versions and aliases) is how a
// [FileStore] keeps them, in format version 2 of its file (version 1 had no
// models): a change to a tag is a change of that format. The management
// API shows records in a shape of its own.

// Group is a web API group: the first segment after the scoring prefix, and
// the unit of scoring access control.
type Group struct {
	Name        string     `json:"name"`
	Description string     `json:"description,omitempty"`
	Auth        AuthPolicy `json:"auth"`
	Revision    uint64     `json:"revision"`
	CreatedAt   time.Time  `json:"createdAt"`
	UpdatedAt   time.Time  `json:"updatedAt"`
}

// Endpoint maps an alias within a deployment to a catalog process or to a
// model: exactly one of Process and Model is set.
type Endpoint struct {
	Alias   string `json:"alias"`
	Process string `json:"process,omitempty"`
	// Model names a model's version or alias, as [ParseModelRef] reads it:
	// "churn@production" or "churn@3". Moving the alias moves the endpoint.
	Model string `json:"model,omitempty"`
	// Queue is the execution queue the process runs on; empty means
	// DefaultQueue.
	Queue string `json:"queue,omitempty"`
	// Timeout bounds one execution; zero means the scoring handler's
	// default. It is kept in nanoseconds.
	Timeout     time.Duration `json:"timeoutNs,omitempty"`
	Description string        `json:"description,omitempty"`
	// Explain, when set on a model endpoint, adds each row's feature
	// contributions to its answers (see [Explain]).
	Explain *Explain `json:"explain,omitempty"`
	// Challengers, on a model endpoint, are models scored beside its
	// model, the champion: each in the shadow of it or answering a share
	// of its rows (see [Challenger]).
	Challengers []Challenger `json:"challengers,omitempty"`
	// SplitKey names the input column whose value assigns a row to the
	// champion or a split challenger, so that rows of one key always meet
	// the same model; empty assigns each request's rows together, by
	// chance.
	SplitKey string `json:"splitKey,omitempty"`
	// RowID names the input column that identifies a row, so that its
	// actual outcome can be fed back later: every model's prediction of a
	// row with a value there is kept, bounded, and joined with the
	// outcome to measure the models' live performance.
	RowID string `json:"rowId,omitempty"`
	// AnsweredBy adds the output column "answeredBy": the model version
	// ("churn@3") that answered each row. Off, an answer looks the same
	// whichever model gave it, as AI Hub clients expect.
	AnsweredBy bool `json:"answeredBy,omitempty"`
	// Monitor sets how the drift of a model endpoint's rows and answers
	// from its version's reference is measured; nil measures it as the
	// zero Monitor says, and only Off turns it off.
	Monitor *Monitor `json:"monitor,omitempty"`
	// OutlierColumn adds the output column "outlier" to a model
	// endpoint's answers: for a row with values outside its version's
	// reference (a number out of its range, a category it never had), the
	// names of those inputs; missing for a row within it, and for every
	// row when the version has no reference.
	OutlierColumn bool `json:"outlierColumn,omitempty"`
	// PayloadLog, when set, keeps a sample of the endpoint's scored rows
	// with their answers, for administrators to read back.
	PayloadLog *PayloadLog `json:"payloadLog,omitempty"`
}

// Monitor is how an endpoint's drift is measured: over a window of its
// newest rows, for at most MaxFeatures of its model's inputs. The zero
// Monitor measures with the defaults.
type Monitor struct {
	// Off turns the measure off: no live figures, no drift series.
	Off bool `json:"off,omitempty"`
	// Window is how far back the live figures reach, from
	// MinMonitorWindow to MaxMonitorWindow; zero means
	// DefaultMonitorWindow. It is kept in nanoseconds.
	Window time.Duration `json:"windowNs,omitempty"`
	// MaxRows bounds the newest rows the live figures hold, up to
	// MaxMonitorRows; zero means DefaultMonitorRows.
	MaxRows int64 `json:"maxRows,omitempty"`
	// MaxFeatures bounds the inputs measured, up to MaxMonitorFeatures;
	// zero means DefaultMonitorFeatures. A model with more inputs has the
	// most important measured (those its reference ranks highest by mean
	// |contribution|), or else the first.
	MaxFeatures int `json:"maxFeatures,omitempty"`
	// FeatureSeries exports the PSI of each measured input as a
	// Prometheus series of its own, for at most MaxFeatureSeries inputs;
	// off, the endpoint has three drift series whatever its inputs.
	FeatureSeries bool `json:"featureSeries,omitempty"`
}

// The bounds and defaults of [Monitor].
const (
	DefaultMonitorWindow   = time.Hour
	MinMonitorWindow       = time.Minute
	MaxMonitorWindow       = 7 * 24 * time.Hour
	DefaultMonitorRows     = 100_000
	MaxMonitorRows         = 10_000_000
	DefaultMonitorFeatures = 50
	MaxMonitorFeatures     = 200
	MaxFeatureSeries       = 20
)

// Settings returns m with the defaults in place of its zero fields; a nil
// m is the zero Monitor.
func (m *Monitor) Settings() Monitor {
	var s Monitor
	if m != nil {
		s = *m
	}
	if s.Window == 0 {
		s.Window = DefaultMonitorWindow
	}
	if s.MaxRows == 0 {
		s.MaxRows = DefaultMonitorRows
	}
	if s.MaxFeatures == 0 {
		s.MaxFeatures = DefaultMonitorFeatures
	}
	return s
}

// PayloadLog is the sample of an endpoint's rows kept in the payload log.
type PayloadLog struct {
	// Rate is the share of rows logged, each row drawn on its own: more
	// than 0, at most 1.
	Rate float64 `json:"rate"`
	// Redact names columns, of the input or the answer, whose values are
	// logged as RedactedValue.
	Redact []string `json:"redact,omitempty"`
}

// The bounds of [PayloadLog], the value a redacted column is logged as,
// and the column [Endpoint.OutlierColumn] adds.
const (
	MaxRedacted   = 100
	RedactedValue = "[redacted]"
	OutlierColumn = "outlier"
)

// Challenger is a model an endpoint scores beside its own, the champion,
// to compare them on real traffic before one replaces the other.
type Challenger struct {
	// Model names the challenger's version or alias, as [Endpoint.Model].
	Model string `json:"model"`
	// Mode is [ChallengeShadow]: the challenger scores every row the
	// champion answers, and its answers are compared, never sent; or
	// [ChallengeSplit]: it answers Percent of the rows instead of the
	// champion.
	Mode string `json:"mode"`
	// Percent is the share of rows a split challenger answers, 0 to 100;
	// 0 for a shadow.
	Percent float64 `json:"percent,omitempty"`
}

// The values of [Challenger.Mode], and the bound on an endpoint's
// challengers.
const (
	ChallengeShadow = "shadow"
	ChallengeSplit  = "split"
	MaxChallengers  = 8
	// AnsweredByColumn is the output column [Endpoint.AnsweredBy] adds.
	AnsweredByColumn = "answeredBy"
)

// Models returns the model references e scores: its model, then its
// challengers'; none for an endpoint of a catalog process.
func (e Endpoint) Models() []string {
	if e.Model == "" {
		return nil
	}
	refs := make([]string, 0, 1+len(e.Challengers))
	refs = append(refs, e.Model)
	for _, c := range e.Challengers {
		refs = append(refs, c.Model)
	}
	return refs
}

// Explain turns on explanations for a model endpoint: after the result
// columns, every answer row carries the contribution of each of the
// model's inputs to the row's raw margin, contribution(<feature>), and
// contribution(bias), such that the bias plus the contributions is the
// margin (log-odds for a logistic objective, the raw score for a softmax
// class, the raw prediction of a regression). They are computed exactly,
// by path-dependent TreeSHAP for tree models, by the model's own
// [process.Explainer]. Query parameters are process macros on the AI Hub
// wire, so explanations are a property of an endpoint: a second alias over
// the same model is how a client chooses them.
type Explain struct {
	// Method is how contributions are computed: [ExplainTreeSHAP].
	Method string `json:"method"`
	// Top, when positive, keeps each row's Top contributions of the
	// largest magnitude and answers the others null; 0 keeps every one.
	Top int `json:"top,omitempty"`
	// Class says which margin of a model of one margin per class is
	// explained: [ExplainPredicted] (the default), the predicted class's,
	// or [ExplainAll], each class's, as contribution(<class>,<feature>) and
	// contribution(<class>,bias). A model of one margin has one either way.
	Class string `json:"class,omitempty"`
}

// The values of [Explain]'s fields.
const (
	ExplainTreeSHAP  = "treeshap"
	ExplainPredicted = "predicted"
	ExplainAll       = "all"
	// MaxExplainTop bounds [Explain.Top].
	MaxExplainTop = 100_000
)

// QueueName returns the endpoint's queue, DefaultQueue when unset.
func (e Endpoint) QueueName() string {
	if e.Queue == "" {
		return DefaultQueue
	}
	return e.Queue
}

// Deployment is a path within a group that holds endpoints. Scoring URLs are
// {prefix}/{Group}/api/v1/services/{Path}/{alias}.
type Deployment struct {
	Group       string     `json:"group"`
	Path        string     `json:"path"`
	Description string     `json:"description,omitempty"`
	Enabled     bool       `json:"enabled"`
	Endpoints   []Endpoint `json:"endpoints"`
	Revision    uint64     `json:"revision"`
	CreatedAt   time.Time  `json:"createdAt"`
	UpdatedAt   time.Time  `json:"updatedAt"`
}

// Endpoint returns the endpoint with the given alias.
func (d *Deployment) Endpoint(alias string) (Endpoint, bool) {
	for _, e := range d.Endpoints {
		if e.Alias == alias {
			return e, true
		}
	}
	return Endpoint{}, false
}

// clone returns d with its own Endpoints; never nil, so a deployment without
// endpoints reads as an empty list rather than a missing one.
func (d Deployment) clone() Deployment {
	d.Endpoints = append(make([]Endpoint, 0, len(d.Endpoints)), d.Endpoints...)
	for i, e := range d.Endpoints {
		if e.Explain != nil {
			x := *e.Explain
			d.Endpoints[i].Explain = &x
		}
		d.Endpoints[i].Challengers = slices.Clone(e.Challengers)
	}
	return d
}

// Queue is an execution queue: a bound on how many executions run at once
// and how many may wait for a slot.
type Queue struct {
	Name string `json:"name"`
	// MaxConcurrent is at least 1.
	MaxConcurrent int `json:"maxConcurrent"`
	// MaxWaiting is at least 0; a request that finds the waiting list full is
	// refused at once.
	MaxWaiting int       `json:"maxWaiting"`
	Revision   uint64    `json:"revision"`
	CreatedAt  time.Time `json:"createdAt"`
	UpdatedAt  time.Time `json:"updatedAt"`
}

// clone returns a copy of p that shares no memory with it.
func (p AuthPolicy) clone() AuthPolicy {
	p.Groups = append([]string(nil), p.Groups...)
	p.Schemes = append([]Scheme(nil), p.Schemes...)
	return p
}
