// Package tabletest builds the registry tables that tests of several
// packages score. It is imported by tests only.
package tabletest

import "github.com/scorehub/scorehub/registry"

// Must is [registry.NewTable] for tables a test writes out: it panics on
// an error, which is a mistake in the test.
func Must(rows int, cols ...registry.Column) *registry.Table {
	t, err := registry.NewTable(rows, cols...)
	if err != nil {
		panic(err)
	}
	return t
}
