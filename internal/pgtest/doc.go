// Package pgtest starts real PostgreSQL servers for tests: the server
// binaries of the machine (Debian's package postgresql) run an initdb'd
// cluster in a temporary directory, listening on a free port of 127.0.0.1
// only, with its unix sockets in that directory.
//
// [DB] is what most tests want: a fresh database, created for the test and
// dropped after it, on one server that the whole test binary shares
// (creating a database takes milliseconds, initdb a second or more). A
// package whose tests use it stops that server at the end of the binary
// with [Main]:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
// [New] starts a server of the test's own, which the test may take away
// and bring back ([Server.Stop], [Server.Start], [Server.Restart]) on the
// same port and data, to test what clients do while the database is down.
//
// The server refuses to run as root, so where the tests do (as CI does) it
// runs as the postgres user, in a directory that user owns. Connections
// from 127.0.0.1 are trusted for the superuser; tests connect as a role of
// their own ([Role]) that logs in with a password, so that a test can
// check that the password appears in no error or log. Where the server
// binaries are missing a test skips with the command that installs them,
// or fails where every test must run (package internal/testenv).
package pgtest
