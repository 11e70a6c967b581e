// Package testenv holds the rule for tests that need something from outside
// Go, such as Node.js packages or a browser: where it is missing they skip
// with a message saying what to install, except where the environment
// variable SCOREHUB_REQUIRE_ALL_TESTS is 1 (as in CI), where they fail, so
// that a missing install step cannot pass unnoticed. The few components CI
// cannot have at all are named, each with its reason, on the fixed list of
// [SkipUnbuildable]: tests that need them skip everywhere.
package testenv
