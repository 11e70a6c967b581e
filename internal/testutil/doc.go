// Package testutil holds the helpers that tests of several packages, and
// the end-to-end suites of the e2e module, share: a buffer that a server's
// goroutines may write while a test reads it, a clock the test moves by
// hand, the reading of the management API's list answers, a benchmark's
// CPU time, and a child process a crash test kills. It is imported by
// tests only.
package testutil
