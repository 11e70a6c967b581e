package management

import (
	"fmt"
	"net/http"

	"github.com/scorehub/scorehub/internal/httperr"
)

// Stable error type codes of this package's answers, as clients see them in
// {"error":{"type":…}}. The package documentation lists the codes it shares
// with internal/httperr and the middleware.
const (
	// TypeValidationFailed: the body breaks one or more field rules (400);
	// "fields" lists every one.
	TypeValidationFailed = httperr.TypeValidationFailed
	// TypeMalformedJSON: the body is not strict JSON (400).
	TypeMalformedJSON = httperr.TypeMalformedJSON
	// TypeInvalidParameter: a query parameter is not valid (400).
	TypeInvalidParameter = httperr.TypeInvalidParameter
	// TypeInvalidRequest: a header such as If-Match is malformed (400).
	TypeInvalidRequest = httperr.TypeInvalidRequest
	// TypeMethodNotAllowed: the route does not take the method (405, with
	// Allow).
	TypeMethodNotAllowed = httperr.TypeMethodNotAllowed
	// TypeUnsupportedMediaType: the body's Content-Type is not the one the
	// route takes (415).
	TypeUnsupportedMediaType = httperr.TypeUnsupportedMediaType
)

var errRouteNotFound = httperr.New(httperr.TypeNotFound, "no management route has this address")

// notFound is the 404 for a record that is not stored, or whose name in the
// URL no record can have.
func notFound(kind, name string) *httperr.Error {
	return httperr.Newf(httperr.TypeNotFound, "no %s named %q", kind, name)
}

// validationFailed is the 400 that lists every field at fault.
func validationFailed(fields []httperr.FieldError) *httperr.Error {
	return fieldsError(http.StatusBadRequest, TypeValidationFailed, fields,
		"the request body is not valid", "the request body has %d invalid fields")
}

// invalidReferences is the 422 that lists every reference to a record or
// process that does not exist.
func invalidReferences(fields []httperr.FieldError) *httperr.Error {
	return fieldsError(http.StatusUnprocessableEntity, httperr.TypeInvalidRef, fields,
		"the request names something that does not exist", "the request names %d things that do not exist")
}

func fieldsError(status int, typ string, fields []httperr.FieldError, one, many string) *httperr.Error {
	e := &httperr.Error{Status: status, Type: typ, Fields: fields}
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
