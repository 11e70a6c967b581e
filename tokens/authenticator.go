package tokens

import "context"

// Authenticator checks a user name and password and says who the user is:
// what the token service asks of the users it serves (package
// tokens/accounts has the ones scorehub keeps).
// Implementations must be safe for concurrent use, must return an error
// matching [ErrBadCredentials] for an unknown name and for a wrong password
// alike, and should take the same time for both, so that a caller cannot
// tell which names exist.
type Authenticator interface {
	Authenticate(ctx context.Context, name, password string) (Principal, error)
}
