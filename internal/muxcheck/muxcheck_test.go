package muxcheck

import (
	"os"
	"os/exec"
	"testing"
)

func TestCheck(t *testing.T) {
	if err := Check(); err != nil {
		t.Fatalf("Check() = %v under the current mux, want nil", err)
	}
}

// TestCheckOldMux runs this test binary again under the old mux, where Check
// must refuse.
func TestCheckOldMux(t *testing.T) {
	if os.Getenv("MUXCHECK_CHILD") == "1" {
		if err := Check(); err != ErrOldMux {
			t.Fatalf("Check() = %v under httpmuxgo121=1, want ErrOldMux", err)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCheckOldMux$", "-test.v")
	cmd.Env = append(os.Environ(), "MUXCHECK_CHILD=1", "GODEBUG=httpmuxgo121=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child under httpmuxgo121=1 failed: %v\n%s", err, out)
	}
}
