package pmml

import (
	"context"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/scorehub/scorehub/internal/modeltest"
	"github.com/scorehub/scorehub/registry/process"
)

// handTrees is a weighted sum of two regression trees whose splits the
// reader decides in several ways: a three-way split on a categorical
// field (equal, a set, True), a CompoundPredicate reading one field, a
// split on a DerivedField of an input, missing values to a defaultChild
// and, in the first tree (missingValueStrategy none), past the children
// whose predicate reads one. The Targets rescale the sum.
const handTrees = `<DataDictionary>
 <DataField name="x" optype="continuous" dataType="double"/>
 <DataField name="y" optype="continuous" dataType="double"/>
 <DataField name="c" optype="categorical" dataType="string"><Value value="a"/><Value value="b"/><Value value="c"/></DataField>
 <DataField name="t" optype="continuous" dataType="double"/>
</DataDictionary>
<TransformationDictionary>
 <DerivedField name="x2" optype="continuous" dataType="double"><Apply function="*"><FieldRef field="x"/><Constant>2</Constant></Apply></DerivedField>
</TransformationDictionary>
<MiningModel functionName="regression">
 <MiningSchema><MiningField name="t" usageType="target"/><MiningField name="x"/><MiningField name="y"/><MiningField name="c"/></MiningSchema>
 <Targets><Target field="t" rescaleFactor="2" rescaleConstant="1"/></Targets>
 <Segmentation multipleModelMethod="weightedSum">
  <Segment id="1" weight="0.5"><True/>
   <TreeModel functionName="regression" missingValueStrategy="none">
    <MiningSchema><MiningField name="x"/><MiningField name="c"/></MiningSchema>
    <Node recordCount="9"><True/>
     <Node recordCount="4" score="1"><SimplePredicate field="c" operator="equal" value="a"/>
      <Node recordCount="1" score="10"><CompoundPredicate booleanOperator="and"><SimplePredicate field="x" operator="greaterOrEqual" value="0"/><SimplePredicate field="x" operator="lessThan" value="2"/></CompoundPredicate></Node>
      <Node recordCount="3" score="0"><True/></Node>
     </Node>
     <Node recordCount="2" score="5"><SimpleSetPredicate field="c" booleanOperator="isIn"><Array type="string">b</Array></SimpleSetPredicate></Node>
     <Node recordCount="3" score="-2"><True/></Node>
    </Node>
   </TreeModel>
  </Segment>
  <Segment id="2" weight="2"><True/>
   <TreeModel functionName="regression" missingValueStrategy="defaultChild">
    <MiningSchema><MiningField name="x"/><MiningField name="y"/></MiningSchema>
    <Node recordCount="10" defaultChild="l"><True/>
     <Node id="l" recordCount="5" score="1" defaultChild="ll"><SimplePredicate field="x2" operator="lessThan" value="3"/>
      <Node id="ll" recordCount="2" score="0.5"><SimplePredicate field="y" operator="lessThan" value="0"/></Node>
      <Node recordCount="3" score="1.5"><SimplePredicate field="y" operator="greaterOrEqual" value="0"/></Node>
     </Node>
     <Node recordCount="5" score="2"><SimplePredicate field="x2" operator="greaterOrEqual" value="3"/></Node>
    </Node>
   </TreeModel>
  </Segment>
 </Segmentation>
</MiningModel>`

// handRows are rows of x, y and c for handTrees, NaN or "" for missing.
func handRows(t *testing.T) *process.Table {
	t.Helper()
	xs := []float64{1, 5, -1, math.NaN(), 1.4, 0}
	ys := []float64{-3, 2, math.NaN(), 1, -1, 0}
	cs := []string{"a", "b", "c", "a", "", "b"}
	xm, ym, cm := make([]bool, len(xs)), make([]bool, len(xs)), make([]bool, len(xs))
	for i := range xs {
		xm[i], ym[i], cm[i] = math.IsNaN(xs[i]), math.IsNaN(ys[i]), cs[i] == ""
	}
	tab, err := process.NewTable(len(xs),
		process.NumberColumn("x", xs, xm), process.NumberColumn("y", ys, ym), process.TextColumn("c", cs, cm))
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// TestExplainHandTrees explains handTrees: the walk agrees with the
// brute-force Shapley values and the contributions add up to the margin.
func TestExplainHandTrees(t *testing.T) {
	lm := loadPMML(t, handTrees)
	p, ok := lm.Process.(*explained)
	if !ok {
		t.Fatalf("the process is a %T, not one that explains", lm.Process)
	}
	tab := handRows(t)
	e, err := p.Explain(context.Background(), process.Input{Table: tab})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(e.Features, ","); got != "x,y,c" {
		t.Errorf("features %s, want x,y,c", got)
	}
	// The expected margin: 1 + 2 × (0.5 × tree 1 + 2 × tree 2), each tree
	// its leaves' mean by recordCount.
	t1 := (1*10.0 + 3*0 + 2*5 + 3*-2) / 9
	t2 := (2*0.5 + 3*1.5 + 5*2.0) / 10
	if want := 1 + 2*(0.5*t1+2*t2); math.Abs(e.Row(0, 0)[3]-want) > 1e-12 {
		t.Errorf("bias %v, want %v", e.Row(0, 0)[3], want)
	}
	checkLocalAccuracy(t, p, tab, e)
	checkShapExact(t, p, tab, e, tab.Rows())

	// Explain is safe for concurrent use: every goroutine's answer is the
	// same.
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			again, err := p.Explain(context.Background(), process.Input{Table: tab})
			if err != nil {
				t.Error(err)
				return
			}
			if !reflect.DeepEqual(again.Values, e.Values) {
				t.Errorf("a concurrent explanation differs: %v, want %v", again.Values, e.Values)
			}
		}()
	}
	wg.Wait()
}

