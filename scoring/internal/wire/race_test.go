//go:build race

package wire

// raceEnabled reports whether the tests run under the race detector, which
// makes the exhaustive formatting checks about ten times slower.
const raceEnabled = true
