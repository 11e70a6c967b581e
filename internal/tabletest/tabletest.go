// Package tabletest builds the registry tables that tests of several
// packages score. It is imported by tests only.
package tabletest

import (
	"github.com/scorehub/scorehub/registry/process"
)

// Must is [process.NewTable] for tables a test writes out: it panics on
// an error, which is a mistake in the test.
func Must(rows int, cols ...process.Column) *process.Table {
	t, err := process.NewTable(rows, cols...)
	if err != nil {
		panic(err)
	}
	return t
}
