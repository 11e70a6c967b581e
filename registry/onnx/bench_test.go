package onnx

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/scorehub/scorehub/internal/tabletest"
	"github.com/scorehub/scorehub/registry/process"
)

// syntheticForest is a random forest of trees full to depth, over
// features float inputs, with classes classes: the shape of a
// scikit-learn forest written as a TreeEnsembleClassifier.
func syntheticForest(trees, depth, features, classes int, seed uint64) tModel {
	r := rand.New(rand.NewPCG(seed, 1))
	var treeIDs, nodeIDs, feats, trueIDs, falseIDs, cTrees, cNodes, cIDs []int64
	var modes []string
	var values, weights []float32
	for t := range trees {
		n := 1<<(depth+1) - 1
		for id := range n {
			treeIDs = append(treeIDs, int64(t))
			nodeIDs = append(nodeIDs, int64(id))
			if id >= n/2 {
				modes = append(modes, "LEAF")
				feats, values, trueIDs, falseIDs = append(feats, 0), append(values, 0), append(trueIDs, 0), append(falseIDs, 0)
				for c := range classes {
					cTrees, cNodes, cIDs = append(cTrees, int64(t)), append(cNodes, int64(id)), append(cIDs, int64(c))
					weights = append(weights, r.Float32()/float32(trees))
				}
				continue
			}
			modes = append(modes, "BRANCH_LEQ")
			feats = append(feats, int64(r.IntN(features)))
			values = append(values, r.Float32())
			trueIDs, falseIDs = append(trueIDs, int64(2*id+1)), append(falseIDs, int64(2*id+2))
		}
	}
	labels := make([]int64, classes)
	for i := range labels {
		labels[i] = int64(i)
	}
	return tModel{
		nodes: []tNode{ml("TreeEnsembleClassifier", []string{"X"}, []string{"label", "p"},
			aInts("nodes_treeids", treeIDs...), aInts("nodes_nodeids", nodeIDs...), aInts("nodes_featureids", feats...),
			aStrings("nodes_modes", modes...), aFloats("nodes_values", values...),
			aInts("nodes_truenodeids", trueIDs...), aInts("nodes_falsenodeids", falseIDs...),
			aInts("class_treeids", cTrees...), aInts("class_nodeids", cNodes...), aInts("class_ids", cIDs...),
			aFloats("class_weights", weights...), aInts("classlabels_int64s", labels...))},
		inputs:  []tValue{floatIn("X", int64(features))},
		outputs: []tValue{{name: "p", elem: onnxFloat, dims: []int64{-1, int64(classes)}}},
	}
}

// BenchmarkTreeEnsemble10k scores 10,000 rows with a forest of 100 trees
// of depth 8 over 20 features and 3 classes.
func BenchmarkTreeEnsemble10k(b *testing.B) {
	lm, err := Format{}.Load(syntheticForest(100, 8, 20, 3, 1).encode(), process.ModelMetadata{})
	if err != nil {
		b.Fatal(err)
	}
	const rows = 10_000
	r := rand.New(rand.NewPCG(2, 2))
	var cols []process.Column
	for _, in := range lm.Schema.Inputs {
		v := make([]float64, rows)
		for i := range v {
			v[i] = r.Float64()
		}
		cols = append(cols, process.NumberColumn(in.Name, v, nil))
	}
	in := process.Input{Table: tabletest.Must(rows, cols...)}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := lm.Process.Score(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
}
