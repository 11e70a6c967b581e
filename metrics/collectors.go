package metrics

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/scorehub/scorehub/registry/jobs"
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
