package metrics

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/drift"
	"github.com/scorehub/scorehub/registry/jobs"
	"github.com/scorehub/scorehub/registry/outcomes"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring"
)

// queueCollector reads the live figures of every execution queue at scrape
// time. The queue label is bounded by the queues the registry defines (and
// any just deleted that still has executions).
type queueCollector struct {
	queues        *scoring.Queues
	running       *prometheus.Desc
	waiting       *prometheus.Desc
	maxConcurrent *prometheus.Desc
	maxWaiting    *prometheus.Desc
	executions    *prometheus.Desc
}

func newQueueCollector(q *scoring.Queues) *queueCollector {
	name := func(n string) string { return prometheus.BuildFQName(namespace, "queue", n) }
	queue := []string{"queue"}
	return &queueCollector{
		queues:        q,
		running:       prometheus.NewDesc(name("running"), "Executions holding a slot of the queue.", queue, nil),
		waiting:       prometheus.NewDesc(name("waiting"), "Executions waiting for a slot of the queue.", queue, nil),
		maxConcurrent: prometheus.NewDesc(name("max_concurrent"), "Slots of the queue: executions it runs at once.", queue, nil),
		maxWaiting:    prometheus.NewDesc(name("max_waiting"), "Executions the queue lets wait before it rejects more.", queue, nil),
		executions: prometheus.NewDesc(name("executions_total"),
			"Executions ended on the queue, by outcome: completed, failed, rejected (waiting list full), timed_out, cancelled.",
			[]string{"queue", "outcome"}, nil),
	}
}

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.running
	ch <- c.waiting
	ch <- c.maxConcurrent
	ch <- c.maxWaiting
	ch <- c.executions
}

func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.queues.Stats() {
		ch <- prometheus.MustNewConstMetric(c.running, prometheus.GaugeValue, float64(s.Running), s.Name)
		ch <- prometheus.MustNewConstMetric(c.waiting, prometheus.GaugeValue, float64(s.Waiting), s.Name)
		ch <- prometheus.MustNewConstMetric(c.maxConcurrent, prometheus.GaugeValue, float64(s.MaxConcurrent), s.Name)
		ch <- prometheus.MustNewConstMetric(c.maxWaiting, prometheus.GaugeValue, float64(s.MaxWaiting), s.Name)
		for _, o := range []struct {
			outcome string
			n       uint64
		}{
			{"completed", s.Completed}, {"failed", s.Failed}, {"rejected", s.Rejected},
			{"timed_out", s.TimedOut}, {"cancelled", s.Cancelled},
		} {
			ch <- prometheus.MustNewConstMetric(c.executions, prometheus.CounterValue, float64(o.n), s.Name, o.outcome)
		}
	}
}

// jobsCollector reads how many jobs are in each state at scrape time.
type jobsCollector struct {
	jobs    *scoring.Jobs
	timeout time.Duration
	desc    *prometheus.Desc
}

// JobsCollector returns the gauge scorehub_jobs, the number of jobs jobs
// keeps in each state, read at every scrape within timeout (zero means 5 s,
// within Prometheus's default scrape timeout). Register it beside the
// [Metrics] once the jobs runner exists: the runner's credential checks
// report to the Metrics, so it is built after them.
func JobsCollector(jobs *scoring.Jobs, timeout time.Duration) prometheus.Collector {
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	return &jobsCollector{
		jobs:    jobs,
		timeout: timeout,
		desc: prometheus.NewDesc(prometheus.BuildFQName(namespace, "", "jobs"),
			"Execution jobs kept, by state.", []string{"state"}, nil),
	}
}

func (c *jobsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect reports a failure to read the counts as an invalid metric, which
// the scrape handler reports (promhttp's ErrorHandling decides whether the
// rest of the scrape is still served).
func (c *jobsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	counts, err := c.jobs.Counts(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, fmt.Errorf("metrics: count jobs: %w", err))
		return
	}
	for _, s := range jobs.States() {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(counts[s]), string(s))
	}
}

