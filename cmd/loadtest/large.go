package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/scorehub/scorehub/internal/demo"
)

// The large-request peers, in the order each round drives them.
const (
	largeScoring = "scoring"
	// largeFloor reads the body and writes a canned answer as long as the
	// scoring server's: what any server pays for moving the bytes.
	largeFloor = "floor"
	// largeNaive is naiveHandler: encoding/json and []map[string]any.
	largeNaive = "naive"
)

// Targets of a large request: the scoring server's CPU time per request
// at most this many times the floor's, and its wall time at least this
// many times shorter than the naive server's.
const (
	largeCPUTarget     = 3
	largeSpeedupTarget = 5
)

// largeReport compares one size of large request across the scoring
// server and its two peers, each in a process of its own, each sent the
// requests one at a time over one connection, the three alternating
// round by round.
type largeReport struct {
	Rows          int           `json:"rows"`
	RequestBytes  int           `json:"requestBytes"`
	ResponseBytes int           `json:"responseBytes"`     // the scoring server's answer, which the floor sends too
	PauseMs       float64       `json:"pauseMs,omitempty"` // how long the client waited after each answer
	Servers       []largeServer `json:"servers"`
	// CPUOverFloor is the scoring server's CPU time per request over the
	// floor's, the median of the rounds' ratios in CPURounds; 0 when the
	// scoring server's CPU time could not be read.
	CPUOverFloor float64   `json:"cpuOverFloor,omitempty"`
	CPURounds    []float64 `json:"cpuOverFloorRounds,omitempty"`
	// Speedup is the naive server's median wall time per request over the
	// scoring server's, the median of the rounds' ratios in SpeedupRounds.
	Speedup       float64   `json:"naiveOverScoringWall"`
	SpeedupRounds []float64 `json:"naiveOverScoringWallRounds"`
}

// largeServer is what one server's large requests measured, over all
// rounds.
type largeServer struct {
	Server   string  `json:"server"`
	Requests int64   `json:"requests"`
	Errors   int64   `json:"errors"`
	WallMs   float64 `json:"wallMs"` // the median of WallRounds
	// WallRounds is each round's median wall time per request, ms, from
	// sending the request to reading the last byte of its answer.
	WallRounds []float64 `json:"wallMsRounds"`
	// ServerCPUMs is the server process's CPU time per request, ms, over
	// all rounds, read to the nanosecond from its threads; 0 when not
	// measured.
	ServerCPUMs float64 `json:"serverCpuMsPerRequest,omitempty"`
	FirstError  string  `json:"firstError,omitempty"`
}

// largePeer is a server a large request goes to.
type largePeer struct {
	name string
	url  string
	pid  int
}

// measureLarge starts the floor and the naive server, each in a process
// of its own, checks that each answers the large request, and runs
// cfg.Rounds rounds of cfg.LargeRequests requests to the scoring server
// at scoringURL (process scoringPID, 0 when unknown) and each peer in
// turn, after two unmeasured requests each.
func measureLarge(ctx context.Context, cfg config, scoringURL string, scoringPID int, response []byte, rep *report, stderr io.Writer) error {
	rows := cfg.Large
	floor, err := startBareProcess(ctx, map[string][]byte{barePath(rows): response}, time.Minute)
	if err != nil {
		return err
	}
	defer func() {
		if serr := floor.stop(30 * time.Second); serr != nil {
			fmt.Fprintln(stderr, serr)
		}
	}()
	naive, err := startNaiveProcess(ctx, time.Minute)
	if err != nil {
		return err
	}
	defer func() {
		if serr := naive.stop(30 * time.Second); serr != nil {
			fmt.Fprintln(stderr, serr)
		}
	}()
	peers := []largePeer{
		{largeScoring, scoringURL, scoringPID},
		{largeFloor, floor.base + barePath(rows), floor.cmd.Process.Pid},
		{largeNaive, naive.base + "/naive", naive.cmd.Process.Pid},
	}
	body := demo.IrisRequest(rows)
	client := newClient(1, cfg.Timeout)
	defer client.CloseIdleConnections()
	for _, p := range peers[1:] {
		resp, err := probe(ctx, client, target{url: p.url, body: body})
		if err != nil {
			return fmt.Errorf("loadtest: the %s server does not answer: %w", p.name, err)
		}
		if err := checkRows(resp, rows); err != nil {
			return fmt.Errorf("loadtest: the %s server: %w", p.name, err)
		}
	}
	lr := largeReport{Rows: rows, RequestBytes: len(body), ResponseBytes: len(response), PauseMs: ms(cfg.LargePause)}
	all, wall, cpu, err := largeRounds(ctx, cfg, client, peers, body, stderr)
	if err != nil {
		return err
	}
	for round := range cfg.Rounds {
		lr.SpeedupRounds = append(lr.SpeedupRounds, wall[2][round]/wall[0][round])
		if cpu[0][round] > 0 && cpu[1][round] > 0 {
			lr.CPURounds = append(lr.CPURounds, float64(cpu[0][round])/float64(cpu[1][round]))
		}
	}
	lr.Servers = largeServers(peers, all, wall)
	lr.Speedup = median(lr.SpeedupRounds)
	lr.CPUOverFloor = median(lr.CPURounds)
	rep.Large = &lr
	return nil
}

