package pmml

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/registry/process"
)

// kmeans is a k-means model as RapidMiner and sklearn exporters write it:
// four clusters, named, numbered only, and neither.
const kmeans = `
<ClusteringModel functionName="clustering" modelClass="centerBased" numberOfClusters="4">
  <MiningSchema/>
  <ComparisonMeasure kind="distance"><Extension name="note"/><MEASURE/></ComparisonMeasure>
  <ClusteringField field="a" WEIGHT/>
  <ClusteringField field="b"/>
  <ClusteringField field="note" isCenterField="false"/>
  <Cluster id="1" name="low"><Array n="2" type="real">0 0</Array></Cluster>
  <Cluster id="2" name="high"><Array n="2" type="real">10 10</Array></Cluster>
  <Cluster id="3"><Array n="2" type="real">0 10</Array></Cluster>
  <Cluster><Array n="2" type="int">10 0</Array></Cluster>
</ClusteringModel>`

// clusterElem fills kmeans in with a measure and a's field weight.
func clusterElem(measure, weight string) string {
	return strings.NewReplacer("<MEASURE/>", measure, "WEIGHT", weight).Replace(kmeans)
}

var clusterSchema = schema{fields: []string{"a", "b", "note:string"}}

func TestClusteringWinner(t *testing.T) {
	cases := []struct {
		name, measure string
		r             inputs
		label         string
		index         int
	}{
		{"named", "<euclidean/>", inputs{"a": 1.0, "b": 2.0}, "low", 1},
		{"named high", "<euclidean/>", inputs{"a": 6.0, "b": 6.5}, "high", 2},
		{"id only", "<euclidean/>", inputs{"a": 2.0, "b": 9.0}, "3", 3},
		{"neither", "<euclidean/>", inputs{"a": 9.0, "b": 1.0}, "4", 4},
		// a missing value leaves its field out: b = 9 is nearest 10
		{"missing", "<euclidean/>", inputs{"b": 9.0}, "high", 2},
		// (6, 4): cityBlock A 10, B 10, C 12, D 8; chebychev A 6, B 6, C 6, D 4
		{"cityBlock", "<cityBlock/>", inputs{"a": 6.0, "b": 4.0}, "4", 4},
		{"chebychev", "<chebychev/>", inputs{"a": 6.0, "b": 4.0}, "4", 4},
		// (5, 5) is as far from every center: the first wins
		{"tie", "<squaredEuclidean/>", inputs{"a": 5.0, "b": 5.0}, "low", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := scoreElement(t, compileClustering, clusterElem(c.measure, ""), clusterSchema, c.r)
			if got.value.asText() != c.label || got.entity != c.label || got.entityIndex != c.index {
				t.Fatalf("cluster %q (entity %q, index %d), want %q (index %d)", got.value.asText(), got.entity, got.entityIndex, c.label, c.index)
			}
		})
	}
	got := scoreElement(t, compileClustering, clusterElem("<euclidean/>", ""), clusterSchema, inputs{"note": "x"})
	if !got.value.isMissing() || got.entityIndex != 0 {
		t.Fatalf("a row without center values got cluster %q, want none", got.value.asText())
	}
}

