package tokens

import (
	"fmt"

	"github.com/scorehub/scorehub/internal/image"
)

// Type codes of the errors of [Accounts], as the HTTP edge reads them
// through ErrorType (the codes of internal/httperr). The table that turns
// them into statuses is the edge's.
const (
	typeNotFound      = "not_found"
	typeAlreadyExists = "already_exists"
	typeConflict      = "conflict"
	typePrecondition  = "precondition_failed"
	typeValidation    = "validation_failed"
	typeInvalidRef    = "invalid_reference"
	typeUnavailable   = "unavailable"
)

// Errors of [Accounts] and of [AccountStore]s. Accounts wraps them with a
// sentence naming the user or token at fault (never a password or a
// token's secret); match them with [errors.Is]. Each says what it is to an
// HTTP edge through ErrorType() string and ClientMessage() string, and
// ErrorPointer() string where a field of the request is at fault, as do the
// errors that wrap them, so the edge hands them to its error writer as they
// are.
var (
	// ErrNotFound reports a user or API token that does not exist. When
	// a new API token names an owner that does not exist the error points
	// at "/owner" and its type is "invalid_reference".
	ErrNotFound error = &accountSentinel{"tokens: not found", typeNotFound, "nothing is stored under that name"}
	// ErrExists reports a create of a user name already taken, by a
	// stored or a read-only user.
	ErrExists error = &accountSentinel{"tokens: already exists", typeAlreadyExists, "the name is already taken"}
	// ErrReadOnly reports a change to a user of AccountsConfig.ReadOnly,
	// which is managed where it comes from (the users file).
	ErrReadOnly error = &accountSentinel{"tokens: read-only user", typeConflict, "the user is managed in the users file"}
	// ErrRevision reports a write that named a revision other than the
	// user's current one.
	ErrRevision error = &accountSentinel{"tokens: revision mismatch", typePrecondition, "the user has changed since it was read"}
	// ErrTooManyAPITokens reports a new API token for a user who has
	// AccountsConfig.MaxAPITokensPerUser of them.
	ErrTooManyAPITokens error = &accountSentinel{"tokens: too many API tokens", typeConflict, "the user has as many API tokens as allowed"}
	// ErrInvalid reports a field of a new or changed user or API token
	// that breaks a rule; the error points at the field ("/password",
	// "/groups/3", "/expiresAt", "/webApiGroups/0", …).
	ErrInvalid error = &accountSentinel{"tokens: invalid", typeValidation, "the request is not valid"}
	// ErrStale reports a commit whose base is no longer the stored state's
	// Seq: another writer committed in between. Accounts and [KeySet]
	// load the store again and retry; they return ErrStale only when the
	// store keeps changing under them. It is the one stale error of every
	// store (accounts, signing keys, and those of package registry, where
	// it is registry.ErrStale).
	ErrStale = image.ErrStale
	// ErrAccountsClosed reports use of a closed [Accounts] or
	// [AccountStore].
	ErrAccountsClosed error = &accountSentinel{"tokens: accounts closed", typeUnavailable, "the service is shutting down"}
)

// accountSentinel is one of the sentinel errors of Accounts: its text for
// logs, its type code and a sentence for a client that names nothing in
// particular.
type accountSentinel struct{ text, typ, client string }

func (e *accountSentinel) Error() string         { return e.text }
func (e *accountSentinel) ErrorType() string     { return e.typ }
func (e *accountSentinel) ClientMessage() string { return e.client }

// accountError is a sentinel with a sentence about the user, token or field
// at fault: the sentence is what a client is told, the sentinel what callers
// match. typ, when set, replaces the sentinel's type code.
type accountError struct {
	kind    error // an *accountSentinel
	typ     string
	pointer string
	msg     string
}

// accountErrorf returns an error matching kind whose client message is the
// formatted sentence.
func accountErrorf(kind error, format string, args ...any) error {
	return &accountError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// invalidField returns an error matching [ErrInvalid] about the field at
// pointer.
func invalidField(pointer, format string, args ...any) error {
	return &accountError{kind: ErrInvalid, pointer: pointer, msg: fmt.Sprintf(format, args...)}
}

func (e *accountError) Error() string {
	if e.pointer != "" {
		return fmt.Sprintf("tokens: %s: %s", e.pointer, e.msg)
	}
	return "tokens: " + e.msg
}

func (e *accountError) Unwrap() error { return e.kind }

// ErrorType is the type code of the sentinel the error matches, unless the
// error has one of its own.
func (e *accountError) ErrorType() string {
	if e.typ != "" {
		return e.typ
	}
	return e.kind.(*accountSentinel).typ
}

// ClientMessage is the sentence about the user, token or field.
func (e *accountError) ClientMessage() string { return e.msg }

// ErrorPointer is the JSON pointer of the field at fault, or "".
func (e *accountError) ErrorPointer() string { return e.pointer }
