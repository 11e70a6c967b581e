// Package harness runs the reference server, cmd/scorehub, for the
// end-to-end suites: [Main] sets a suite's test binary up to build the
// server once, [Start] runs it as a process of its own on a free loopback
// port, and the methods of [Server] talk to it as clients do, checking
// every answer against the server's OpenAPI document ([Conformance]).
// [Profiles] reads the server's goroutines and heap from its profiling
// listener, where a test in its process would have read package runtime.
//
// The server runs as a process, not in the test's own, so that the suites
// test what a user runs: its flags, environment, output, signals and exit
// status, and a crash is a real SIGKILL. A test binary built with -race
// builds the server with it too, and fails a test whose server reports a
// race.
package harness