// largeRounds sends cfg.Large-row requests, body, to each of peers in
// turn, cfg.LargeRequests of them after two unmeasured ones, one at a
// time over client's one connection, for cfg.Rounds rounds. It returns
// each peer's results over all rounds and, for each peer and round, the
// median wall time per request, ms, and the server's CPU time.
func largeRounds(ctx context.Context, cfg config, client *http.Client, peers []largePeer, body []byte, stderr io.Writer) (all []result, wall [][]float64, cpu [][]time.Duration, err error) {
	names := make([]string, len(peers))
	for i, p := range peers {
		names[i] = p.name
	}
	fmt.Fprintf(stderr, "loadtest: %d-row requests one at a time: %d rounds of %d requests to each of %s\n",
		cfg.Large, cfg.Rounds, cfg.LargeRequests, strings.Join(names, ", "))
	all = make([]result, len(peers))
	wall = make([][]float64, len(peers))
	cpu = make([][]time.Duration, len(peers))
	limit := 4*cfg.Timeout*time.Duration(cfg.LargeRequests) + 10*time.Second
	for round := range cfg.Rounds {
		progress := fmt.Sprintf("loadtest: round %d:", round+1)
		for i, p := range peers {
			t := target{url: p.url, body: body}
			drive(ctx, client, t, 1, bounds{duration: limit, requests: 2})
			meter := cpuMeter{serverPID: p.pid, fine: true}
			s0 := meter.sample()
			r := drive(ctx, client, t, 1, bounds{duration: limit + time.Duration(cfg.LargeRequests)*cfg.LargePause, requests: int64(cfg.LargeRequests), pause: cfg.LargePause})
			r.cpu = s0.until(meter.sample())
			if ctx.Err() != nil {
				return nil, nil, nil, ctx.Err()
			}
			if r.ok == 0 {
				return nil, nil, nil, fmt.Errorf("%w: %s, %d rows, round %d: %s", errNoRequests, p.name, cfg.Large, round+1, r.firstError)
			}
			slices.Sort(r.latencies)
			med := ms(percentile(r.latencies, 50))
			wall[i] = append(wall[i], med)
			cpu[i] = append(cpu[i], r.cpu.server)
			all[i] = all[i].merge(r)
			progress += fmt.Sprintf(" %s %.1f ms", p.name, med)
		}
		fmt.Fprintln(stderr, progress)
	}
	return all, wall, cpu, nil
}

// largeServers summarizes what largeRounds measured of each peer.
func largeServers(peers []largePeer, all []result, wall [][]float64) []largeServer {
	out := make([]largeServer, len(peers))
	for i, p := range peers {
		r := all[i]
		s := largeServer{Server: p.name, Requests: r.ok, Errors: r.errors, WallMs: median(wall[i]), WallRounds: wall[i], FirstError: r.firstError}
		if n := r.ok + r.errors; n > 0 && r.cpu.server > 0 {
			s.ServerCPUMs = ms(r.cpu.server) / float64(n)
		}
		out[i] = s
	}
	return out
}

// write writes the large-request comparison for people.
func (lr *largeReport) write(w io.Writer) {
	fmt.Fprintf(w, "\n%s, %d bytes in, %d bytes out, one request at a time%s, each server in a process of its own:\n",
		rowsText(lr.Rows), lr.RequestBytes, lr.ResponseBytes, pacing(lr.PauseMs))
	writeLargeServers(w, lr.Servers)
	fmt.Fprintf(w, "naive/scoring wall: %.2f median of %s (target ≥ %d: %s)\n",
		lr.Speedup, formatRatios(lr.SpeedupRounds), largeSpeedupTarget, verdict(lr.Speedup >= largeSpeedupTarget))
	if lr.CPUOverFloor > 0 {
		fmt.Fprintf(w, "scoring/floor server CPU: %.2f median of %s (target ≤ %d: %s)\n",
			lr.CPUOverFloor, formatRatios(lr.CPURounds), largeCPUTarget, verdict(lr.CPUOverFloor <= largeCPUTarget))
	}
}

// writeLargeServers writes a line for each server's large requests.
func writeLargeServers(w io.Writer, servers []largeServer) {
	width := 8
	for _, s := range servers {
		width = max(width, len(s.Server))
	}
	for _, s := range servers {
		fmt.Fprintf(w, "  %-*s wall %.2f ms (median of rounds %s)", width, s.Server, s.WallMs, formatRatios(s.WallRounds))
		if s.ServerCPUMs > 0 {
			fmt.Fprintf(w, ", server CPU %.2f ms per request", s.ServerCPUMs)
		}
		fmt.Fprintf(w, ", %d requests, %d errors\n", s.Requests, s.Errors)
	}
}

func verdict(met bool) string {
	if met {
		return "met"
	}
	return "not met"
}
