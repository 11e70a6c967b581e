package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseChallenger: -challenger takes "none", the default, and
// "shadow", keeps the large request, and takes the admin password of a
// running server.
func TestParseChallenger(t *testing.T) {
	tests := []struct {
		args           []string
		wantChallenger string
	}{
		{nil, ""},
		{[]string{"-challenger", "none"}, ""},
		{[]string{"-challenger", "shadow"}, challengeShadow},
		{[]string{"-challenger", "shadow", "-server-url", "http://b", "-admin-password", "secret"}, challengeShadow},
	}
	for _, tt := range tests {
		c, err := parseConfig(tt.args, io.Discard)
		if err != nil || c.Challenger != tt.wantChallenger || c.Large != 10_000 {
			t.Errorf("parseConfig(%q): -challenger %q, -large %d, %v; want %q and 10000", tt.args, c.Challenger, c.Large, err, tt.wantChallenger)
		}
	}
}

// TestRunShadowed runs the harness with -challenger shadow against the
// real server, started by the harness (-server-bin) and already running
// (-server-url), for a fraction of a second, and checks the report: a
// shadowed and a plain scenario without errors, as many requests each,
// their ratio with its target and what the shadow did, the large-request
// comparison of the two with its target, the shadow having been offered
// the rows of every request to shadowed and agreed with the champion,
// its own file, on every row it compared; and that nothing the run made
// is left on the running server.
func TestRunShadowed(t *testing.T) {
	const password = "loadtest-admin-password"
	srv := startStandalone(t, password)
	bin, err := standaloneBinary()
	if err != nil {
		t.Fatal(err)
	}
	const rounds, largeRows, largeRequests = 2, 50, 3
	for name, where := range map[string][]string{
		"running": {"-server-url", srv.base, "-admin-password", password},
		"started": {"-server-bin", bin},
	} {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append([]string{"-challenger", "shadow", "-module", "../..", "-clients", "2", "-rounds", strconv.Itoa(rounds), "-duration", "100ms", "-warmup", "20ms",
				"-rows", "1", "-large", strconv.Itoa(largeRows), "-large-requests", strconv.Itoa(largeRequests), "-json"}, where...)
			if err := run(context.Background(), args, &stdout, &stderr); err != nil {
				t.Fatalf("run: %v\n%s", err, stderr.String())
			}
			var rep report
			if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
				t.Fatalf("report %q: %v", stdout.String(), err)
			}
			if rep.Challenger != challengeShadow || !strings.HasSuffix(rep.ScoringURL, "/shadowed") || !strings.HasSuffix(rep.PlainURL, "/plain") ||
				!strings.HasSuffix(rep.Champion, "@1") || rep.ChallengerModel != strings.TrimSuffix(rep.Champion, "@1")+"@2" || len(rep.Bare) != 0 || rep.Large != nil {
				t.Errorf("challenger %q, shadowed %s, plain %s, champion %s, challenger %s, bare %v, large %v",
					rep.Challenger, rep.ScoringURL, rep.PlainURL, rep.Champion, rep.ChallengerModel, rep.Bare, rep.Large)
			}
			type shape struct {
				Scenario string
				Rows     int
				Errors   int64
			}
			var got []shape
			for _, s := range rep.Scenarios {
				got = append(got, shape{s.Scenario, s.Rows, s.Errors})
				if s.Requests == 0 || s.RPS <= 0 || s.P50ms <= 0 {
					t.Errorf("%s %d rows: %+v", s.Scenario, s.Rows, s)
				}
			}
			if diff := cmp.Diff([]shape{{"shadowed", 1, 0}, {"plain", 1, 0}}, got); diff != "" {
				t.Fatalf("scenarios (-want +got):\n%s", diff)
			}
			if s, p := rep.Scenarios[0], rep.Scenarios[1]; s.Requests != p.Requests {
				t.Errorf("shadowed answered %d requests, plain %d; want as many", s.Requests, p.Requests)
			}
			if len(rep.Ratios) != 1 {
				t.Fatalf("ratios %+v, want one", rep.Ratios)
			}
			ra := rep.Ratios[0]
			if ra.Rows != 1 || len(ra.Rounds) != rounds || ra.Ratio != median(ra.Rounds) || ra.Ratio <= 0 || ra.Target != shadowTargetRatio {
				t.Errorf("ratio %+v, want the median of %d rounds, target %v", ra, rounds, shadowTargetRatio)
			}
			// Every request to shadowed offered the shadow its row: at
			// least the measured ones, warm-up aside.
			if w := ra.Shadow; w == nil || w.Compared+w.Skipped < uint64(rep.Scenarios[0].Requests) || w.Agreed != w.Compared || w.Errors != 0 {
				t.Errorf("shadow over the 1-row runs: %+v, want the rows of at least %d requests, all agreed", w, rep.Scenarios[0].Requests)
			}

			lr := rep.ShadowLarge
			if lr == nil {
				t.Fatal("no large-request comparison of shadowed and plain")
			}
			var names []string
			for _, s := range lr.Servers {
				names = append(names, s.Server)
				if s.Requests != rounds*largeRequests || s.Errors != 0 || len(s.WallRounds) != rounds || s.WallMs != median(s.WallRounds) || s.WallMs <= 0 {
					t.Errorf("large, %s: %+v; want %d requests, no errors, a wall time per round", s.Server, s, rounds*largeRequests)
				}
			}
			if diff := cmp.Diff([]string{"shadowed", "plain"}, names); diff != "" {
				t.Errorf("large endpoints (-want +got):\n%s", diff)
			}
			if lr.Rows != largeRows || len(lr.WallRounds) != rounds || lr.Wall != median(lr.WallRounds) || lr.Wall <= 0 {
				t.Errorf("large: %d rows, shadowed/plain wall %v of rounds %v", lr.Rows, lr.Wall, lr.WallRounds)
			}
			// Two unmeasured requests and the measured ones each round;
			// the last shadow may still be running when the figures are
			// read.
			offered := uint64(rounds * (2 + largeRequests) * largeRows)
			if w := lr.Shadow; w.Compared+w.Skipped > offered || w.Compared+w.Skipped < offered-largeRows || w.Agreed != w.Compared || w.Errors != 0 {
				t.Errorf("shadow over the large requests: %+v, want %d rows offered, all agreed", w, offered)
			}
		})
	}

	// The run at -server-url removed what it made.
	admin := &manager{client: http.DefaultClient, base: srv.base, user: adminName, password: password}
	if err := admin.login(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, list := range []string{"/api/v1/models", "/api/v1/deployments"} {
		var raw json.RawMessage
		if err := admin.call(context.Background(), http.MethodGet, list, nil, &raw); err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(raw, []byte("loadtest")) {
			t.Errorf("GET %s after the runs: %s, want nothing the harness made", list, raw)
		}
	}
}

// TestDeployChallengedRefused: without the model file, -challenger stops
// before it makes anything, naming -module.
func TestDeployChallengedRefused(t *testing.T) {
	_, err := deployChallenged(context.Background(), http.DefaultClient, "http://127.0.0.1:1", irisPath, t.TempDir(), challengeShadow, "pw")
	if err == nil || !strings.Contains(err.Error(), shadowModelFile) || !strings.Contains(err.Error(), "-module") {
		t.Errorf("deploy without the model file: %v, want an error naming it and -module", err)
	}
}
