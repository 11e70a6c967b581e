package registry_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/registry"
)

// TestFaultsListEveryRule checks that a record's faults name every field at
// fault, those of single fields in the order of the fields, then those of
// fields taken together, so that a client can be told of all of them.
func TestFaultsListEveryRule(t *testing.T) {
	list := func(faults []*registry.InvalidError) [][2]string {
		var out [][2]string
		for _, f := range faults {
			out = append(out, [2]string{f.Pointer, f.Message})
		}
		return out
	}
	const name = "must be a name: 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit"
	tests := []struct {
		name          string
		faults        func() (fields, joint []*registry.InvalidError)
		fields, joint [][2]string
	}{
		{"valid deployment", func() (fields, joint []*registry.InvalidError) {
			d := registry.Deployment{Group: "g", Path: "p", Endpoints: []registry.Endpoint{{Alias: "a", Process: "p"}, {Alias: "b", Model: "m@1"}}}
			return d.Faults()
		}, nil, nil},
		{"deployment", func() (fields, joint []*registry.InvalidError) {
			d := registry.Deployment{Group: "a b", Path: "", Endpoints: []registry.Endpoint{
				{Alias: "a", Process: "x/y", Timeout: -time.Second},
				{Alias: "b", Process: "p", Model: "m", Queue: ".."},
				{Alias: "a"},
			}}
			return d.Faults()
		}, [][2]string{
			{"/group", name},
			{"/path", name},
			{"/endpoints/0/process", name},
			{"/endpoints/0/timeoutMs", "must be at least 0"},
			{"/endpoints/1/model", `must name a model and one of its aliases or versions: "churn@production" or "churn@3"`},
			{"/endpoints/1/queue", name},
		}, [][2]string{
			{"/endpoints/1", "must name either a process or a model, not both or neither"},
			{"/endpoints/2", "must name either a process or a model, not both or neither"},
			{"/endpoints/2/alias", "appears more than once"},
		}},
		{"valid group", func() (fields, joint []*registry.InvalidError) {
			g := registry.Group{Name: "g", Auth: registry.AuthPolicy{Mode: registry.TokenRequired, Groups: []string{"x"}, Schemes: []registry.Scheme{"basic"}}}
			return g.Faults()
		}, nil, nil},
		{"group", func() (fields, joint []*registry.InvalidError) {
			g := registry.Group{Name: "-g", Auth: registry.AuthPolicy{Mode: "secret", Groups: []string{"x", ""}, Schemes: []registry.Scheme{"basic", "digest", "basic"}}}
			return g.Faults()
		}, [][2]string{
			{"/name", name},
			{"/auth/mode", "must be one of: public, token"},
			{"/auth/groups/1", "is required"},
			{"/auth/schemes", "appears more than once"},
			{"/auth/schemes/1", "must be one of: basic, apitoken, bearer"},
		}, [][2]string{
			{"/auth/groups", "must be empty unless mode is token: a public group cannot restrict user groups"},
			{"/auth/schemes", "must be empty unless mode is token: a public group takes no credentials"},
		}},
		{"queue", func() (fields, joint []*registry.InvalidError) {
			q := registry.Queue{Name: "..", MaxWaiting: -1}
			return q.Faults(), nil
		}, [][2]string{
			{"/name", name},
			{"/maxConcurrent", "must be at least 1"},
			{"/maxWaiting", "must be at least 0"},
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fields, joint := tt.faults()
			if d := cmp.Diff(tt.fields, list(fields)); d != "" {
				t.Errorf("fields (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.joint, list(joint)); d != "" {
				t.Errorf("joint (-want +got):\n%s", d)
			}
		})
	}
}
