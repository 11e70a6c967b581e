// Package modeltest holds what the tests of the model formats share to prove
// an evaluator against the library that trained its fixtures: the Python
// interpreter that library runs in, the fixture files a generator script
// writes (NAME.rows.json beside each model), scoring a fixture's rows and
// comparing the answers with the library's own within its tolerances.
//
// Only tests import it. A format's tests keep what is theirs (the fixture's
// JSON shape, the schema to expect) and call these functions for the rest:
// the table a client would send ([RowsTable], where the rows are JSON
// numbers and strings), scoring it whole and row by row, and checking that
// the generator script writes the committed fixtures again. So every
// format is held to the same tolerances and the same skip-or-fail rule of
// [testenv.SkipOrFail]. [XGBoostClasses] makes a model of many classes for
// the tests of the limits on what a request may make the server build.
package modeltest
