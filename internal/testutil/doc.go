// Package testutil holds the helpers that tests of several packages, and
// the end-to-end suites of the e2e module, share: a buffer that a server's
// goroutines may write while a test reads it, and the reading of the
// management API's list answers. It is imported by tests only.
package testutil
