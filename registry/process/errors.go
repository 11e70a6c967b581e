package process

import (
	"fmt"

	"github.com/scorehub/scorehub/problem"
)

// Sentinel errors, each a [*problem.Error]. ErrExists and ErrInvalid are
// also package registry's, the same values, so one errors.Is answers for a
// catalog and for the records; their texts keep the "registry:" prefix
// that callers already read.
var (
	// ErrExists reports a create of a record or process name already taken.
	ErrExists = &problem.Error{Code: problem.AlreadyExists, Text: "registry: already exists",
		Message: "the name is already taken"}
	// ErrInvalid reports a record or a process name that breaks a rule.
	// Errors of records are a registry.InvalidError naming the field; the
	// catalog's point at the field with their Pointer.
	ErrInvalid = &problem.Error{Code: problem.InvalidReference, Text: "registry: invalid",
		Message: "the record is not valid"}
	// ErrModelFormat reports a model file of no format the catalog reads,
	// or of a kind that is never read because loading it runs code.
	ErrModelFormat = &problem.Error{Code: problem.UnsupportedModelFormat, Text: "registry: unsupported model format",
		Message: "the file is not a model of a format this server reads"}
	// ErrModelInvalid reports a model file that cannot be used as it is:
	// malformed, inconsistent with its metadata, or using a feature its
	// format's reader does not support (the message names it).
	ErrModelInvalid = &problem.Error{Code: problem.InvalidModel, Text: "registry: invalid model",
		Message: "the model file cannot be used"}
	// ErrModelLimit reports a model file past one of its format's limits
	// (trees, nodes, depth, features, classes).
	ErrModelLimit = &problem.Error{Code: problem.ModelLimitExceeded, Text: "registry: model past a limit",
		Message: "the model is larger than this server allows"}
)

// errorf returns an error matching kind whose client message is the
// formatted sentence.
func errorf(kind *problem.Error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	return kind.Detail("registry: "+msg, msg)
}
