package accounts

import (
	"fmt"

	"github.com/scorehub/scorehub/internal/image"
	"github.com/scorehub/scorehub/problem"
)

// Errors of [Book] and of [Store]s. The Book wraps them with a
// sentence naming the user or token at fault (never a password or a
// token's secret); match them with [errors.Is]. Each is a
// [*problem.Error], whose code and sentence say what it is to an HTTP edge,
// as do the errors that wrap them, which point at the field of the request
// at fault where there is one, so the edge hands them to its error writer
// as they are.
var (
	// ErrNotFound reports a user or API token that does not exist. When
	// a new API token names an owner that does not exist the error points
	// at "/owner" and its code is "invalid_reference".
	ErrNotFound = &problem.Error{Code: problem.NotFound, Text: "tokens: not found",
		Message: "nothing is stored under that name"}
	// ErrExists reports a create of a user name already taken, by a
	// stored or a read-only user, or of one that reads as such a name
	// but for case, normalisation or look-alike letters (the message
	// names the user).
	ErrExists = &problem.Error{Code: problem.AlreadyExists, Text: "tokens: already exists",
		Message: "the name is already taken"}
	// ErrReadOnly reports a change to a user of Config.ReadOnly,
	// which is managed where it comes from (the users file).
	ErrReadOnly = &problem.Error{Code: problem.Conflict, Text: "tokens: read-only user",
		Message: "the user is managed in the users file"}
	// ErrRevision reports a write that named a revision other than the
	// user's current one.
	ErrRevision = &problem.Error{Code: problem.PreconditionFailed, Text: "tokens: revision mismatch",
		Message: "the user has changed since it was read"}
	// ErrTooManyAPITokens reports a new API token for a user who has
	// Config.MaxAPITokensPerUser of them.
	ErrTooManyAPITokens = &problem.Error{Code: problem.Conflict, Text: "tokens: too many API tokens",
		Message: "the user has as many API tokens as allowed"}
	// ErrInvalid reports a field of a new or changed user or API token
	// that breaks a rule; the error points at the field ("/password",
	// "/groups/3", "/expiresAt", "/webApiGroups/0", …).
	ErrInvalid = &problem.Error{Code: problem.ValidationFailed, Text: "tokens: invalid",
		Message: "the request is not valid"}
	// ErrStale reports a commit whose base is no longer the stored state's
	// Seq: another writer committed in between. [Book] loads the store
	// again and retries; it returns ErrStale only when the store keeps
	// changing under it. It is the one stale error of every store
	// (accounts, signing keys, and those of package registry); it is
	// [tokens.ErrStale] and registry.ErrStale.
	ErrStale = image.ErrStale
	// ErrClosed reports use of a closed [Book] or [Store].
	ErrClosed = &problem.Error{Code: problem.Unavailable, Text: "tokens: accounts closed",
		Message: "the service is shutting down"}
)

// accountErrorf returns an error matching kind whose client message is the
// formatted sentence.
func accountErrorf(kind *problem.Error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	return kind.Detail("tokens: "+msg, msg)
}

// fieldError returns an error matching kind about the field at pointer.
func fieldError(kind *problem.Error, pointer, format string, args ...any) *problem.Error {
	msg := fmt.Sprintf(format, args...)
	return kind.Detail(fmt.Sprintf("tokens: %s: %s", pointer, msg), msg).At(pointer)
}

// invalidField returns an error matching [ErrInvalid] about the field at
// pointer.
func invalidField(pointer, format string, args ...any) error {
	return fieldError(ErrInvalid, pointer, format, args...)
}
