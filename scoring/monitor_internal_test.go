package scoring

import (
	"testing"

	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/drift"
	"github.com/scorehub/scorehub/registry/process"
)

// TestStaleExecutionKeepsTheWindow: an execution of a snapshot older
// than the endpoint's live profile (its reference replaced since) counts
// nothing and leaves the window as it is, while an equal reference read
// again keeps counting in the same window, and new settings start it
// again.
func TestStaleExecutionKeepsTheWindow(t *testing.T) {
	profile := func(values ...float64) *drift.Profile {
		tab, err := process.NewTable(len(values), process.NumberColumn("x", values, nil))
		if err != nil {
			t.Fatal(err)
		}
		p, err := drift.BuildProfile(tab, []process.ColumnSpec{{Name: "x", Kind: process.Number}}, drift.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	old, cur, again := profile(1, 2, 3), profile(5, 6, 7), profile(5, 6, 7)
	settings := (*registry.Monitor)(nil).Settings()
	now := func() (*drift.Profile, registry.Monitor, *registry.State) { return cur, settings, nil }
	c := newChallenges(1)
	k := monitorKey{process.EndpointRef{Group: "g", Path: "p", Alias: "a"}, "m@1"}
	m := c.monitoredFor(k, cur, settings, now)
	if m == nil {
		t.Fatal("no live profile for the current reference")
	}
	if got := c.monitoredFor(k, old, settings, now); got != nil {
		t.Error("an execution holding the replaced reference got a live profile")
	}
	if got := c.monitoredFor(k, again, settings, now); got != m {
		t.Error("an equal reference read again started another live profile")
	}
	wider := settings
	wider.MaxRows = 10
	now = func() (*drift.Profile, registry.Monitor, *registry.State) { return cur, wider, nil }
	if got := c.monitoredFor(k, cur, wider, now); got == nil || got == m {
		t.Error("new settings kept the old live profile")
	}
	series := wider
	series.FeatureSeries = true
	if got := c.monitoredFor(k, cur, series, now); got == nil || !got.series.Load() {
		t.Error("asking for a series per feature started the window again, or was not seen")
	}
}
