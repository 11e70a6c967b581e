package jobs

import (
	"fmt"

	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
)

// errorf returns an error matching kind whose client message is the
// formatted sentence. Its text reads as the registry's errors did when
// jobs were part of it, which logs and callers already know.
func errorf(kind *problem.Error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	return kind.Detail("registry: "+msg, msg)
}

// invalid returns a job field's fault as the records' rules report theirs,
// so the management API answers both alike.
func invalid(pointer, format string, args ...any) error {
	return &registry.InvalidError{Pointer: pointer, Message: fmt.Sprintf(format, args...)}
}
