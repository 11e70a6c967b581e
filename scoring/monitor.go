package scoring

import (
	"errors"
	"time"

	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/drift"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring/internal/wire"
)

// The window drift is measured over: the rows scored in the last
// MonitorWindow, at most MonitorRows of them.
const (
	MonitorWindow = time.Hour
	MonitorRows   = 100_000
)

// monitorKey names what one live profile counts: an endpoint's rows, as
// the version of its model (the champion) scored them.
type monitorKey = championKey

// monitor counts x's rows and its model's answers in the live profile
// of x's endpoint and version, once the answer is written: on the
// request's goroutine, with one atomic add a counter.
func (e *engine) monitor(x *execution, result wire.Result) {
	if x.reference == nil {
		return
	}
	k := monitorKey{x.in.Endpoint, x.process.Name}
	l, ok := e.challenges.monitors.Load(k)
	if !ok {
		live, err := drift.NewLive(x.reference, drift.Window{Duration: MonitorWindow, Rows: MonitorRows})
		if err != nil {
			return // a profile NewLive refuses was refused when it was read
		}
		l, _ = e.challenges.monitors.LoadOrStore(k, live)
	}
	live, table := l.(*drift.Live), x.in.Table
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
// model has no reference to measure drift against, or that has scored
// no row since its version was deployed.
var ErrNotMonitored = errors.New("scoring: the endpoint's drift is not measured")

// Drift compares what endpoint's rows and its model's answers looked like
// over the last [MonitorWindow] (at most [MonitorRows] rows) with the
// reference of the version its model names now, as st holds it: per
// input, the population stability index, the Jensen-Shannon distance,
// the change of the missing rate and the shares out of range and unseen,
// with both histograms; the same for the prediction. The figures are
// this replica's. It also returns the reference, whose bins the
// histograms count, and the version measured.
func (q *Queues) Drift(st *registry.State, endpoint process.EndpointRef, model string) (*drift.Report, *drift.Profile, string, error) {
	q.challenges.pruneMonitors(st)
	version, err := st.ResolveModel(model)
	if err != nil {
		return nil, nil, "", ErrNotMonitored
	}
	l, ok := q.challenges.monitors.Load(monitorKey{endpoint, version})
	if !ok {
		return nil, nil, version, ErrNotMonitored
	}
	live := l.(*drift.Live)
	r, err := drift.Compare(live.Profile(), live.Snapshot())
	return r, live.Profile(), version, err
}

// pruneMonitors drops the live profiles of endpoints and versions st no
// longer deploys, so that they are bounded by the deployed versions.
func (c *Challenges) pruneMonitors(st *registry.State) {
	live := map[monitorKey]bool{}
	deployed(st, func(k championKey, _ registry.Endpoint) { live[k] = true })
	dropAllBut(&c.monitors, live)
}

// MonitoredEndpoint is the drift of one endpoint as [Queues.Drifts]
// returns it.
type MonitoredEndpoint struct {
	Endpoint process.EndpointRef
	Version  string
	Report   *drift.Report
}

// Drifts returns the drift of every endpoint st deploys that has scored
// rows against a reference.
func (q *Queues) Drifts(st *registry.State) []MonitoredEndpoint {
	q.challenges.pruneMonitors(st)
	var out []MonitoredEndpoint
	q.challenges.monitors.Range(func(k, l any) bool {
		mk, live := k.(monitorKey), l.(*drift.Live)
		if r, err := drift.Compare(live.Profile(), live.Snapshot()); err == nil {
			out = append(out, MonitoredEndpoint{Endpoint: mk.endpoint, Version: mk.champion, Report: r})
		}
		return true
	})
	return out
}
