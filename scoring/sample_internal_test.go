package scoring

import (
	"math"
	"testing"
)

// TestSampleShare: a request logs ⌊n·rate⌋ or ⌈n·rate⌉ of its rows,
// distinct and in order; over many requests of one row the share is the
// rate, and every row of a request is as likely to be logged as any
// other.
func TestSampleShare(t *testing.T) {
	for _, tt := range []struct {
		n    int
		rate float64
	}{{1000, 0.05}, {7, 0.5}, {3, 1}, {10, 0.01}, {1, 0.3}} {
		for range 200 {
			rows := sample(tt.n, tt.rate)
			want := float64(tt.n) * tt.rate
			if k := float64(len(rows)); k < math.Floor(want) || k > math.Ceil(want) {
				t.Fatalf("%d rows at rate %v: %d logged, want %v rounded", tt.n, tt.rate, len(rows), want)
			}
			for i := range rows {
				if rows[i] < 0 || rows[i] >= tt.n || (i > 0 && rows[i] <= rows[i-1]) {
					t.Fatalf("%d rows at rate %v: logged %v, want distinct rows in order", tt.n, tt.rate, rows)
				}
			}
		}
	}
	// 40,000 requests of one row at 0.25: 10,000 expected, σ ≈ 87; 5σ is
	// 433 rows.
	logged := 0
	for range 40_000 {
		logged += len(sample(1, 0.25))
	}
	if logged < 10_000-433 || logged > 10_000+433 {
		t.Errorf("%d of 40,000 single rows logged at rate 0.25, want 10,000 ± 433", logged)
	}
	// 20,000 requests of 10 rows at 0.1, one row each: every row 2,000
	// times expected, σ ≈ 42; 5σ is 212.
	counts := make([]int, 10)
	for range 20_000 {
		for _, r := range sample(10, 0.1) {
			counts[r]++
		}
	}
	for r, c := range counts {
		if c < 2000-212 || c > 2000+212 {
			t.Errorf("row %d of 10 logged %d times in 20,000 requests, want 2,000 ± 212", r, c)
		}
	}
}
