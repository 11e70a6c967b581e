// Package problem is the one error type of scorehub: an [*Error] says what
// went wrong as a stable [Code] that clients and Go callers may branch on,
// a sentence safe to show the client, the place in the request at fault
// and the headers its answer needs, and keeps the cause for the log.
//
// The packages of the module return errors of this type, or errors that
// wrap one, wherever a client is to be told about them: the exported
// sentinels (registry.ErrNotFound, accounts.ErrRevision, scoring.ErrQueueFull,
// …) are *Error values that [errors.Is] matches, and the errors that say
// more about a case wrap them. So a host that embeds scorehub reads the
// code of an error it gets back with [errors.As]:
//
//	var p *problem.Error
//	if errors.As(err, &p) && p.Code == problem.NotFound { … }
//
// and a host's own handler, process or authorizer returns an *Error to
// choose what the client is told.
//
// Only the HTTP edge decides a status: scorehub's one table of codes and
// statuses and its one writer of
// {"error":{"type":…,"message":…,"pointer":…}} live beside its handlers,
// and every code declared here has its status in that table. A host's own
// code, which the table does not know, sets Error.Status.
//
// The package depends on the standard library only, so that every package
// of the module, the domain ones included, may import it.
package problem
