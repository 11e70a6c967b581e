// Package redact keeps secrets out of log records. [Secrets] is the one
// function every logger of scorehub passes a request's path, query or a
// URL through before it becomes part of a record; [Handler] wraps a
// slog.Handler so that whatever else a record carries (a message, an
// error's text quoting a URL) is passed through it too.
//
// It recognises secrets by their form, not by where they were sent: API
// tokens (scorehub_ and base62), JSON Web Tokens (idTokens, a provider's
// access tokens), the password of a URL's user information
// (postgres://user:password@host), and the value of a query parameter or
// key=value pair whose name says it is a secret (access_token, password,
// …). A password sent alone in a path cannot be told from a name, and is
// not recognised: none of scorehub's routes takes one there.
package redact
