package scoring

import (
	"context"
	"errors"
	"reflect"
	"sync/atomic"

	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/drift"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring/internal/wire"
)

// monitorKey names what one live profile counts: an endpoint's rows, as
// the version of its model (the champion) scored them.
type monitorKey = championKey

// monitored is the live profile of one endpoint and version: the window
// its rows are counted in, in the bins of the version's reference (its
// most important inputs, as many as the endpoint's Monitor measures).
type monitored struct {
	live     *drift.Live
	ref      atomic.Pointer[drift.Profile] // the version's reference it was made for
	settings registry.Monitor              // as it was made for; FeatureSeries as of the last request
	series   atomic.Bool                   // the endpoint's FeatureSeries now
	// unmeasured are the reference's inputs past the endpoint's
	// MaxFeatures, which are not counted.
	unmeasured []string
	rankedBy   string
	// fingerprint names the bins and the window the live profile
	// counts in, so that replicas add up only figures of the same.
	fingerprint string
}

// sameWindow reports whether settings a and b count rows alike: all but
// FeatureSeries, which only changes what the metrics show.
func sameWindow(a, b registry.Monitor) bool {
	a.FeatureSeries, b.FeatureSeries = false, false
	return a == b
}

// matches reports whether m counts for ref with settings s. A reference
// equal to m's but another value (the registry read its records again)
// matches, and is remembered, so that its next request compares pointers
// alone.
func (m *monitored) matches(ref *drift.Profile, s registry.Monitor) bool {
	if !sameWindow(m.settings, s) {
		return false
	}
	cur := m.ref.Load()
	if cur != ref {
		if !reflect.DeepEqual(cur, ref) {
			return false
		}
		m.ref.Store(ref)
	}
	m.series.Store(s.FeatureSeries)
	return true
}

// monitoredFor returns the live profile of k for reference ref under
// settings s: the one kept, or a new one in its place when the
// reference or the settings changed, which starts the figures again. It
// returns nil when the measure is off, and for an execution of an older
// snapshot than the live profile's, whose reference or settings are no
// longer the endpoint's (now says what they are now, as the registry
// holds them): it must not start the figures again.
func (c *Challenges) monitoredFor(k monitorKey, ref *drift.Profile, s registry.Monitor, now func() (*drift.Profile, registry.Monitor, *registry.State)) *monitored {
	if ref == nil || s.Off {
		return nil
	}
	old, ok := c.monitors.Load(k)
	if ok && old.(*monitored).matches(ref, s) {
		return old.(*monitored)
	}
	curRef, curSettings, st := now()
	if !sameWindow(curSettings, s) || (curRef != ref && !reflect.DeepEqual(curRef, ref)) {
		return nil // a stale execution: the endpoint counts otherwise now
	}
	p, left := ref.Most(s.MaxFeatures)
	live, err := drift.NewLive(p, drift.Window{Duration: s.Window, Rows: s.MaxRows})
	if err != nil {
		return nil // a profile NewLive refuses was refused when it was read, and the settings by the registry's rules
	}
	m := &monitored{live: live, settings: s, unmeasured: left, rankedBy: ref.RankedBy(), fingerprint: fingerprint(p, s)}
	m.ref.Store(ref)
	m.series.Store(s.FeatureSeries)
	// A new live profile is rare: the moment to drop those of endpoints
	// and versions no longer deployed.
	if st != nil {
		defer c.pruneMonitors(st)
	}
	if !ok {
		if got, loaded := c.monitors.LoadOrStore(k, m); loaded {
			return got.(*monitored) // another request made it first
		}
		return m
	}
	if c.monitors.CompareAndSwap(k, old, m) {
		return m
	}
	got, _ := c.monitors.Load(k)
	if got == nil {
		return m
	}
	return got.(*monitored)
}

