package management

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/tokens/accounts"
)

// precondition is what a write asks of the stored record: nothing, that it
// exists (If-Match: *), or that it is at one of some revisions (If-Match
// with entity tags, or the revision in the body).
type precondition struct {
	given bool
	any   bool
	revs  []uint64
}

// etag is the strong entity tag of a revision.
func etag(rev uint64) string { return `"` + strconv.FormatUint(rev, 10) + `"` }

// setETag sends a record's revision as its ETag.
func setETag(w http.ResponseWriter, rev uint64) { w.Header().Set("ETag", etag(rev)) }

var errIfMatch = httperr.New(problem.InvalidRequest,
	`If-Match must be * or a list of quoted revisions such as "3"`)

// parsePrecondition reads r's If-Match header and joins it with the
// revision the body names at pointer (0 when it names none). When both are
// given they must agree: the body's revision must be one If-Match names.
// Weak entity tags (W/"3") and tags that are not revisions never match, as
// RFC 9110's strong comparison asks.
func parsePrecondition(r *http.Request, bodyRev uint64, pointer string) (precondition, error) {
	var p precondition
	if values := r.Header.Values("If-Match"); len(values) > 0 {
		p.given = true
		tags := 0
		for _, v := range values {
			for _, tag := range strings.Split(v, ",") {
				tag = strings.TrimSpace(tag)
				if tag == "" {
					continue
				}
				tags++
				weak := strings.HasPrefix(tag, "W/")
				opaque := strings.TrimPrefix(tag, "W/")
				switch {
				case tag == "*":
					p.any = true
				case len(opaque) < 2 || opaque[0] != '"' || opaque[len(opaque)-1] != '"' || strings.Contains(opaque[1:len(opaque)-1], `"`):
					return precondition{}, errIfMatch
				case !weak:
					if rev, err := strconv.ParseUint(opaque[1:len(opaque)-1], 10, 64); err == nil {
						p.revs = append(p.revs, rev)
					}
				}
			}
		}
		if tags == 0 {
			return precondition{}, errIfMatch
		}
	}
	if bodyRev != 0 {
		if p.given && !p.any && !slices.Contains(p.revs, bodyRev) {
			return precondition{}, validationFailed([]problem.FieldError{{Pointer: pointer,
				Message: "names revision " + strconv.FormatUint(bodyRev, 10) + ", which If-Match does not; send one or make them agree"}})
		}
		p = precondition{given: true, revs: []uint64{bodyRev}}
	}
	return p, nil
}

// revision returns the revision to write a record with under p, given
// whether it is stored and at which revision. unconditional is what to
// write with when p asks nothing: registry.AnyRevision to write whatever
// is stored, or cur to build on what was read. A stored record at no
// revision p names is a 412; so is a missing one, unless p asks nothing.
func (p precondition) revision(kind, name string, exists bool, cur uint64, unconditional uint64) (uint64, error) {
	switch {
	case !p.given:
		return unconditional, nil
	case !exists:
		return 0, httperr.Newf(problem.PreconditionFailed,
			"%s %q does not exist, but the request names a revision of it", kind, name)
	case p.any || slices.Contains(p.revs, cur):
		return cur, nil
	}
	return 0, httperr.Newf(problem.PreconditionFailed,
		"%s %q is at revision %d, not one the request names", kind, name, cur)
}

// user is p as the condition of a write of the user name, for
// accounts.Book's UpdateUserIf and DeleteUserIf.
func (p precondition) user(name string) func(cur accounts.Account) error {
	return func(cur accounts.Account) error {
		_, err := p.revision("user", name, true, cur.Revision, 0)
		return err
	}
}

// userError is err of a write of the user name as this API says it: a
// user that does not exist is the 404 of every record.
func userError(err error, name string) error {
	if errors.Is(err, accounts.ErrNotFound) {
		return notFound("user", name)
	}
	return err
}
