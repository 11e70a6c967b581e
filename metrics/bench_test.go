package metrics_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/scorehub/scorehub/metrics"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring"
)

// BenchmarkObserveRequest is the cost the metrics add to one scoring
// request, from all cores at once.
func BenchmarkObserveRequest(b *testing.B) {
	s := newSetup(b, false)
	m, err := metrics.New(metrics.Config{Registerer: prometheus.NewRegistry(), Queues: s.handler.Queues()})
	if err != nil {
		b.Fatal(err)
	}
	ep := process.EndpointRef{Group: registry.DefaultGroup, Path: "insurance", Alias: "score"}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.ObserveRequest(scoring.Observation{Endpoint: ep, Status: 200, Rows: 10, Duration: 3 * time.Millisecond})
		}
	})
}

// BenchmarkScoringRequest scores a one-row request in process, without and
// with the metrics as the handler's Observer.
func BenchmarkScoringRequest(b *testing.B) {
	for _, observed := range []bool{false, true} {
		name := "plain"
		if observed {
			name = "observed"
		}
		b.Run(name, func(b *testing.B) {
			s := newSetup(b, false)
			cfg := scoring.Config{Registry: s.reg, Queues: s.handler.Queues()}
			if observed {
				cfg.Observer = s.m
			}
			h, err := scoring.New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			const body = `{"data":[{"x":1.5}]}`
			b.ReportAllocs()
			for b.Loop() {
				r := httptest.NewRequest(http.MethodPost, "/DEFAULT/api/v1/services/insurance/score", strings.NewReader(body))
				r.Header.Set("Content-Type", "application/json")
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code != http.StatusOK {
					b.Fatal(w.Code, w.Body)
				}
			}
		})
	}
}
