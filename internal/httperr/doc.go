// Package httperr is scorehub's one way of telling a client that something
// went wrong: the one table of [problem.Code]s and their statuses
// ([StatusOf]), the mapping [From] of every error value to the answer a
// client gets, and [Write], which sends
// {"error":{"type":…,"message":…,"pointer":…}} (with "fields":[{"pointer":…,
// "message":…},…] when several places in the request are at fault) with
// the headers the answer carries, and logs what the client must not see.
//
// Domain packages do not import httperr: their errors are
// [*problem.Error] values, or wrap one, and say what they are through its
// Code. So the registry's "deployment \"g/p\" does not exist" reaches the
// client as 404 not_found with that sentence, while its Go error chain goes
// only to the log.
package httperr