// TestClusteringDistance checks each measure's distance from (1, 2) to
// (4, 6), where the differences are 3 and 4.
func TestClusteringDistance(t *testing.T) {
	cases := []struct {
		measure, weight string
		r               inputs
		want            float64
	}{
		{"<euclidean/>", "", inputs{"a": 1.0, "b": 2.0}, 5},
		{"<squaredEuclidean/>", "", inputs{"a": 1.0, "b": 2.0}, 25},
		{"<cityBlock/>", "", inputs{"a": 1.0, "b": 2.0}, 7},
		{"<chebychev/>", "", inputs{"a": 1.0, "b": 2.0}, 4},
		{`<minkowski p-parameter="3"/>`, "", inputs{"a": 1.0, "b": 2.0}, math.Cbrt(27 + 64)},
		{"<euclidean/>", `fieldWeight="2"`, inputs{"a": 1.0, "b": 2.0}, math.Sqrt(2*9 + 16)},
		{"<cityBlock/>", `fieldWeight="2"`, inputs{"a": 1.0, "b": 2.0}, 2*3 + 4},
		{"<chebychev/>", `fieldWeight="2"`, inputs{"a": 1.0, "b": 2.0}, 6},
		// b missing: a's term counts for both fields
		{"<euclidean/>", "", inputs{"a": 1.0}, math.Sqrt(9 * 2)},
		{"<cityBlock/>", "", inputs{"a": 1.0}, 3 * 2},
		// delta: a equal to its coordinate counts 0, b differing counts 1
		{"<cityBlock/>", `compareFunction="delta"`, inputs{"a": 4.0, "b": 2.0}, 0 + 4},
		// gaussSim with scale 2 on a: exp(−ln 2 · 9/4)
		{"<squaredEuclidean/>", `compareFunction="gaussSim" similarityScale="2"`, inputs{"a": 1.0, "b": 6.0}, math.Pow(math.Exp(-math.Ln2*9/4), 2)},
	}
	for _, c := range cases {
		t.Run(c.measure+c.weight, func(t *testing.T) {
			m, names, err := compileElement(compileClustering, clusterElem(c.measure, c.weight), clusterSchema)
			if err != nil {
				t.Fatal(err)
			}
			in := make([]value, len(names))
			for i, f := range names {
				if x, ok := c.r[f].(float64); ok {
					in[i] = numValue(x)
				}
			}
			d, ok := m.(*clustering).distance(in, []float64{4, 6})
			if !ok || !within(d, c.want) {
				t.Fatalf("distance %v (%v), want %v", d, ok, c.want)
			}
		})
	}
}

func TestClusteringRefuses(t *testing.T) {
	cases := []struct {
		name, from, to, want string
	}{
		{"distributionBased", `modelClass="centerBased"`, `modelClass="distributionBased"`, `modelClass "distributionBased"`},
		{"array length", `<Array n="2" type="real">10 10</Array>`, `<Array type="real">10 10 10</Array>`, "Cluster high has 3 center coordinates for 2 center fields"},
		{"array n", `<Array n="2" type="real">0 10</Array>`, `<Array n="3" type="real">0 10</Array>`, "n=3 but holds 2"},
		{"array text", `<Array n="2" type="real">0 0</Array>`, `<Array n="2" type="real">0 zero</Array>`, `"zero" is not a finite number`},
		{"unknown field", `<ClusteringField field="b"/>`, `<ClusteringField field="c"/>`, `ClusteringField names "c"`},
		{"measure", "<euclidean/>", "<jaccard/>", "measure jaccard"},
		{"similarity", `kind="distance"`, `kind="similarity"`, `kind "similarity"`},
		{"compare function", `<ClusteringField field="b"/>`, `<ClusteringField field="b" compareFunction="table"/>`, `compareFunction "table"`},
		{"cluster count", `numberOfClusters="4"`, `numberOfClusters="5"`, "numberOfClusters=5 but holds 4"},
		{"minkowski p", "<euclidean/>", "<minkowski/>", "p-parameter"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			elem := strings.Replace(clusterElem("<euclidean/>", ""), c.from, c.to, 1)
			_, _, err := compileElement(compileClustering, elem, clusterSchema)
			if !errors.Is(err, process.ErrModelInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want ErrModelInvalid naming %s", err, c.want)
			}
		})
	}
}

// TestClusteringLoad scores the k-means model through Load: the cluster
// column a client reads names the cluster as RapidMiner does.
func TestClusteringLoad(t *testing.T) {
	elem := strings.Replace(clusterElem("<euclidean/>", ""), "<MiningSchema/>", `<MiningSchema>
    <MiningField name="a"/><MiningField name="b" missingValueReplacement="10"/>
  </MiningSchema>`, 1)
	lm := loadPMML(t, `
<DataDictionary>
  <DataField name="a" optype="continuous" dataType="double"/>
  <DataField name="b" optype="continuous" dataType="double"/>
  <DataField name="note" optype="categorical" dataType="string"/>
</DataDictionary>`+elem)
	for _, c := range []struct {
		a, b any
		want string
	}{
		{1.0, 2.0, "low"}, {2.0, 9.0, "3"}, {9.0, 1.0, "4"},
		{9.0, nil, "high"}, // b is replaced by 10
	} {
		checkRow(t, scoreRow(t, lm, "a", c.a, "b", c.b), map[string]any{"cluster": c.want})
	}
}