// TestExplainRPart explains R's regression tree of petal length by
// species, whose splits are surrogate CompoundPredicates on one field: a
// species' contribution is its mean's distance from the mean by records,
// and a missing species takes the default children.
func TestExplainRPart(t *testing.T) {
	lm := modeltest.Load(t, Format{}, filepath.Join("testdata", "r"), "iris_rpart.pmml", process.ModelMetadata{})
	p, ok := lm.Process.(*explained)
	if !ok {
		t.Fatalf("the process is a %T, not one that explains", lm.Process)
	}
	species := []string{"setosa", "versicolor", "virginica", ""}
	tab := modeltest.Table(t, 0, len(species), process.TextColumn("Species", species, []bool{false, false, false, true}))
	e, err := p.Explain(context.Background(), process.Input{Table: tab})
	if err != nil {
		t.Fatal(err)
	}
	mean := (50*1.462 + 50*4.26 + 50*5.552) / 150
	for r, want := range []float64{1.462, 4.26, 5.552} {
		if got := e.Row(0, r); math.Abs(got[0]-(want-mean)) > 1e-12 || math.Abs(got[1]-mean) > 1e-12 {
			t.Errorf("%s: contributions %v, want [%v %v]", species[r], got, want-mean, mean)
		}
	}
	checkLocalAccuracy(t, p, tab, e)
	checkShapExact(t, p, tab, e, tab.Rows())
}

// TestExplainFixtures says which of the scikit-learn fixtures explain
// their predictions: none, the trees that carry recordCount being
// classifiers and the regression trees carrying none.
func TestExplainFixtures(t *testing.T) {
	for _, name := range []string{"diabetes_tree", "diabetes_boosting", "diabetes_forest", "iris_tree", "iris_forest", "breast_cancer_boosting"} {
		t.Run(name, func(t *testing.T) {
			lm := modeltest.Load(t, Format{}, "testdata", name+".pmml", process.ModelMetadata{})
			if _, ok := lm.Process.(process.Explainer); ok {
				t.Errorf("%s explains its predictions", name)
			}
		})
	}
}

// TestExplainRefused lists models that do not explain: their Process is
// no Explainer.
func TestExplainRefused(t *testing.T) {
	for _, c := range []struct{ name, old, new string }{
		{"a node without recordCount", `<Node recordCount="2" score="5">`, `<Node score="5">`},
		{"a split on two inputs", `<SimplePredicate field="x" operator="lessThan" value="2"/>`, `<SimplePredicate field="y" operator="lessThan" value="2"/>`},
		{"Targets that bound", `rescaleConstant="1"/>`, `rescaleConstant="1" max="3"/>`},
		{"an average of trees", `"weightedSum"`, `"weightedAverage"`},
		{"a segment that depends on the row", `<Segment id="2" weight="2"><True/>`, `<Segment id="2" weight="2"><SimplePredicate field="x" operator="lessThan" value="2"/>`},
		{"a node of one child", `<Node recordCount="3" score="1.5"><SimplePredicate field="y" operator="greaterOrEqual" value="0"/></Node>`, ``},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(handTrees, c.old) {
				t.Fatalf("handTrees has no %s", c.old)
			}
			lm := loadPMML(t, strings.Replace(handTrees, c.old, c.new, 1))
			if _, ok := lm.Process.(process.Explainer); ok {
				t.Errorf("the model explains its predictions")
			}
		})
	}
	// A classification tree answers probabilities, not a margin.
	lm := loadPMML(t, `<DataDictionary><DataField name="x" optype="continuous" dataType="double"/>
<DataField name="k" optype="categorical" dataType="string"><Value value="a"/><Value value="b"/></DataField></DataDictionary>
<TreeModel functionName="classification"><MiningSchema><MiningField name="k" usageType="target"/><MiningField name="x"/></MiningSchema>
<Node recordCount="4" score="a"><True/><Node recordCount="1" score="a"><SimplePredicate field="x" operator="lessThan" value="0"/></Node>
<Node recordCount="3" score="b"><True/></Node></Node></TreeModel>`)
	if _, ok := lm.Process.(process.Explainer); ok {
		t.Errorf("the classification tree explains its predictions")
	}
}

// TestExplainNoChild asks for the explanation of rows a split sends to no
// child (a missing value under missingValueStrategy nullPrediction): the
// model predicts nothing for them, and their contributions are all
// missing, while the other rows are explained.
func TestExplainNoChild(t *testing.T) {
	doc := strings.Replace(handTrees, `missingValueStrategy="defaultChild"`, `missingValueStrategy="nullPrediction"`, 1)
	lm := loadPMML(t, doc)
	p, ok := lm.Process.(*explained)
	if !ok {
		t.Fatalf("the process is a %T, not one that explains", lm.Process)
	}
	in := process.Input{Table: handRows(t)}
	res, err := p.Score(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := p.Explain(context.Background(), in)
	if err != nil {
		t.Fatalf("Explain: %v", err)
	}
	pred := res.Column(0)
	unexplained := 0
	for r := range in.Table.Rows() {
		_, predicted := pred.Number(r)
		for g := range ex.Groups {
			for _, v := range ex.Row(g, r) {
				if math.IsNaN(v) == predicted {
					t.Errorf("row %d: predicted %v, contribution %v; want numbers for a prediction, NaN without", r, predicted, v)
				}
			}
		}
		if !predicted {
			unexplained++
		}
	}
	if unexplained == 0 {
		t.Fatal("no row was sent to no child: the test's premise")
	}
}
