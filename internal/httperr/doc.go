// Package httperr is scorehub's one way of telling a client that something
// went wrong: the [Error] type, which carries a whole answer (status, type
// code, message, pointer, fields and the headers the answer needs), the one
// table of type codes and their statuses ([StatusOf]), the mapping [From] of
// every error value to an Error, and [Write], which sends
// {"error":{"type":…,"message":…,"pointer":…}} (with "fields":[{"pointer":…,
// "message":…},…] when several places in the request are at fault) and logs
// what the client must not see.
//
// Domain packages do not import httperr to say what their errors are. An
// error anywhere in a chain may have these methods, which From looks for:
//
//	ErrorType() string     // a type code of this package, e.g. "not_found"
//	ClientMessage() string // a sentence safe to show; else a generic one
//	ErrorPointer() string  // the JSON pointer of the place at fault
//	RetryAfter() time.Duration // when to try again (sent as Retry-After)
//
// So the registry's "deployment \"g/p\" does not exist" reaches the client
// as 404 not_found with that sentence, while its Go error chain goes only to
// the log.
package httperr