// monitor counts x's rows and its model's answers in the live profile
// of x's endpoint and version, once the answer is written: on the
// request's goroutine, with one atomic add a counter. The rows a split
// challenger answered count with its answers.
func (e *engine) monitor(x *execution, result wire.Result) {
	if x.reference == nil || x.monitor.Off {
		return
	}
	k := monitorKey{x.in.Endpoint, x.process.Name}
	if v, ok := e.challenges.monitors.Load(k); ok && v.(*monitored).matches(x.reference, x.monitor) {
		x.observeAfter(v.(*monitored), result) // the usual case: no closure to make
		return
	}
	now := func() (*drift.Profile, registry.Monitor, *registry.State) {
		st := e.reg.Snapshot().State()
		ep := x.in.Endpoint
		if d, ok := st.Deployment(ep.Group, ep.Path); ok {
			if cur, ok := d.Endpoint(ep.Alias); ok {
				return st.Reference(cur.Model), cur.Monitor.Settings(), st
			}
		}
		return nil, registry.Monitor{}, st
	}
	if m := e.challenges.monitoredFor(k, x.reference, x.monitor, now); m != nil {
		x.observeAfter(m, result)
	}
}

// observeAfter counts x's rows and result in m once the answer is
// written.
func (x *execution) observeAfter(m *monitored, result wire.Result) {
	live, table := m.live, x.in.Table
	x.after = append(x.after, func() {
		if result.Parts == nil {
			live.Observe(table, result.Whole)
			return
		}
		lo := 0
		for _, p := range result.Parts {
			live.Observe(table.Slice(lo, lo+p.Rows()), p)
			lo += p.Rows()
		}
	})
}

// ErrNotMonitored is the error of [Queues.Drift] for an endpoint whose
// model has no reference to measure drift against, whose measure is
// off, or that has scored no row since its version, reference or
// measure last changed.
var ErrNotMonitored = errors.New("scoring: the endpoint's drift is not measured")

// Drift is how an endpoint's rows and its model's answers differ from
// its version's reference, as [Queues.Drift] measures it.
type Drift struct {
	// Version is the version measured, "churn@3".
	Version string
	Report  *drift.Report
	// Profile is the reference measured against: the version's, of the
	// inputs measured. Its features are the Report's, in order.
	Profile *drift.Profile
	// Monitor is the endpoint's measure, with its defaults.
	Monitor registry.Monitor
	// Unmeasured names the inputs of the reference the measure leaves
	// out (past Monitor.MaxFeatures), and RankedBy says how the measured
	// were picked: "importance" or "order".
	Unmeasured []string
	RankedBy   string
	// Replicas counts the replicas whose rows the figures hold: 1 but
	// while the figures are shared ([Queues.ShareComparisons] with a
	// store that is also a [DriftStore]).
	Replicas int
}

