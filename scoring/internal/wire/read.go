package wire

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/problem"
)

// Read fills st's body from r, reading at most max+1 bytes, the one more
// to tell a body that is too large; size, when not negative, is the
// announced body size, which is refused at once when it passes max. A
// body too large, to r or to an [http.MaxBytesReader] under it, is a 413
// body_too_large; the server's read timeout is its 408; any other failure
// of r a 400 invalid_request.
func (st *State) Read(r io.Reader, max, size int64) error {
	if size > max {
		return errBodyTooLarge(max)
	}
	if size > 0 {
		st.body.Grow(int(size) + bytes.MinRead)
	}
	st.limit = io.LimitedReader{R: r, N: max + 1}
	n, err := st.body.ReadFrom(&st.limit)
	st.limit.R = nil
	if n > max {
		return errBodyTooLarge(max)
	}
	if err != nil {
		// Only here: errors.As takes its target's address, which would
		// cost every request an allocation.
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return errBodyTooLarge(max)
		}
		if e := httperr.From(err); e.Status == http.StatusRequestTimeout {
			return e // the server's read timeout: 408
		}
		return BadRequest(problem.InvalidRequest, "", "the request body could not be read").Wrap(fmt.Errorf("scoring: read body: %w", err))
	}
	return nil
}
