// Package httperr is scorehub's one way of telling a client that something
// went wrong: the [Error] type, the mapping [From] of every error value to a
// status and a stable type code, and [Write], which sends
// {"error":{"type":…,"message":…,"pointer":…}} (with "fields":[{"pointer":…,
// "message":…},…] when several places in the request are at fault) and logs
// what the client must not see.
package httperr
