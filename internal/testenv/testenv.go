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
