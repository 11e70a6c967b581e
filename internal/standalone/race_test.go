//go:build race

package standalone

// raceEnabled reports whether the tests run under the race detector, which
// makes bcrypt, and so reading a users file, many times slower.
const raceEnabled = true
