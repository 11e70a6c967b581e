package scorehub

import (
	"github.com/scorehub/scorehub/registry/outcomes"
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/scorehub/scorehub/metrics"
	"github.com/scorehub/scorehub/scoring"
)

// metricsPath is where [Service.Handler] serves the Prometheus metrics. It
// takes no token, like the metrics port of AI Hub's agents: the figures
// name endpoints and queues but hold no data or credentials. A host that
// does not want them reachable from the public side sets
// Config.MetricsApart and serves [Service.MetricsHandler] elsewhere.
const metricsPath = "/metrics"

// newMetrics registers scorehub's metrics and the Go runtime and process
// collectors on a registry of the service's own.
func newMetrics(queues *scoring.Queues, log outcomes.Store) (*metrics.Metrics, *prometheus.Registry, error) {
	prom := prometheus.NewRegistry()
	if err := prom.Register(collectors.NewGoCollector()); err != nil {
		return nil, nil, err
	}
	if err := prom.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
		return nil, nil, err
	}
	m, err := metrics.New(metrics.Config{Registerer: prom, Queues: queues, Outcomes: log})
	if err != nil {
		return nil, nil, err
	}
	return m, prom, nil
}

// metricsHandler serves what prom gathers.
func metricsHandler(prom *prometheus.Registry, logger *slog.Logger) http.Handler {
	return promhttp.HandlerFor(prom, promhttp.HandlerOpts{
		// A figure that cannot be read (the job store failing) is logged and
		// left out; the rest of the scrape is still served.
		ErrorLog:      slog.NewLogLogger(logger.Handler(), slog.LevelError),
		ErrorHandling: promhttp.ContinueOnError,
	})
}
