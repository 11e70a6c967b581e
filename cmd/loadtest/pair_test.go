package main

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The runs of TestRunPaired: rounds, the rows of the large request, and
// large requests a round.
const pairRounds, pairLargeRows, pairLargeRequests = 2, 50, 3

// TestRunPaired runs the harness with -challenger shadow and with
// -monitor against the real server, started by the harness (-server-bin)
// and already running (-server-url), for a fraction of a second, and
// checks the report: the pair's two scenarios without errors, as many
// requests each, their ratio with its target, the large-request
// comparison of the two with its target, and what each mode adds; and
// that nothing the runs made is left on the running server.
func TestRunPaired(t *testing.T) {
	const password = "loadtest-admin-password"
	srv, bin := startStandalone(t, password), builtStandalone(t)
	modes := []struct {
		flags                 []string
		names                 [2]string
		rpsTarget, wallTarget float64
		check                 func(t *testing.T, rep *report) // what the mode adds
	}{
		{[]string{"-challenger", "shadow"}, [2]string{"shadowed", "plain"}, shadowTargetRatio, shadowLargeTarget, checkShadowed},
		{[]string{"-monitor"}, [2]string{"monitored", "unmonitored"}, monitorTargetRatio, monitorLargeTarget, checkMonitored},
	}
	for _, m := range modes {
		for name, where := range map[string][]string{
			"running": {"-server-url", srv.base, "-admin-password", password},
			"started": {"-server-bin", bin},
		} {
			t.Run(m.names[0]+"/"+name, func(t *testing.T) {
				rep := runReport(t, append(append(slices.Clone(m.flags), "-module", "../..", "-clients", "2", "-rounds", strconv.Itoa(pairRounds), "-duration", "100ms", "-warmup", "20ms",
					"-rows", "1", "-large", strconv.Itoa(pairLargeRows), "-large-requests", strconv.Itoa(pairLargeRequests), "-large-pause", "2ms", "-json"), where...)...)
				p := rep.Pair
				if p == nil {
					t.Fatalf("report %+v: no pair", rep)
				}
				if p.Measured != m.names[0] || p.Ceiling != m.names[1] || !strings.HasSuffix(rep.ScoringURL, "/"+m.names[0]) || !strings.HasSuffix(p.CeilingURL, "/"+m.names[1]) ||
					!strings.HasPrefix(p.Model, "loadtest-") || !strings.HasSuffix(p.Model, "@1") || len(rep.Bare) != 0 || rep.Large != nil {
					t.Errorf("%s at %s, %s at %s, model %s, bare %v, large %v; want %s", p.Measured, rep.ScoringURL, p.Ceiling, p.CeilingURL, p.Model, rep.Bare, rep.Large, m.names)
				}
				checkScenarioPairs(t, rep, m.names, 1)
				if len(rep.Ratios) != 1 {
					t.Fatalf("ratios %+v, want one", rep.Ratios)
				}
				if ra := rep.Ratios[0]; ra.Rows != 1 || len(ra.Rounds) != pairRounds || ra.Ratio != median(ra.Rounds) || ra.Ratio <= 0 || ra.Target != m.rpsTarget {
					t.Errorf("ratio %+v, want the median of %d rounds, target %v", ra, pairRounds, m.rpsTarget)
				}

				lr := p.Large
				if lr == nil {
					t.Fatalf("no large-request comparison of %s", m.names)
				}
				var names []string
				for _, s := range lr.Servers {
					names = append(names, s.Server)
					if s.Requests != pairRounds*pairLargeRequests || s.Errors != 0 || len(s.WallRounds) != pairRounds || s.WallMs != median(s.WallRounds) || s.WallMs <= 0 {
						t.Errorf("large, %s: %+v; want %d requests, no errors, a wall time per round", s.Server, s, pairRounds*pairLargeRequests)
					}
				}
				if diff := cmp.Diff(m.names[:], names); diff != "" {
					t.Errorf("large endpoints (-want +got):\n%s", diff)
				}
				if lr.PauseMs != 2 {
					t.Errorf("large: the client paused %v ms after each answer, want 2", lr.PauseMs)
				}
				if lr.Rows != pairLargeRows || len(lr.WallRounds) != pairRounds || lr.Wall != median(lr.WallRounds) || lr.Wall <= 0 || lr.Target != m.wallTarget {
					t.Errorf("large: %d rows, wall ratio %v of rounds %v, target %v; want target %v", lr.Rows, lr.Wall, lr.WallRounds, lr.Target, m.wallTarget)
				}
				m.check(t, rep)
			})
		}
	}

	// The runs at -server-url removed what they made.
	checkNothingLeft(t, srv.base, password, "/api/v1/models", "/api/v1/deployments")
}

// TestDeployPairRefused: without the files it uploads, -challenger or
// -monitor stops before it makes anything, naming the file and -module.
func TestDeployPairRefused(t *testing.T) {
	const base = "http://127.0.0.1:1"
	tests := []struct {
		name, file string
		deploy     func(moduleDir string) (*pair, error)
	}{
		{"challenger", pairModelFile, func(dir string) (*pair, error) {
			return deployChallenged(context.Background(), http.DefaultClient, base, irisPath, dir, challengeShadow, "pw")
		}},
		{"monitor", monitorReferenceFile, func(dir string) (*pair, error) {
			return deployMonitored(context.Background(), http.DefaultClient, base, irisPath, dir, "pw")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := tt.deploy(t.TempDir()); err == nil || !strings.Contains(err.Error(), tt.file) || !strings.Contains(err.Error(), "-module") {
				t.Errorf("deploy without %s: %v, want an error naming it and -module", tt.file, err)
			}
		})
	}
}
