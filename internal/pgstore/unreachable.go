package pgstore

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/scorehub/scorehub/registry"
)

// unreachable reports whether err says the database cannot be reached for
// now, rather than that it refused the statement: the server is down,
// restarting or out of connections, or the connection broke. Such a
// failure is wrapped in registry.ErrStoreUnavailable, which a client is
// told to retry.
func unreachable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false // the caller gave up
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "57P01", "57P02", "57P03", // admin_shutdown, crash_shutdown, cannot_connect_now
			"53300": // too_many_connections
			return true
		}
		return strings.HasPrefix(pgErr.Code, "08") // connection_exception
	}
	var connect *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connect) || errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, pgconn.ErrConnClosed) || pgconn.SafeToRetry(err)
}

// unavailableError is a failure to reach the database: it reads as its
// cause, and matches registry.ErrStoreUnavailable, which tells an HTTP
// edge to answer 503 with Retry-After.
type unavailableError struct{ err error }

func (e *unavailableError) Error() string   { return e.err.Error() }
func (e *unavailableError) Unwrap() []error { return []error{registry.ErrStoreUnavailable, e.err} }
