package main

import (
	"math"
	"slices"
	"time"
)

// percentile returns the p-th percentile (0 < p ≤ 100) of sorted, an
// ascending slice, by the nearest-rank method: the smallest value that at
// least p percent of the values do not exceed. It returns 0 for an empty
// slice.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// median returns the middle value of v (the mean of the two middle ones
// for an even count), 0 for none. It does not modify v.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(v))
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// merge returns r and o as one run: counts and times added, latencies
// together, r's first error if it had one.
func (r result) merge(o result) result {
	r.ok += o.ok
	r.errors += o.errors
	r.elapsed += o.elapsed
	r.latencies = append(r.latencies, o.latencies...)
	r.cpu = r.cpu.add(o.cpu)
	if r.firstError == "" {
		r.firstError = o.firstError
	}
	return r
}

// rps is the requests answered 200 per second, 0 for a run of no time.
func (r result) rps() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.ok) / r.elapsed.Seconds()
}

// summary is what a scenario reports.
type summary struct {
	Scenario string  `json:"scenario"`       // "scoring" or "bare"; "protected" or "unprotected" under -auth; "shadowed" or "plain" under -challenger; "monitored" or "unmonitored" under -monitor
	Bare     string  `json:"bare,omitempty"` // where the bare handler ran, for "bare"
	Rows     int     `json:"rows"`
	Clients  int     `json:"clients"`
	Requests int64   `json:"requests"`          // answered 200
	Errors   int64   `json:"errors"`            // failed or answered otherwise
	Seconds  float64 `json:"seconds"`           // measured, over all rounds
	RPS      float64 `json:"requestsPerSecond"` // of Requests
	P50ms    float64 `json:"p50Ms"`
	P90ms    float64 `json:"p90Ms"`
	P99ms    float64 `json:"p99Ms"`
	// HarnessCPU is the CPU time of this process per request, µs: the
	// clients, and the bare handler too when it runs in the harness.
	// ServerCPU is the server process's, the scoring server's or the bare
	// process's, when the harness started it (Linux only). Zero means not
	// measured. Unlike requests per second they hardly depend on
	// what else the machine runs.
	HarnessCPU float64 `json:"harnessCpuUsPerRequest,omitempty"`
	ServerCPU  float64 `json:"serverCpuUsPerRequest,omitempty"`
	FirstError string  `json:"firstError,omitempty"`
}

// summarize turns a result into a summary; it sorts r.latencies.
func summarize(scenario string, rows, clients int, r result) summary {
	slices.Sort(r.latencies)
	s := summary{
		Scenario: scenario, Rows: rows, Clients: clients,
		Requests: r.ok, Errors: r.errors, Seconds: r.elapsed.Seconds(),
		P50ms:      ms(percentile(r.latencies, 50)),
		P90ms:      ms(percentile(r.latencies, 90)),
		P99ms:      ms(percentile(r.latencies, 99)),
		FirstError: r.firstError,
	}
	s.RPS = r.rps()
	if n := r.ok + r.errors; n > 0 {
		if r.cpu.harness > 0 {
			s.HarnessCPU = float64(r.cpu.harness) / float64(time.Microsecond) / float64(n)
		}
		if r.cpu.server > 0 {
			s.ServerCPU = float64(r.cpu.server) / float64(time.Microsecond) / float64(n)
		}
	}
	return s
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
