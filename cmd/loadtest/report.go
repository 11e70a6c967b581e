package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
)

// report is the outcome of a run, as -json writes it.
type report struct {
	Machine    machine    `json:"machine"`
	Clients    []int      `json:"clients"` // the numbers of concurrent clients measured, in order
	Rounds     int        `json:"rounds"`
	Duration   string     `json:"duration"`
	Warmup     string     `json:"warmup"`
	ScoringURL string     `json:"scoringUrl"`          // the endpoint measured: under -auth, the protected one; under -challenger and -monitor, the pair's first
	ServerEnv  []string   `json:"serverEnv,omitempty"` // settings added to the scoring server's environment
	Bare       []bareInfo `json:"bare,omitempty"`      // the bare handlers, in the order they ran; none under -auth
	Scenarios  []summary  `json:"scenarios"`
	Ratios     []ratio    `json:"ratios"`
	// Auth, under -auth, is the kind of credentials ("basic", "apitoken",
	// "bearer") the protected endpoint was called with. Its scenarios are
	// then "protected" and "unprotected" instead of "scoring" and "bare",
	// and each ratio is protected over unprotected requests per second.
	Auth string `json:"auth,omitempty"`
	// UnprotectedURL, under -auth, is the endpoint the protected one is a
	// copy of, in a group that takes no credentials.
	UnprotectedURL string `json:"unprotectedUrl,omitempty"`
	// Pair, under -challenger and -monitor, is the pair of endpoints
	// measured: under -challenger "shadowed", with a shadow challenger,
	// and "plain"; under -monitor "monitored", with its monitor on, and
	// "unmonitored". They name the scenarios, and each ratio is the
	// first's requests per second over the second's.
	Pair *pairReport `json:"pair,omitempty"`
	// Boundary, when bare handlers ran in both places, is per request
	// size the bare process's requests/s over the bare handler's in the
	// harness: the most that any server in a process of its own, scoring
	// included, can reach of the bare handler in the harness.
	Boundary []ratio `json:"processBoundary,omitempty"`
	// Large is the large-request comparison, when -large asked for one,
	// but for a pair's, which is its own (Pair.Large).
	Large *largeReport `json:"large,omitempty"`
}

// bareInfo says where a bare handler ran and at which URL.
type bareInfo struct {
	Where string `json:"where"` // "process" or "harness"
	URL   string `json:"url"`
}

// ratio compares scoring with a bare handler, a protected endpoint with
// the same one unprotected, or an endpoint with a challenger or a monitor
// with the same one without, at one request size.
type ratio struct {
	Rows    int       `json:"rows"`
	Clients int       `json:"clients"`
	Bare    string    `json:"bare,omitempty"`   // where the bare handler ran
	Ratio   float64   `json:"ratio"`            // the median of Rounds
	Rounds  []float64 `json:"rounds"`           // each round's scoring (protected) requests/s over bare (unprotected) requests/s
	Target  float64   `json:"target,omitempty"` // what Ratio should reach, where there is a target
	// CPURatio is the bare (unprotected) run's CPU time per request over
	// the scoring (protected) run's, each the harness's and the server's:
	// the throughput ratio the two would reach on CPUs of their own. Zero
	// when not measured.
	CPURatio float64 `json:"cpuRatio,omitempty"`
	// Shadow, under -challenger, is what the shadow challenger did over
	// the runs of this size, warm-up included.
	Shadow *shadowWork `json:"shadow,omitempty"`
}

// rowsText is "1 row" or "n rows".
func rowsText(n int) string {
	if n == 1 {
		return "1 row"
	}
	return fmt.Sprintf("%d rows", n)
}

// formatRatios lists ratios with two decimals.
func formatRatios(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("%.2f", x)
	}
	return strings.Join(parts, ", ")
}

// machine says where the figures come from.
type machine struct {
	CPU  string `json:"cpu"`
	CPUs int    `json:"cpus"`
	Go   string `json:"go"`
	OS   string `json:"os"`
}

func currentMachine() machine {
	return machine{CPU: cpuModel(), CPUs: runtime.NumCPU(), Go: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH}
}

