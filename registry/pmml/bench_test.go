package pmml

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/scorehub/scorehub/internal/modeltest"
	"github.com/scorehub/scorehub/internal/tabletest"
	"github.com/scorehub/scorehub/registry/process"
)

// forest writes a random forest: trees trees of the given depth over
// features features, averaging three classes' probabilities, as
// sklearn2pmml writes a RandomForestClassifier.
func forest(trees, depth, features int, rng *rand.Rand) string {
	var b strings.Builder
	b.WriteString(`<DataDictionary>`)
	for f := range features {
		fmt.Fprintf(&b, `<DataField name="f%d" optype="continuous" dataType="double"/>`, f)
	}
	b.WriteString(`<DataField name="y" optype="categorical" dataType="string"><Value value="a"/><Value value="b"/><Value value="c"/></DataField></DataDictionary>`)
	var schema strings.Builder
	for f := range features {
		fmt.Fprintf(&schema, `<MiningField name="f%d"/>`, f)
	}
	schema.WriteString(`<MiningField name="y" usageType="target"/>`)
	fmt.Fprintf(&b, `<MiningModel functionName="classification"><MiningSchema>%s</MiningSchema><Segmentation multipleModelMethod="average">`, schema.String())
	var node func(d int)
	node = func(d int) {
		if d == depth {
			n := [3]int{rng.IntN(10), rng.IntN(10), rng.IntN(10) + 1}
			fmt.Fprintf(&b, `<ScoreDistribution value="a" recordCount="%d"/><ScoreDistribution value="b" recordCount="%d"/><ScoreDistribution value="c" recordCount="%d"/>`, n[0], n[1], n[2])
			return
		}
		f, t := rng.IntN(features), rng.Float64()
		fmt.Fprintf(&b, `<Node score="a"><SimplePredicate field="f%d" operator="lessOrEqual" value="%g"/>`, f, t)
		node(d + 1)
		fmt.Fprintf(&b, `</Node><Node score="b"><SimplePredicate field="f%d" operator="greaterThan" value="%g"/>`, f, t)
		node(d + 1)
		b.WriteString(`</Node>`)
	}
	for i := range trees {
		fmt.Fprintf(&b, `<Segment id="%d"><True/><TreeModel functionName="classification" missingValueStrategy="nullPrediction"><MiningSchema>%s</MiningSchema><Node><True/>`, i+1, schema.String())
		node(0)
		b.WriteString(`</Node></TreeModel></Segment>`)
	}
	b.WriteString(`</Segmentation></MiningModel>`)
	return wrap(b.String())
}

// Benchmark10k scores 10,000 rows through a forest of 100 trees of depth 6
// over 8 features.
func Benchmark10k(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const features, rows = 8, 10_000
	lm, err := Format{}.Load([]byte(forest(100, 6, features, rng)), process.ModelMetadata{})
	if err != nil {
		b.Fatal(err)
	}
	cols := make([]process.Column, features)
	for f := range cols {
		vals := make([]float64, rows)
		for i := range vals {
			vals[i] = rng.Float64()
		}
		cols[f] = process.NumberColumn(fmt.Sprintf("f%d", f), vals, nil)
	}
	in := process.Input{Table: tabletest.Must(rows, cols...)}
	b.ReportAllocs()
	for b.Loop() {
		out, err := lm.Process.Score(context.Background(), in)
		if err != nil {
			b.Fatal(err)
		}
		if out.Rows() != rows {
			b.Fatalf("%d rows", out.Rows())
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// TestConcurrentScoring checks that a model scored from many goroutines at
// once answers each of them as it answers one alone.
func TestConcurrentScoring(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	lm, err := Format{}.Load([]byte(forest(10, 4, 3, rng)), process.ModelMetadata{})
	if err != nil {
		t.Fatal(err)
	}
	tables := make([]*process.Table, 8)
	want := make([][]float64, len(tables))
	for i := range tables {
		cols := make([]process.Column, 3)
		for f := range cols {
			vals := make([]float64, 50)
			for r := range vals {
				vals[r] = rng.Float64()
			}
			cols[f] = process.NumberColumn(fmt.Sprintf("f%d", f), vals, nil)
		}
		tables[i] = tabletest.Must(50, cols...)
		out, err := lm.Process.Score(context.Background(), process.Input{Table: tables[i]})
		if err != nil {
			t.Fatal(err)
		}
		want[i] = out.Column(1).Numbers
	}
	var wg sync.WaitGroup
	for i := range tables {
		wg.Go(func() {
			for range 20 {
				out, err := lm.Process.Score(context.Background(), process.Input{Table: tables[i]})
				if err != nil {
					t.Error(err)
					return
				}
				if !slices.Equal(out.Column(1).Numbers, want[i]) {
					t.Errorf("table %d scored concurrently answers %v, alone %v", i, out.Column(1).Numbers, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestRowWise: a forest scored in row ranges at once answers each range
// as it answers the whole table, missing values included, which is what
// its RowWise promise lets the scoring engine do with a large request.
func TestRowWise(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	lm, err := Format{}.Load([]byte(forest(10, 4, 3, rng)), process.ModelMetadata{})
	if err != nil {
		t.Fatal(err)
	}
	if !lm.RowWise || !lm.ProcessInfo("forest").RowWise {
		t.Errorf("the model is not RowWise")
	}
	const rows = 4000
	cols := make([]process.Column, 3)
	for f := range cols {
		vals, missing := make([]float64, rows), make([]bool, rows)
		for r := range vals {
			vals[r] = rng.Float64()
			missing[r] = rng.IntN(10) == 0
		}
		cols[f] = process.NumberColumn(fmt.Sprintf("f%d", f), vals, missing)
	}
	modeltest.CheckRowWise(t, lm.Process, tabletest.Must(rows, cols...), 7)
}
