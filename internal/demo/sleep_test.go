package demo

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scorehub/scorehub/registry/process"
)

func TestSleep(t *testing.T) {
	in, err := process.NewTable(2, process.NumberColumn("x", []float64{1, 2}, nil))
	if err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name    string
		ctx     context.Context
		ms      string
		wantErr error // with fail: the error it must be, or nil for any
		fail    bool
		atLeast time.Duration
	}{
		{name: "sleeps", ctx: context.Background(), ms: "30", atLeast: 30 * time.Millisecond},
		{name: "zero", ctx: context.Background(), ms: "0"},
		{name: "no macro", ctx: context.Background(), ms: "", fail: true},
		{name: "negative", ctx: context.Background(), ms: "-1", fail: true},
		{name: "cancelled", ctx: cancelled, ms: "60000", fail: true, wantErr: context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			out, err := Sleep().Process.Score(tt.ctx, process.Input{Table: in, Macros: map[string]string{"ms": tt.ms}})
			if tt.fail {
				if err == nil || (tt.wantErr != nil && !errors.Is(err, tt.wantErr)) {
					t.Fatalf("error %v, want a failure (%v)", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took < tt.atLeast {
				t.Errorf("answered after %v, want at least %v", took, tt.atLeast)
			}
			col, ok := out.Lookup("slept")
			if !ok || out.Rows() != 2 {
				t.Fatalf("answer has %d rows, column slept %v", out.Rows(), ok)
			}
			if v, ok := col.Number(1); !ok || v != 0 {
				t.Errorf("slept[1] = %v %v, want 0", v, ok)
			}
		})
	}
}
