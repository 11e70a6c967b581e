package pmml

import (
	"strings"
	"testing"

	"github.com/scorehub/scorehub/registry/process"
)

func TestTopLevelOutput(t *testing.T) {
	out := `<Output>
<OutputField name="label" optype="categorical" dataType="string" feature="predictedValue"/>
<OutputField name="p_yes" optype="continuous" dataType="double" feature="probability" value="yes"/>
<OutputField name="p_no" optype="continuous" dataType="double" feature="probability" value="no"/>
</Output>`
	doc := strings.Replace(strings.Replace(classTree, "%s", "", 1), "</MiningSchema>", "</MiningSchema>"+out, 1)
	lm := loadPMML(t, doc)
	got := scoreRow(t, lm, "x", 7.0, "c", "a")
	checkRow(t, got, map[string]any{"prediction(y)": "no", "confidence(yes)": 0.25, "confidence(no)": 0.75})
	if len(got) != 3 {
		t.Errorf("columns %v, want the AI Hub columns alone", got)
	}

	bad := strings.Replace(doc, `feature="probability" value="no"`, `feature="probability" value="maybe"`, 1)
	if err := loadPMMLErr(bad); err == nil || !strings.Contains(err.Error(), `class "maybe"`) {
		t.Errorf("error %v, want the unknown class of an OutputField named", err)
	}
}

func TestNestedOutputRefused(t *testing.T) {
	doc := classDD + `<MiningModel functionName="classification"><MiningSchema>` + classSchema + `</MiningSchema>
<Segmentation multipleModelMethod="modelChain">
<Segment><True/><TreeModel functionName="regression"><MiningSchema><MiningField name="x"/></MiningSchema>
<Output><OutputField name="r" feature="reasonCode"/></Output><Node score="1"><True/></Node></TreeModel></Segment>
<Segment><True/>` + stump("classification", 5, "a", "b", 0.8, 0.3, classSchema) + `</Segment>
</Segmentation></MiningModel>`
	if err := loadPMMLErr(doc); err == nil || !strings.Contains(err.Error(), "the OutputField feature reasonCode") {
		t.Errorf("error %v, want the unsupported feature named", err)
	}
}

func TestClusteringAnswersCluster(t *testing.T) {
	lm := loadPMML(t, `<DataDictionary><DataField name="x" optype="continuous" dataType="double"/></DataDictionary>
<ClusteringModel functionName="clustering" modelClass="centerBased" numberOfClusters="2">
 <MiningSchema><MiningField name="x"/></MiningSchema>
 <ComparisonMeasure kind="distance"><squaredEuclidean/></ComparisonMeasure>
 <ClusteringField field="x"/>
 <Cluster id="c0" name="low"><Array n="1" type="real">0</Array></Cluster>
 <Cluster id="c1" name="high"><Array n="1" type="real">10</Array></Cluster>
</ClusteringModel>`)
	if lm.Schema.Task != process.Clustering || len(lm.Schema.Outputs) != 1 || lm.Schema.Outputs[0] != (process.ColumnSpec{Name: "cluster", Kind: process.Text}) {
		t.Fatalf("schema %+v, want one cluster column", lm.Schema)
	}
	got := scoreRow(t, lm, "x", 7.0)
	if got["cluster"] != "c1" && got["cluster"] != "high" {
		t.Errorf("cluster %v, want the second cluster", got["cluster"])
	}
	if got := scoreRow(t, lm, "x", 1.0); got["cluster"] != "c0" && got["cluster"] != "low" {
		t.Errorf("cluster %v, want the first cluster", got["cluster"])
	}
}