// challengerCollector reads, at scrape time, what the champions and
// challengers of endpoints did in this process. Its champion and
// challenger labels ("churn@3") are bounded by the versions endpoints
// deploy: the figures of a pair no longer deployed are dropped.
type challengerCollector struct {
	queues                               *scoring.Queues
	compared, agreed, answered, skipped  *prometheus.Desc
	errors, unavailable, delta, duration *prometheus.Desc
}

func newChallengerCollector(q *scoring.Queues) *challengerCollector {
	name := func(n string) string { return prometheus.BuildFQName(namespace, "challenger", n) }
	pair := []string{"group", "path", "alias", "champion", "challenger", "mode"}
	return &challengerCollector{
		queues:   q,
		compared: prometheus.NewDesc(name("rows_compared_total"), "Rows a shadow challenger and the endpoint's model both answered.", pair, nil),
		agreed: prometheus.NewDesc(name("rows_agreed_total"),
			"Rows compared on which the challenger and the endpoint's model agree: the same predicted class, or the same prediction.", pair, nil),
		answered: prometheus.NewDesc(name("rows_answered_total"), "Rows a split challenger answered instead of the endpoint's model.", pair, nil),
		skipped: prometheus.NewDesc(name("rows_skipped_total"),
			"Rows a shadow challenger did not score because as many shadows ran as the budget allows.", pair, nil),
		errors: prometheus.NewDesc(name("errors_total"), "Failed executions of the challenger.", pair, nil),
		unavailable: prometheus.NewDesc(name("unavailable_total"),
			"Requests the challenger could not score: its model could not be had or answers other columns than the endpoint's.", pair, nil),
		delta: prometheus.NewDesc(name("delta"),
			"|Δ confidence| of the class the endpoint's model predicted (a classifier) or |Δ prediction| (a regressor), over the rows compared.", pair, nil),
		duration: prometheus.NewDesc(name("duration_seconds"), "How long the challenger took over its rows.", pair, nil),
	}
}

func (c *challengerCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.compared, c.agreed, c.answered, c.skipped, c.errors, c.unavailable, c.delta, c.duration} {
		ch <- d
	}
}

func (c *challengerCollector) Collect(ch chan<- prometheus.Metric) {
	for _, e := range c.queues.Challenges().All(c.queues.Registry().Snapshot().State()) {
		for _, p := range e.Comparisons {
			l := []string{e.Endpoint.Group, e.Endpoint.Path, e.Endpoint.Alias, p.Champion, p.Challenger, p.Mode}
			for _, v := range []struct {
				d *prometheus.Desc
				n uint64
			}{{c.compared, p.Compared}, {c.agreed, p.Agreed}, {c.answered, p.Answered}, {c.skipped, p.Skipped}, {c.errors, p.Errors}, {c.unavailable, p.Unavailable}} {
				ch <- prometheus.MustNewConstMetric(v.d, prometheus.CounterValue, float64(v.n), l...)
			}
			ch <- constHistogram(c.delta, p.Delta, l)
			ch <- constHistogram(c.duration, p.ChallengerLatency, l)
		}
	}
}

// constHistogram is h as a Prometheus histogram of cumulative buckets.
func constHistogram(d *prometheus.Desc, h scoring.Histogram, labels []string) prometheus.Metric {
	buckets := make(map[float64]uint64, len(h.Bounds))
	var cum uint64
	for i, b := range h.Bounds {
		cum += h.Counts[i]
		buckets[b] = cum
	}
	return prometheus.MustNewConstHistogram(d, h.Count, h.Sum, buckets, labels...)
}

// performanceCollector reads, at scrape time, the live performance of the
// models of each endpoint that keeps predictions, from the outcomes fed
// back in the last PerformanceWindow. Its model label is bounded by the
// versions the endpoint deploys now: its model's and its challengers'.
type performanceCollector struct {
	reg   *registry.Registry
	store outcomes.Store
	rows  *prometheus.Desc
	ratio map[string]*prometheus.Desc // by figure
}

