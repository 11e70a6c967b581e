package pmml

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/internal/tabletest"
	"github.com/scorehub/scorehub/registry/process"
)

// fuzzLimits keep the fuzzer's files small, so that a run explores shapes
// rather than sizes.
var fuzzLimits = Limits{MaxBytes: 1 << 16, MaxDepth: 32, MaxNodes: 2048, MaxFields: 64, MaxSegments: 64, MaxClasses: 16}

// fuzzSeeds are small documents of every kind the reader scores.
func fuzzSeeds() []string {
	tree := stump("classification", 5, "a", "b", 0.8, 0.3, classSchema)
	return []string{
		strings.Replace(classTree, "%s", `missingValueStrategy="defaultChild"`, 1),
		regressionTree,
		classDD + segments("classification", "average", "", tree, tree),
		regDD + segments("regression", "median", "", stump("regression", 3, "1", "2", 0, 0, classSchema)),
		`<DataDictionary><DataField name="x" optype="continuous" dataType="double"/><DataField name="c" optype="categorical" dataType="string"/>
<DataField name="y" optype="continuous" dataType="double"/></DataDictionary>
<TransformationDictionary>` + df("d", "double", `<Apply function="if"><Apply function="isMissing"><FieldRef field="x"/></Apply><Constant>1</Constant><NormContinuous field="x"><LinearNorm orig="0" norm="0"/><LinearNorm orig="1" norm="2"/></NormContinuous></Apply>`) +
			df("m", "double", `<MapValues outputColumn="o" dataType="double"><FieldColumnPair field="c" column="i"/><InlineTable><row><i>a</i><o>1</o></row></InlineTable></MapValues>`) + `</TransformationDictionary>
<TreeModel functionName="regression"><MiningSchema><MiningField name="x" missingValueReplacement="0"/><MiningField name="c"/><MiningField name="y" usageType="target"/></MiningSchema>
<Node><True/><Node score="1"><SimplePredicate field="d" operator="lessThan" value="1"/></Node><Node score="2"><SimplePredicate field="m" operator="isMissing"/></Node></Node></TreeModel>`,
	}
}

// checkLoaded fails unless a file Load accepted scores rows without
// trouble, or Load refused it with an error of a model kind.
func checkLoaded(t *testing.T, lm *process.LoadedModel, err error) {
	if err != nil {
		if !errors.Is(err, process.ErrModelInvalid) && !errors.Is(err, process.ErrModelLimit) && !errors.Is(err, process.ErrModelFormat) {
			t.Fatalf("Load failed with an error of no model kind: %v", err)
		}
		return
	}
	var cols []process.Column
	for _, in := range lm.Schema.Inputs {
		if in.Kind == process.Text {
			cols = append(cols, process.TextColumn(in.Name, []string{"a", "", "b", "1", "yes"}, []bool{false, false, false, false, true}))
		} else {
			cols = append(cols, process.NumberColumn(in.Name, []float64{0, -1, math.NaN(), 1e300, 3}, nil))
		}
	}
	out, err := lm.Process.Score(context.Background(), process.Input{Table: tabletest.Must(5, cols...)})
	if err != nil {
		t.Fatalf("Score: %v", err)
	}
	if out.Rows() != 5 || out.NumColumns() != len(lm.Schema.Outputs) {
		t.Fatalf("Score answered %d rows × %d columns, want 5 × %d", out.Rows(), out.NumColumns(), len(lm.Schema.Outputs))
	}
}

func FuzzLoad(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add([]byte(wrap(s)))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		lm, err := Format{Limits: fuzzLimits}.Load(b, process.ModelMetadata{})
		checkLoaded(t, lm, err)
	})
}

// TestFuzzSeedsLoad keeps the seeds meaningful: each must load and score.
func TestFuzzSeedsLoad(t *testing.T) {
	for i, s := range fuzzSeeds() {
		lm, err := Format{Limits: fuzzLimits}.Load([]byte(wrap(s)), process.ModelMetadata{})
		if err != nil {
			t.Fatalf("seed %d: %v", i, err)
		}
		checkLoaded(t, lm, nil)
	}
}
