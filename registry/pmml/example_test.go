package pmml_test

import (
	"context"
	"fmt"
	"log"

	"github.com/scorehub/scorehub/registry/pmml"
	"github.com/scorehub/scorehub/registry/process"
)

// A decision tree on two iris measurements, as a PMML exporter writes it.
const irisTree = `<?xml version="1.0" encoding="UTF-8"?>
<PMML xmlns="http://www.dmg.org/PMML-4_4" version="4.4">
 <Header><Application name="hand" version="1.0"/></Header>
 <DataDictionary>
  <DataField name="petal_length" optype="continuous" dataType="double"/>
  <DataField name="petal_width" optype="continuous" dataType="double"/>
  <DataField name="species" optype="categorical" dataType="string">
   <Value value="setosa"/><Value value="versicolor"/><Value value="virginica"/>
  </DataField>
 </DataDictionary>
 <TreeModel functionName="classification" missingValueStrategy="lastPrediction">
  <MiningSchema>
   <MiningField name="petal_length"/>
   <MiningField name="petal_width"/>
   <MiningField name="species" usageType="target"/>
  </MiningSchema>
  <Node score="setosa" recordCount="150"><True/>
   <ScoreDistribution value="setosa" recordCount="50"/>
   <ScoreDistribution value="versicolor" recordCount="50"/>
   <ScoreDistribution value="virginica" recordCount="50"/>
   <Node score="setosa" recordCount="50"><SimplePredicate field="petal_length" operator="lessOrEqual" value="2.45"/>
    <ScoreDistribution value="setosa" recordCount="50"/>
   </Node>
   <Node score="versicolor" recordCount="100"><True/>
    <ScoreDistribution value="versicolor" recordCount="50"/>
    <ScoreDistribution value="virginica" recordCount="50"/>
    <Node score="versicolor" recordCount="54"><SimplePredicate field="petal_width" operator="lessOrEqual" value="1.75"/>
     <ScoreDistribution value="versicolor" recordCount="49"/>
     <ScoreDistribution value="virginica" recordCount="5"/>
    </Node>
    <Node score="virginica" recordCount="46"><True/>
     <ScoreDistribution value="versicolor" recordCount="1"/>
     <ScoreDistribution value="virginica" recordCount="45"/>
    </Node>
   </Node>
  </Node>
 </TreeModel>
</PMML>`

func ExampleFormat_Load() {
	catalog := process.NewCatalog()
	if err := catalog.RegisterFormat(pmml.Format{}); err != nil {
		log.Fatal(err)
	}
	// The file names its inputs, label and classes itself.
	model, err := catalog.LoadModel([]byte(irisTree), process.ModelMetadata{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(model.Schema.Producer, model.Schema.Objective, model.Schema.Task)

	row, err := process.NewTable(1,
		process.NumberColumn("petal_length", []float64{4.8}, nil),
		process.NumberColumn("petal_width", []float64{1.4}, nil),
	)
	if err != nil {
		log.Fatal(err)
	}
	out, err := model.Process.Score(context.Background(), process.Input{Table: row})
	if err != nil {
		log.Fatal(err)
	}
	for i := range out.NumColumns() {
		c := out.Column(i)
		if c.Kind == process.Text {
			fmt.Printf("%s = %s\n", c.Name, c.Texts[0])
		} else {
			fmt.Printf("%s = %.6f\n", c.Name, c.Numbers[0])
		}
	}
	// Output:
	// hand 1.0 TreeModel classification
	// prediction(species) = versicolor
	// confidence(setosa) = 0.000000
	// confidence(versicolor) = 0.907407
	// confidence(virginica) = 0.092593
}