func newPerformanceCollector(reg *registry.Registry, store outcomes.Store) *performanceCollector {
	labels := []string{"group", "path", "alias", "model", "role"}
	name := func(n string) string { return prometheus.BuildFQName(namespace, "model", n) }
	c := &performanceCollector{reg: reg, store: store,
		rows:  prometheus.NewDesc(name("feedback_rows"), "Rows of the model whose outcome was fed back in the last hour.", labels, nil),
		ratio: map[string]*prometheus.Desc{}}
	for _, f := range []struct{ name, help string }{
		{"accuracy", "Share of the rows fed back in the last hour that the model predicted right."},
		{"log_loss", "Mean negative log of the confidence the model gave the outcome, over the rows fed back in the last hour."},
		{"brier", "Brier score of a two-class model over the rows fed back in the last hour."},
		{"roc_auc", "Area under the ROC curve of a two-class model over the rows fed back in the last hour."},
		{"mae", "Mean absolute error of a regressor over the rows fed back in the last hour."},
		{"rmse", "Root mean squared error of a regressor over the rows fed back in the last hour."},
		{"r2", "Coefficient of determination of a regressor over the rows fed back in the last hour."},
	} {
		c.ratio[f.name] = prometheus.NewDesc(name("live_"+f.name), f.help, labels, nil)
	}
	return c
}

func (c *performanceCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.rows
	for _, d := range c.ratio {
		ch <- d
	}
}

func (c *performanceCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.reg.Snapshot().State()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	since := time.Now().Add(-PerformanceWindow)
	for _, d := range st.Deployments() {
		for _, e := range d.Endpoints {
			if e.RowID == "" || e.Model == "" {
				continue
			}
			deployed := map[string]bool{}
			for _, ref := range e.Models() {
				if v, err := st.ResolveModel(ref); err == nil {
					deployed[v] = true
				}
			}
			ref := process.EndpointRef{Group: d.Group, Path: d.Path, Alias: e.Alias}
			joined, err := c.store.Joined(ctx, ref, since)
			if err != nil {
				ch <- prometheus.NewInvalidMetric(c.rows, fmt.Errorf("metrics: read the outcomes of %s/%s/%s: %w", d.Group, d.Path, e.Alias, err))
				continue
			}
			models, _ := outcomes.ByModel(joined, since)
			for _, m := range models {
				if !deployed[m.Model] {
					continue
				}
				l := []string{d.Group, d.Path, e.Alias, m.Model, m.Role}
				ch <- prometheus.MustNewConstMetric(c.rows, prometheus.GaugeValue, float64(m.Window.Rows), l...)
				for name, v := range map[string]*float64{"accuracy": m.Window.Accuracy, "log_loss": m.Window.LogLoss, "brier": m.Window.Brier,
					"roc_auc": m.Window.AUC, "mae": m.Window.MAE, "rmse": m.Window.RMSE, "r2": m.Window.R2} {
					if v != nil {
						ch <- prometheus.MustNewConstMetric(c.ratio[name], prometheus.GaugeValue, *v, l...)
					}
				}
			}
		}
	}
}

// driftCollector reads, at scrape time, how far each monitored endpoint's
// rows have drifted from its version's reference: a few series an
// endpoint, and one a feature only for an endpoint whose monitor asks
// for them (registry.Monitor.FeatureSeries), at most
// registry.MaxFeatureSeries of its inputs, so that a model of many
// features keeps the scrape small. Its model label is bounded by the
// deployed versions.
type driftCollector struct {
	queues                      *scoring.Queues
	maxPSI, shifted, prediction *prometheus.Desc
	rows, featurePSI            *prometheus.Desc
}

// DriftShifted is the PSI past which a feature counts as shifted in
// scorehub_drift_features_shifted.
const DriftShifted = 0.25

func newDriftCollector(q *scoring.Queues) *driftCollector {
	name := func(n string) string { return prometheus.BuildFQName(namespace, "drift", n) }
	labels := []string{"group", "path", "alias", "model"}
	return &driftCollector{queues: q,
		maxPSI:     prometheus.NewDesc(name("max_psi"), "The largest population stability index of the endpoint's inputs over its monitor's window, against its version's reference.", labels, nil),
		shifted:    prometheus.NewDesc(name("features_shifted"), "Inputs of the endpoint whose population stability index over its monitor's window is past 0.25.", labels, nil),
		prediction: prometheus.NewDesc(name("prediction_psi"), "The population stability index of the endpoint's predictions over its monitor's window, against its version's reference.", labels, nil),
		rows:       prometheus.NewDesc(name("rows"), "Rows in the window drift is measured over.", labels, nil),
		featurePSI: prometheus.NewDesc(name("feature_psi"), "The population stability index of one input of an endpoint that asks for a series per input, over its monitor's window.",
			append(labels, "feature"), nil),
	}
}

