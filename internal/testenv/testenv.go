package testenv

import (
	"fmt"
	"os"
	"testing"
)

// RequireAllVar is the environment variable that, set to 1, turns
// [SkipOrFail]'s skips into failures.
const RequireAllVar = "SCOREHUB_REQUIRE_ALL_TESTS"

// RequireAll reports whether every test must run: RequireAllVar is 1.
func RequireAll() bool { return os.Getenv(RequireAllVar) == "1" }

// SkipOrFail ends the test because something it needs is missing, as
// described by format and args: t.Skip normally, t.Fatal when [RequireAll].
func SkipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if RequireAll() {
		t.Fatalf("%s (%s=1: every test must run)", msg, RequireAllVar)
	}
	t.Skip(msg)
}

// unbuildable lists the components CI cannot have, and why. A test that
// needs one of them skips where it is missing, even where [RequireAll]
// holds: it is an exception made on purpose, and .ci/run says so beside the
// install steps. Every other component is required there.
var unbuildable = map[string]string{
	"lightgbm": "LightGBM is not packaged for Debian and CI cannot build it: it has no access to its sources",
}

// SkipUnbuildable ends the test because component, one CI cannot have, is
// missing, as described by format and args: t.Skip even when [RequireAll].
// A component not on the fixed list of such exceptions is treated as
// [SkipOrFail] treats it, so that no test makes itself optional by calling
// this.
func SkipUnbuildable(t testing.TB, component, format string, args ...any) {
	t.Helper()
	why, ok := unbuildable[component]
	if !ok {
		SkipOrFail(t, format, args...)
		return
	}
	t.Skip(fmt.Sprintf(format, args...) + " (" + why + ")")
}