// cpuModel returns the processor's model name where the system says it
// (Linux), else "unknown".
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// writeTable writes the report for people.
func (r *report) writeTable(w io.Writer) error {
	bw := bufio.NewWriter(w)
	primary, reference := r.names()
	runs := "scoring run and a bare run"
	switch {
	case r.Auth != "":
		runs = "protected run and an unprotected run"
	case r.Pair != nil:
		runs = r.Pair.Measured + " run and " + article(r.Pair.Ceiling) + " " + r.Pair.Ceiling + " run"
	}
	fmt.Fprintf(bw, "clients %s, %d rounds of a %s %s of as many requests, after %s of warm-up\n",
		joinInts(r.Clients), r.Rounds, r.Duration, runs, r.Warmup)
	switch {
	case r.Auth != "":
		fmt.Fprintf(bw, "protected   %s (Authorization: %s)\n", r.ScoringURL, authText(r.Auth))
		fmt.Fprintf(bw, "unprotected %s\n", r.UnprotectedURL)
	case r.Pair != nil:
		about, width := r.Pair.about(), max(len(r.Pair.Measured), len(r.Pair.Ceiling))
		fmt.Fprintf(bw, "%-*s %s (%s)\n", width, r.Pair.Measured, r.ScoringURL, about[0])
		fmt.Fprintf(bw, "%-*s %s (%s)\n", width, r.Pair.Ceiling, r.Pair.CeilingURL, about[1])
	default:
		fmt.Fprintf(bw, "scoring %s\n", r.ScoringURL)
	}
	if len(r.ServerEnv) > 0 {
		fmt.Fprintf(bw, "        its server's environment adds %s\n", strings.Join(r.ServerEnv, " "))
	}
	for _, b := range r.Bare {
		fmt.Fprintf(bw, "bare    %s (%s)\n", b.URL, placeText(b.Where))
	}
	fmt.Fprintf(bw, "machine %s, %d CPUs, %s %s\n\n", r.Machine.CPU, r.Machine.CPUs, r.Machine.Go, r.Machine.OS)
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tclients\trows\trequests\terrors\treq/s\tp50 ms\tp90 ms\tp99 ms")
	for _, s := range r.Scenarios {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.0f\t%.3f\t%.3f\t%.3f\n",
			r.label(s.Scenario, s.Bare), s.Clients, s.Rows, s.Requests, s.Errors, s.RPS, s.P50ms, s.P90ms, s.P99ms)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(bw)
	for _, ra := range r.Ratios {
		fmt.Fprintf(bw, "%s/%s req/s, %s, %d clients: %.2f median of %s", primary, r.label(reference, ra.Bare), rowsText(ra.Rows), ra.Clients, ra.Ratio, formatRatios(ra.Rounds))
		if ra.Target > 0 {
			verdict := "met"
			if ra.Ratio < ra.Target {
				verdict = "not met"
			}
			fmt.Fprintf(bw, " (target %.2f: %s)", ra.Target, verdict)
		}
		fmt.Fprintln(bw)
		if ra.Shadow != nil {
			fmt.Fprintf(bw, "  shadow meanwhile, warm-up included: %s\n", ra.Shadow.text())
		}
	}
	for _, ra := range r.Boundary {
		fmt.Fprintf(bw, "%s/%s req/s, %s, %d clients: %.2f median of %s (the process boundary alone)\n",
			r.label("bare", bareProcess), r.label("bare", bareHarness), rowsText(ra.Rows), ra.Clients, ra.Ratio, formatRatios(ra.Rounds))
	}
	for _, ra := range r.Ratios {
		sc, b, ok := r.pair(ra)
		if !ok || sc.ServerCPU == 0 || b.HarnessCPU == 0 || (ra.Bare != bareHarness && b.ServerCPU == 0) {
			continue
		}
		bare := fmt.Sprintf("%.1f µs (clients and handler)", b.HarnessCPU)
		if ra.Bare != bareHarness {
			bare = fmt.Sprintf("%.1f µs (clients %.1f + server %.1f)", b.HarnessCPU+b.ServerCPU, b.HarnessCPU, b.ServerCPU)
		}
		ref := r.label(reference, ra.Bare)
		fmt.Fprintf(bw, "CPU per request, %s, %d clients: %s %.1f µs (clients %.1f + server %.1f), %s %s; %s/%s %.2f",
			rowsText(sc.Rows), sc.Clients, primary, sc.HarnessCPU+sc.ServerCPU, sc.HarnessCPU, sc.ServerCPU, ref, bare, ref, primary, ra.CPURatio)
		if ra.Bare != bareHarness && b.ServerCPU > 0 {
			fmt.Fprintf(bw, "; server %s/%s %.2f", primary, ref, sc.ServerCPU/b.ServerCPU)
		}
		fmt.Fprintln(bw)
	}
	if r.Large != nil {
		r.Large.write(bw)
	}
	if r.Pair != nil && r.Pair.Large != nil {
		r.Pair.Large.write(bw)
	}
	if r.Pair != nil && r.Pair.Drift != nil {
		r.Pair.writeDrift(bw)
	}
	for _, s := range r.Scenarios {
		if s.FirstError != "" {
			fmt.Fprintf(bw, "first error, %s %d rows: %s\n", r.label(s.Scenario, s.Bare), s.Rows, s.FirstError)
		}
	}
	return bw.Flush()
}

// placeText says in words where a bare handler ran.
func placeText(where string) string {
	if where == bareHarness {
		return "in the harness's process"
	}
	return "in a process of its own"
}

// label names a scenario in the table: "bare" alone when one bare handler
// ran, "bare (process)" and "bare (harness)" when two did.
func (r *report) label(scenario, where string) string {
	if where == "" || len(r.Bare) < 2 {
		return scenario
	}
	return scenario + " (" + where + ")"
}

// names returns the scenarios a ratio compares: "scoring" and "bare",
// under -auth "protected" and "unprotected", under -challenger and
// -monitor the pair's.
func (r *report) names() (primary, reference string) {
	switch {
	case r.Auth != "":
		return "protected", "unprotected"
	case r.Pair != nil:
		return r.Pair.Measured, r.Pair.Ceiling
	}
	return "scoring", "bare"
}

// pair returns the summaries that ra compares: scoring and bare, or
// protected and unprotected.
func (r *report) pair(ra ratio) (scored, bare summary, ok bool) {
	primary, reference := r.names()
	var haveScored, haveBare bool
	for _, s := range r.Scenarios {
		switch {
		case s.Rows != ra.Rows || s.Clients != ra.Clients:
		case s.Scenario == primary:
			scored, haveScored = s, true
		case s.Scenario == reference && s.Bare == ra.Bare:
			bare, haveBare = s, true
		}
	}
	return scored, bare, haveScored && haveBare
}

// article is the indefinite article of word: "an" before a vowel.
func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}

// joinInts lists v separated by commas.
func joinInts(v []int) string {
	parts := make([]string, len(v))
	for i, n := range v {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ", ")
}