func (c *driftCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.maxPSI
	ch <- c.shifted
	ch <- c.prediction
	ch <- c.rows
	ch <- c.featurePSI
}

func (c *driftCollector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c.queues.Drifts(c.queues.Registry().Snapshot().State()) {
		l := []string{m.Endpoint.Group, m.Endpoint.Path, m.Endpoint.Alias, m.Version}
		largest, shifted, some := 0.0, 0, false
		for _, f := range m.Report.Features {
			if f.PSI == nil {
				continue
			}
			some = true
			largest = max(largest, *f.PSI)
			if *f.PSI > DriftShifted {
				shifted++
			}
		}
		ch <- prometheus.MustNewConstMetric(c.rows, prometheus.GaugeValue, float64(m.Report.Rows), l...)
		if some {
			ch <- prometheus.MustNewConstMetric(c.maxPSI, prometheus.GaugeValue, largest, l...)
		}
		ch <- prometheus.MustNewConstMetric(c.shifted, prometheus.GaugeValue, float64(shifted), l...)
		if p := m.Report.Prediction; p != nil && p.PSI != nil {
			ch <- prometheus.MustNewConstMetric(c.prediction, prometheus.GaugeValue, *p.PSI, l...)
		}
		if m.FeatureSeries {
			for _, f := range seriesFeatures(m) {
				ch <- prometheus.MustNewConstMetric(c.featurePSI, prometheus.GaugeValue, *f.PSI, append(l, f.Name)...)
			}
		}
	}
}

// seriesFeatures returns the inputs of m that get a series of their own:
// those with a PSI, at most registry.MaxFeatureSeries, the most important
// first when the reference ranks them, else in the model's order.
func seriesFeatures(m scoring.MonitoredEndpoint) []drift.FeatureReport {
	fs := make([]drift.FeatureReport, 0, len(m.Report.Features))
	for _, f := range m.Report.Features {
		if f.PSI != nil {
			fs = append(fs, f)
		}
	}
	if len(m.Importance) == len(m.Report.Features) {
		slices.SortStableFunc(fs, func(a, b drift.FeatureReport) int { return cmp.Compare(m.Importance[b.Name], m.Importance[a.Name]) })
	}
	return fs[:min(len(fs), registry.MaxFeatureSeries)]
}

// logCollector reads, at scrape time, what the prediction log and the
// payload log took and dropped: rows they could not keep because their
// store fell behind or refused them.
type logCollector struct {
	queues                        *scoring.Queues
	predictionsDropped            *prometheus.Desc
	payloadsSampled, payloadsLost *prometheus.Desc
}

func newLogCollector(q *scoring.Queues) *logCollector {
	return &logCollector{queues: q,
		predictionsDropped: prometheus.NewDesc(prometheus.BuildFQName(namespace, "predictions", "dropped_total"),
			"Predictions of rows with IDs that were not kept: the prediction log fell behind or refused them.", nil, nil),
		payloadsSampled: prometheus.NewDesc(prometheus.BuildFQName(namespace, "payloads", "sampled_total"),
			"Scored rows sampled for the payload log.", nil, nil),
		payloadsLost: prometheus.NewDesc(prometheus.BuildFQName(namespace, "payloads", "dropped_total"),
			"Sampled rows that were not logged: the payload log fell behind or refused them.", nil, nil),
	}
}

func (c *logCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.predictionsDropped
	ch <- c.payloadsSampled
	ch <- c.payloadsLost
}

func (c *logCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(c.predictionsDropped, prometheus.CounterValue, float64(c.queues.DroppedPredictions()))
	ch <- prometheus.MustNewConstMetric(c.payloadsSampled, prometheus.CounterValue, float64(c.queues.SampledPayloads()))
	ch <- prometheus.MustNewConstMetric(c.payloadsLost, prometheus.CounterValue, float64(c.queues.DroppedPayloads()))
}
