package testenv_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/internal/testenv"
)

// recorder stands in for a test, noting how SkipOrFail ended it. Skip and
// Fatal stop a real test's goroutine; the recorder does the same so code
// after the call is known not to run.
type recorder struct {
	testing.TB
	ended string
	msg   string
}

func (r *recorder) Helper() {}

func (r *recorder) Skip(args ...any) {
	r.ended, r.msg = "skip", fmt.Sprint(args...)
	runtime.Goexit()
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.ended, r.msg = "fail", fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func run(f func(testing.TB)) *recorder {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
		r.ended = "continued"
	}()
	<-done
	return r
}

func TestSkipOrFail(t *testing.T) {
	tests := []struct {
		env  string
		want string
	}{
		{"", "skip"},
		{"0", "skip"},
		{"true", "skip"},
		{"1", "fail"},
	}
	for _, tt := range tests {
		t.Run("env="+tt.env, func(t *testing.T) {
			t.Setenv(testenv.RequireAllVar, tt.env)
			r := run(func(tb testing.TB) { testenv.SkipOrFail(tb, "node not found in %s", "PATH") })
			if r.ended != tt.want {
				t.Fatalf("SkipOrFail ended the test with %q, want %q", r.ended, tt.want)
			}
			if !strings.Contains(r.msg, "node not found in PATH") {
				t.Errorf("message %q does not say what is missing", r.msg)
			}
			if tt.want == "fail" && !strings.Contains(r.msg, testenv.RequireAllVar) {
				t.Errorf("failure %q does not name %s", r.msg, testenv.RequireAllVar)
			}
		})
	}
}

func TestSkipUnbuildable(t *testing.T) {
	tests := []struct {
		component string
		env       string
		want      string
	}{
		{"lightgbm", "", "skip"},
		{"lightgbm", "1", "skip"},
		{"xgboost", "", "skip"},
		{"xgboost", "1", "fail"},
	}
	for _, tt := range tests {
		t.Run(tt.component+"/env="+tt.env, func(t *testing.T) {
			t.Setenv(testenv.RequireAllVar, tt.env)
			r := run(func(tb testing.TB) { testenv.SkipUnbuildable(tb, tt.component, "%s is not built", tt.component) })
			if r.ended != tt.want {
				t.Fatalf("SkipUnbuildable ended the test with %q, want %q", r.ended, tt.want)
			}
			if !strings.Contains(r.msg, tt.component+" is not built") {
				t.Errorf("message %q does not say what is missing", r.msg)
			}
		})
	}
}
