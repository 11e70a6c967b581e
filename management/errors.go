package management

import (
	"fmt"
	"net/http"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/problem"
)

var errRouteNotFound = httperr.New(problem.NotFound, "no management route has this address")

// notFound is the 404 for a record that is not stored, or whose name in the
// URL no record can have.
func notFound(kind, name string) *problem.Error {
	return httperr.Newf(problem.NotFound, "no %s named %q", kind, name)
}

// validationFailed is the 400 that lists every field at fault.
func validationFailed(fields []problem.FieldError) *problem.Error {
	return fieldsError(http.StatusBadRequest, problem.ValidationFailed, fields,
		"the request body is not valid", "the request body has %d invalid fields")
}

// invalidReferences is the 422 that lists every reference to a record or
// process that does not exist.
func invalidReferences(fields []problem.FieldError) *problem.Error {
	return fieldsError(http.StatusUnprocessableEntity, problem.InvalidReference, fields,
		"the request names something that does not exist", "the request names %d things that do not exist")
}

func fieldsError(status int, typ problem.Code, fields []problem.FieldError, one, many string) *problem.Error {
	e := &problem.Error{Status: status, Code: typ, Fields: fields}
	switch len(fields) {
	case 0:
		e.Message = one
	case 1:
		at := fields[0].Pointer
		if at == "" {
			at = "the body"
		}
		e.Message = at + " " + fields[0].Message
		e.Pointer = fields[0].Pointer
	default:
		e.Message = fmt.Sprintf(many, len(fields))
		e.Pointer = fields[0].Pointer
	}
	return e
}
