// Command loadtest measures scoring throughput over loopback against a
// ceiling: it starts the reference server (cmd/scorehub,
// built with `go build` unless -server-bin names a binary), drives its iris
// endpoint with N concurrent keep-alive clients for a fixed time (for each
// N of -clients, 16 and 32 by default), then sends
// the same number of requests to a bare net/http handler that reads the body
// and writes the same response bytes. It alternates the
// two for -rounds rounds and reports, for each request size, requests,
// errors, requests per second and p50/p90/p99 latency of both over all
// rounds, and the median of the rounds' ratios of scoring to bare requests
// per second: on a shared machine one disturbed round does not move it.
//
//	go run ./cmd/loadtest -clients 16,32 -duration 10s -rows 1,100
//	go run ./cmd/loadtest -json > run.json
//
// Then, unless -large is 0, it compares one large request (-large rows,
// 10,000 by default) across three servers, each in a process of its own:
// the scoring server; the loopback floor, the bare handler answering the
// scoring server's own answer to that request, which is what any server
// pays to read the body and write the answer; and a naive server written
// the way a Go developer first writes one (encoding/json into
// []map[string]any, the same demo model, encoding/json back). One
// request at a time over one connection (back to back, or with the
// client waiting -large-pause after each answer), -large-requests to each
// per round, the three alternating: it reports each one's median wall time
// per request and its server CPU time per request, the naive server's
// wall time over scoring's (target at least 5) and scoring's server CPU
// time over the floor's (target at most 3), each the median of the
// rounds' ratios.
//
// Where it sits: it is the client side of the data flow DESIGN.md describes
// (host mux → scoring handler → decode → queue → process → encode), run
// against a real server process, so that the figure includes HTTP parsing,
// the registry lookup and the execution queue. The bare handler shares the
// machine and the client, so the ratio isolates what scoring adds.
//
// By default the bare handler runs in a process of its own (the harness
// starts itself again to serve it), as the scoring server does, and the
// harness measures the CPU time of both server processes. -bare harness
// serves it from the harness's own process instead; there it shares the
// clients' Go runtime and skips the hand-over between two processes on
// every request, which on a 2-CPU machine makes it about a fifth faster
// than the same handler in a process of its own. -bare both runs one in
// each place, reports scoring against each, and reports the process
// boundary alone: the bare process's requests per second over the bare
// handler's in the harness, the most any server in a process of its own
// could reach against the latter.
//
// -auth basic, apitoken or bearer measures what credentials cost instead:
// through the management API, logged in as the admin, the harness makes a
// user, a web API group that takes only that kind of credentials from that
// user's group, and in it a copy of the endpoint (same process, queue and
// timeout), plus an API token or an idToken of the user's for the other
// two kinds. It then alternates runs of the protected copy, called with
// the credentials, with as many requests to the endpoint itself, and
// reports their ratio (for Basic, target 0.9 at 1 row) in place of the
// bare one.
// What it made is deleted when the run ends. It knows the admin password
// of a server it starts; at -server-url it needs -admin-password.
//
//	go run ./cmd/loadtest -auth basic -rows 1
//
// -challenger shadow measures what a shadow challenger costs its
// champion: through the management API, as the admin, the harness uploads
// XGBoost's iris classifier of the format's tests
// (registry/xgboost/testdata/iris_softprob.json under -module) twice, as
// versions 1 and 2 of a model of its own, and deploys, in the group of
// -path, one deployment of two endpoints on the default queue: plain,
// naming version 1, and shadowed, naming version 1 with version 2 as a
// shadow challenger. It alternates runs of shadowed with as many requests
// to plain and reports their ratio (target 0.9 at 1 row); then, unless
// -large is 0, it sends -large-row requests one at a time to the two in
// turn and reports the ratio of their median wall times per request, as
// the client sees them (target at most 1.2): the shadow runs after the
// answer, beside what comes next. After each comparison it reads the
// challenger's figures (GET /api/v1/endpoints/…/shadowed/challengers)
// and reports the rows the shadow compared and those it skipped, rows
// the server shed because its budget of shadows at once was spent. What
// it made is deleted when the run ends.
//
//	go run ./cmd/loadtest -challenger shadow -rows 1
//
// -monitor measures what drift monitoring costs on the scoring path: the
// harness uploads the same model once, with the demo's iris rows
// (internal/demo/iris.csv under -module, whose header names the model's
// four features and its label) as its reference, and deploys, in the
// group of -path, monitored, with no monitor member (on, with its
// defaults: every row scored counted in live histograms against the
// reference), and unmonitored, with "monitor": false. It measures the
// two against each other as -challenger does (targets 0.9 at 1 row and
// at most 1.15 of the wall time at -large rows) and, after the run,
// reads GET /api/v1/endpoints/…/monitored/drift and reports the rows the
// monitor measured (the newest at most of its window), and that
// unmonitored's drift is not measured. What it made is deleted when the
// run ends.
//
//	go run ./cmd/loadtest -monitor -rows 1
//
// -server-url points it at a server that is already running instead; the
// endpoint path is -path. The run ends by itself: every scenario is bounded
// by -duration and -max-requests, the bare one also by a time cap, and
// SIGINT stops it early.
package main
