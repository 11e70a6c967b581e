//go:build race

package harness

// RaceEnabled reports whether the test binary was built with -race; [Main]
// then builds the server with it too (see Options.WithoutRace), so that the suites look for races in
// the server's code.
const RaceEnabled = true
