package main

import (
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/scorehub/scorehub/metrics"
	"github.com/scorehub/scorehub/scoring"
)

// metricsPath is where the Prometheus metrics are served. It takes no
// token, like the metrics port of AI Hub's agents: the figures name
// endpoints and queues but hold no data or credentials. An operator who
// does not want them reachable from the public side serves them on a
// listener of their own with -metrics-addr, or turns them off with
// -metrics=false.
const metricsPath = "/metrics"

// metricsMux serves h at GET metricsPath alone, for the metrics listener.
func metricsMux(h http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET "+metricsPath, h)
	return mux
}

// newMetrics registers scorehub's metrics and the Go runtime and process
// collectors on a registry of the server's own, and returns the metrics and
// the handler that serves them.
func newMetrics(queues *scoring.Queues, jobs *scoring.Jobs, logger *slog.Logger) (*metrics.Metrics, http.Handler, error) {
	prom := prometheus.NewRegistry()
	if err := prom.Register(collectors.NewGoCollector()); err != nil {
		return nil, nil, err
	}
	if err := prom.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
		return nil, nil, err
	}
	m, err := metrics.New(metrics.Config{Registerer: prom, Queues: queues, Jobs: jobs})
	if err != nil {
		return nil, nil, err
	}
	h := promhttp.HandlerFor(prom, promhttp.HandlerOpts{
		// A figure that cannot be read (the job store failing) is logged and
		// left out; the rest of the scrape is still served.
		ErrorLog:      slog.NewLogLogger(logger.Handler(), slog.LevelError),
		ErrorHandling: promhttp.ContinueOnError,
	})
	return m, h, nil
}
