package registrytest_test

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/scorehub/scorehub/internal/tabletest"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/registry/registrytest"
)

func TestLinearFormat(t *testing.T) {
	c := process.NewCatalog()
	f := &registrytest.LinearFormat{MaxWeights: 2}
	if err := c.RegisterFormat(f); err != nil {
		t.Fatal(err)
	}
	art := registrytest.LinearArtifact(0.5, []string{"x", "y"}, []float64{2, -1})
	in := tabletest.Must(2,
		process.NumberColumn("x", []float64{1, 3}, nil),
		process.NumberColumn("y", []float64{4, 0}, []bool{false, true}))

	reg, err := c.LoadModel(art, process.ModelMetadata{Label: "churn"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := reg.Process.Score(context.Background(), process.Input{Table: in})
	if err != nil {
		t.Fatal(err)
	}
	col, _ := out.Lookup("prediction(churn)")
	if a, _ := col.Number(0); a != -1.5 {
		t.Errorf("row 0 scores %v, want 0.5+2*1-4 = -1.5", a)
	}
	if b, _ := col.Number(1); b != 6.5 {
		t.Errorf("row 1 (y missing) scores %v, want 0.5+2*3 = 6.5", b)
	}

	cls, err := c.LoadModel(art, process.ModelMetadata{Classes: []string{"no", "yes"}, Features: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := cls.Schema.Inputs[0].Name; got != "a" {
		t.Errorf("first input %q, want the metadata's name a", got)
	}
	in = tabletest.Must(1, process.NumberColumn("a", []float64{0}, nil))
	out, err = cls.Process.Score(context.Background(), process.Input{Table: in})
	if err != nil {
		t.Fatal(err)
	}
	yes, _ := out.Lookup("confidence(yes)")
	if p, _ := yes.Number(0); math.Abs(p-1/(1+math.Exp(-0.5))) > 1e-12 {
		t.Errorf("confidence(yes) = %v, want the logistic of 0.5", p)
	}
	if f.Loads() != 2 {
		t.Errorf("Loads() = %d after two loads", f.Loads())
	}

	for _, tt := range []struct {
		art  string
		meta process.ModelMetadata
		want error
	}{
		{"scorehub-test-linear v1\nbias x\n", process.ModelMetadata{}, process.ErrModelInvalid},
		{"scorehub-test-linear v1\nbias 0\nweight x 1\nweight x 2\n", process.ModelMetadata{}, process.ErrModelInvalid},
		{string(registrytest.LinearArtifact(0, []string{"a", "b", "c"}, []float64{1, 2, 3})), process.ModelMetadata{}, process.ErrModelLimit},
		{string(art), process.ModelMetadata{Features: []string{"a"}}, process.ErrModelInvalid},
		{string(art), process.ModelMetadata{Classes: []string{"a", "b", "c"}}, process.ErrModelInvalid},
	} {
		if _, err := c.LoadModel([]byte(tt.art), tt.meta); !errors.Is(err, tt.want) {
			t.Errorf("LoadModel(%q, %+v) = %v, want %v", tt.art, tt.meta, err, tt.want)
		}
	}
}