// Drift compares what endpoint e's rows and its model's answers looked
// like over the window of its [registry.Monitor] with the reference of
// the version its model names now, as st holds it: per input, the
// population stability index, the Jensen-Shannon distance, the change of
// the missing rate and the shares out of range and unseen, with both
// histograms; the same for the prediction. The figures are this
// replica's, or, while replicas share them, every replica's added up
// (this replica's alone when the store cannot be read: Replicas says
// which).
func (q *Queues) Drift(ctx context.Context, st *registry.State, endpoint process.EndpointRef, e registry.Endpoint) (*Drift, error) {
	q.challenges.pruneMonitors(st)
	version, err := st.ResolveModel(e.Model)
	if err != nil {
		return nil, ErrNotMonitored
	}
	ref, s := st.Reference(e.Model), e.Monitor.Settings()
	if ref == nil || s.Off {
		return nil, ErrNotMonitored
	}
	p, left := ref.Most(s.MaxFeatures)
	out := &Drift{Version: version, Profile: p, Monitor: s, Unmeasured: left, RankedBy: ref.RankedBy(), Replicas: 1}
	var hist *drift.Histograms
	shared := false
	if store := q.sharedDrift(); store != nil {
		// A store that cannot be read leaves this replica's figures.
		if h, n, err := collectDrift(ctx, store, endpoint, version, fingerprint(p, s)); err == nil {
			hist, out.Replicas, shared = h, n, true
		} else if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	if v, ok := q.challenges.monitors.Load(monitorKey{endpoint, version}); !shared && ok && v.(*monitored).matches(ref, s) {
		m := v.(*monitored)
		out.Profile, hist = m.live.Profile(), m.live.Snapshot()
	}
	if hist == nil {
		return nil, ErrNotMonitored
	}
	if out.Report, err = drift.Compare(out.Profile, hist); err != nil {
		return nil, err
	}
	return out, nil
}

// pruneMonitors drops the live profiles of endpoints and versions st no
// longer deploys, so that they are bounded by the deployed versions, and
// the outlier flags of references st no longer holds.
func (c *Challenges) pruneMonitors(st *registry.State) {
	live := map[monitorKey]bool{}
	deployed(st, func(k championKey, _ registry.Endpoint) { live[k] = true })
	dropAllBut(&c.monitors, live)
	c.pruneOutliers(st)
}

// MonitoredEndpoint is the drift of one endpoint as [Queues.Drifts]
// returns it.
type MonitoredEndpoint struct {
	Endpoint process.EndpointRef
	Version  string
	Report   *drift.Report
	// FeatureSeries is the endpoint's [registry.Monitor.FeatureSeries]:
	// whether it exports a series per input.
	FeatureSeries bool
	// Importance is the measured inputs' importance, by name, where the
	// reference has it.
	Importance map[string]float64
}

// Drifts returns this replica's drift of every endpoint st deploys that
// has scored rows against a reference.
func (q *Queues) Drifts(st *registry.State) []MonitoredEndpoint {
	q.challenges.pruneMonitors(st)
	var out []MonitoredEndpoint
	q.challenges.monitors.Range(func(k, v any) bool {
		mk, m := k.(monitorKey), v.(*monitored)
		if r, err := drift.Compare(m.live.Profile(), m.live.Snapshot()); err == nil {
			me := MonitoredEndpoint{Endpoint: mk.endpoint, Version: mk.champion, Report: r, FeatureSeries: m.series.Load()}
			for _, f := range m.live.Profile().Features {
				if f.Importance != nil {
					if me.Importance == nil {
						me.Importance = map[string]float64{}
					}
					me.Importance[f.Name] = *f.Importance
				}
			}
			out = append(out, me)
		}
		return true
	})
	return out
}

// outliers returns the outlier flags of profile p, made once per
// profile and kept while p is some version's reference.
func (c *Challenges) outliers(p *drift.Profile) *drift.Outliers {
	if o, ok := c.bounds.Load(p); ok {
		return o.(*drift.Outliers)
	}
	// A registry that reads its records again holds new references of
	// the same content: past maxBounds, start again rather than grow.
	if c.boundsMade.Add(1) > maxBounds {
		c.boundsMade.Store(0)
		c.bounds.Clear()
	}
	o, _ := c.bounds.LoadOrStore(p, drift.NewOutliers(p))
	return o.(*drift.Outliers)
}

// maxBounds bounds the outlier flags kept between prunes.
const maxBounds = 1024

// pruneOutliers drops the outlier flags of profiles no version of st
// has as its reference.
func (c *Challenges) pruneOutliers(st *registry.State) {
	keep := map[*drift.Profile]bool{}
	for _, m := range st.Models() {
		for _, v := range m.Versions {
			if v.Reference != nil {
				keep[v.Reference] = true
			}
		}
	}
	dropAllBut(&c.bounds, keep)
}

// withOutliers returns r with the column outlier added: for each row of
// t, the inputs whose values are outside reference p.
func (c *Challenges) withOutliers(r wire.Result, t *process.Table, p *drift.Profile) (wire.Result, error) {
	var names []string
	var none []bool
	if p == nil {
		names, none = make([]string, t.Rows()), make([]bool, t.Rows())
		for i := range none {
			none[i] = true
		}
	} else {
		names, none = c.outliers(p).Flag(t)
	}
	return withColumn(r, process.TextColumn(registry.OutlierColumn, names, none))
}
