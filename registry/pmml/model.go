package pmml

import (
	"encoding/xml"
	"math"
	"strconv"
)

// This file is the contract between the parts of the package: how values
// flow through a compiled model, what every PMML model element compiles
// into, and the typed document encoding/xml fills. The XML structs of
// RegressionModel, NaiveBayesModel, RuleSetModel and ClusteringModel and
// their compile functions live in their own files (regression.go,
// naivebayes.go, ruleset.go, clustering.go).

// kind tells what a value holds.
type kind uint8

const (
	missing kind = iota // no value: absent, null, or mapped to missing
	number              // num holds it
	text                // str holds it
)

// value is one field's value for one row. The zero value is missing.
// Categorical fields of a numeric dataType are numbers; their categories are
// compared as numbers.
type value struct {
	num  float64
	str  string
	kind kind
}

// num returns a number value; NaN is missing.
func numValue(f float64) value {
	if math.IsNaN(f) {
		return value{}
	}
	return value{num: f, kind: number}
}

// textValue returns a text value.
func textValue(s string) value { return value{str: s, kind: text} }

// isMissing reports whether v holds no value.
func (v value) isMissing() bool { return v.kind == missing }

// asNumber returns v as a number: a text value that parses as one counts.
func (v value) asNumber() (float64, bool) {
	switch v.kind {
	case number:
		return v.num, true
	case text:
		f, err := strconv.ParseFloat(v.str, 64)
		return f, err == nil
	}
	return 0, false
}

// asText returns v as PMML writes it: numbers in their shortest form.
func (v value) asText() string {
	if v.kind == number {
		return strconv.FormatFloat(v.num, 'g', -1, 64)
	}
	return v.str
}

// prediction is what a model answers for one row.
type prediction struct {
	// value is the predicted class (as text) or number; missing when the
	// model has no answer for the row.
	value value
	// probs holds a classifier's probabilities by class index (the order
	// of the target's Values in the DataDictionary); nil otherwise. Models
	// fill it in place: its length is set by the caller.
	probs []float64
	// entity is a clustering model's cluster id (or name); "" otherwise.
	entity string
	// entityIndex is the 1-based index of the cluster; 0 when none.
	entityIndex int
}

// reset clears p for the next row, keeping probs' memory.
func (p *prediction) reset() {
	p.value = value{}
	for i := range p.probs {
		p.probs[i] = 0
	}
	p.entity = ""
	p.entityIndex = 0
}

// model is a compiled PMML model element. in holds the row's values by the
// slots of the model's fieldSet; predict may write the slots of its own
// derived fields. It must be safe for concurrent use with distinct in and
// out.
type model interface {
	predict(in []value, out *prediction) error
}

// document is a PMML file as encoding/xml reads it. Element names are
// matched in any namespace; Load checks the namespace of the root.
type document struct {
	XMLName                  xml.Name                  `xml:"PMML"`
	Version                  string                    `xml:"version,attr"`
	Header                   header                    `xml:"Header"`
	DataDictionary           *dataDictionary           `xml:"DataDictionary"`
	TransformationDictionary *transformationDictionary `xml:"TransformationDictionary"`
	models
	// Unknown collects every child this reader does not know, so Load can
	// refuse it by name.
	Unknown []unknownElement `xml:",any"`
}

// models holds the model elements a PMML document or a Segment can hold.
type models struct {
	TreeModel       []*treeModel       `xml:"TreeModel"`
	MiningModel     []*miningModel     `xml:"MiningModel"`
	RegressionModel []*regressionModel `xml:"RegressionModel"`
	NaiveBayesModel []*naiveBayesModel `xml:"NaiveBayesModel"`
	RuleSetModel    []*ruleSetModel    `xml:"RuleSetModel"`
	ClusteringModel []*clusteringModel `xml:"ClusteringModel"`
}

// unknownElement is an element this reader does not read.
type unknownElement struct {
	XMLName xml.Name
}

// header is the PMML Header: who wrote the file.
type header struct {
	Copyright   string      `xml:"copyright,attr"`
	Description string      `xml:"description,attr"`
	Application application `xml:"Application"`
}

// application names the producer.
type application struct {
	Name    string `xml:"name,attr"`
	Version string `xml:"version,attr"`
}

// dataDictionary declares the fields of the data.
type dataDictionary struct {
	DataFields []*dataField `xml:"DataField"`
}

// dataField is one field of the data.
type dataField struct {
	Name      string      `xml:"name,attr"`
	Optype    string      `xml:"optype,attr"`
	DataType  string      `xml:"dataType,attr"`
	Values    []pmmlValue `xml:"Value"`
	Intervals []interval  `xml:"Interval"`
}

// pmmlValue is a Value element: a valid, invalid or missing value.
type pmmlValue struct {
	Value    string `xml:"value,attr"`
	Property string `xml:"property,attr"`
}

// interval bounds a continuous field or a Discretize bin.
type interval struct {
	Closure     string   `xml:"closure,attr"`
	LeftMargin  *float64 `xml:"leftMargin,attr"`
	RightMargin *float64 `xml:"rightMargin,attr"`
}

// transformationDictionary holds derived fields every model can use.
type transformationDictionary struct {
	DerivedFields   []*derivedField  `xml:"DerivedField"`
	DefineFunctions []unknownElement `xml:"DefineFunction"`
}

// localTransformations holds derived fields of one model.
type localTransformations struct {
	DerivedFields []*derivedField `xml:"DerivedField"`
}

// derivedField is a field computed from others by an expression.
type derivedField struct {
	Name     string `xml:"name,attr"`
	Optype   string `xml:"optype,attr"`
	DataType string `xml:"dataType,attr"`
	// Exprs holds the expression, among Extension and Value elements.
	Exprs []*expr `xml:",any"`
}

// miningSchema lists the fields a model uses.
type miningSchema struct {
	MiningFields []*miningField `xml:"MiningField"`
}

// miningField is how a model uses one field.
type miningField struct {
	Name                    string   `xml:"name,attr"`
	UsageType               string   `xml:"usageType,attr"`
	Optype                  string   `xml:"optype,attr"`
	Outliers                string   `xml:"outliers,attr"`
	LowValue                *float64 `xml:"lowValue,attr"`
	HighValue               *float64 `xml:"highValue,attr"`
	MissingValueReplacement *string  `xml:"missingValueReplacement,attr"`
	MissingValueTreatment   string   `xml:"missingValueTreatment,attr"`
	InvalidValueTreatment   string   `xml:"invalidValueTreatment,attr"`
	InvalidValueReplacement *string  `xml:"invalidValueReplacement,attr"`
}

// output lists a model's output fields.
type output struct {
	OutputFields []*outputField `xml:"OutputField"`
}

// outputField is one result a model names.
type outputField struct {
	Name          string  `xml:"name,attr"`
	Optype        string  `xml:"optype,attr"`
	DataType      string  `xml:"dataType,attr"`
	TargetField   string  `xml:"targetField,attr"`
	Feature       string  `xml:"feature,attr"`
	Value         string  `xml:"value,attr"`
	IsFinalResult string  `xml:"isFinalResult,attr"`
	Exprs         []*expr `xml:",any"`
}

// modelHeader holds what every model element has.
type modelHeader struct {
	ModelName     string `xml:"modelName,attr"`
	FunctionName  string `xml:"functionName,attr"`
	AlgorithmName string `xml:"algorithmName,attr"`
	IsScorable    string `xml:"isScorable,attr"`
	// MathContext is the x-mathContext of JPMML's producers: "float"
	// asks for float32 arithmetic, which this reader does not do.
	MathContext          string                `xml:"x-mathContext,attr"`
	MiningSchema         *miningSchema         `xml:"MiningSchema"`
	Output               *output               `xml:"Output"`
	LocalTransformations *localTransformations `xml:"LocalTransformations"`
	Targets              *targets              `xml:"Targets"`
	ModelStats           *unknownElement       `xml:"ModelStats"`
	ModelExplanation     *unknownElement       `xml:"ModelExplanation"`
	ModelVerification    *unknownElement       `xml:"ModelVerification"`
}

// targets post-processes a model's predicted values.
type targets struct {
	Targets []*target `xml:"Target"`
}

// target rescales or bounds one target field's predicted value.
type target struct {
	Field           string            `xml:"field,attr"`
	Optype          string            `xml:"optype,attr"`
	CastInteger     string            `xml:"castInteger,attr"`
	Min             *float64          `xml:"min,attr"`
	Max             *float64          `xml:"max,attr"`
	RescaleConstant float64           `xml:"rescaleConstant,attr"`
	RescaleFactor   *float64          `xml:"rescaleFactor,attr"`
	TargetValues    []*unknownElement `xml:"TargetValue"`
}

// expr is any PMML expression element (Constant, FieldRef, NormContinuous,
// NormDiscrete, Discretize, MapValues, Apply, …), told apart by XMLName;
// each reads the attributes and children of its kind. Elements that are no
// expression (Extension, Value) land here too and are skipped by name.
type expr struct {
	XMLName xml.Name

	Field                 string  `xml:"field,attr"`
	MapMissingTo          *string `xml:"mapMissingTo,attr"`
	DefaultValue          *string `xml:"defaultValue,attr"`
	DataType              string  `xml:"dataType,attr"`
	Outliers              string  `xml:"outliers,attr"`
	Value                 string  `xml:"value,attr"`
	IsMissing             string  `xml:"missing,attr"` // Constant's missing="true"
	Function              string  `xml:"function,attr"`
	InvalidValueTreatment string  `xml:"invalidValueTreatment,attr"`
	OutputColumn          string  `xml:"outputColumn,attr"`
	Text                  string  `xml:",chardata"`

	LinearNorms      []linearNorm      `xml:"LinearNorm"`
	DiscretizeBins   []discretizeBin   `xml:"DiscretizeBin"`
	FieldColumnPairs []fieldColumnPair `xml:"FieldColumnPair"`
	InlineTable      *inlineTable      `xml:"InlineTable"`
	// Args are Apply's arguments, in order, with any other child.
	Args []*expr `xml:",any"`
}

// linearNorm is one point of NormContinuous' piecewise linear map.
type linearNorm struct {
	Orig float64 `xml:"orig,attr"`
	Norm float64 `xml:"norm,attr"`
}

// discretizeBin maps an interval to a value.
type discretizeBin struct {
	BinValue string    `xml:"binValue,attr"`
	Interval *interval `xml:"Interval"`
}

// fieldColumnPair binds a field to a column of MapValues' table.
type fieldColumnPair struct {
	Field  string `xml:"field,attr"`
	Column string `xml:"column,attr"`
}

// inlineTable is a table written in the file.
type inlineTable struct {
	Rows []inlineRow `xml:"row"`
}

// inlineRow is one row of an inlineTable: one element per column.
type inlineRow struct {
	Cells []inlineCell `xml:",any"`
}

// inlineCell is one column's value in a row.
type inlineCell struct {
	XMLName xml.Name
	Text    string `xml:",chardata"`
}

// pred is any predicate element (SimplePredicate, CompoundPredicate,
// SimpleSetPredicate, True, False), told apart by XMLName. Where a predicate
// is one child among others of unknown kind, those land here too.
type pred struct {
	XMLName xml.Name

	Field           string `xml:"field,attr"`
	Operator        string `xml:"operator,attr"`
	Value           string `xml:"value,attr"`
	BooleanOperator string `xml:"booleanOperator,attr"`
	Array           *array `xml:"Array"`
	// Preds are a CompoundPredicate's operands, in order.
	Preds []*pred `xml:",any"`
}

// array is a PMML Array: space-separated values, quoted where they hold
// spaces.
type array struct {
	Type string `xml:"type,attr"`
	N    *int   `xml:"n,attr"`
	Text string `xml:",chardata"`
}

// treeModel is a decision tree.
type treeModel struct {
	modelHeader
	MissingValueStrategy string   `xml:"missingValueStrategy,attr"`
	MissingValuePenalty  *float64 `xml:"missingValuePenalty,attr"`
	NoTrueChildStrategy  string   `xml:"noTrueChildStrategy,attr"`
	SplitCharacteristic  string   `xml:"splitCharacteristic,attr"`
	Node                 *node    `xml:"Node"`
}

// node is a tree node: its predicate, its score and its children.
type node struct {
	ID                 string               `xml:"id,attr"`
	Score              *string              `xml:"score,attr"`
	RecordCount        *float64             `xml:"recordCount,attr"`
	DefaultChild       string               `xml:"defaultChild,attr"`
	Nodes              []*node              `xml:"Node"`
	ScoreDistributions []*scoreDistribution `xml:"ScoreDistribution"`
	Extensions         []unknownElement     `xml:"Extension"`
	// Other holds the predicate and any other child (Partition,
	// Regression, DecisionTree), told apart by name.
	Other []*pred `xml:",any"`
}

// scoreDistribution is a class's share of a node's records.
type scoreDistribution struct {
	Value       string   `xml:"value,attr"`
	RecordCount float64  `xml:"recordCount,attr"`
	Confidence  *float64 `xml:"confidence,attr"`
	Probability *float64 `xml:"probability,attr"`
}

// miningModel combines models through a Segmentation.
type miningModel struct {
	modelHeader
	Segmentation *segmentation   `xml:"Segmentation"`
	Regression   *unknownElement `xml:"Regression"`
	DecisionTree *unknownElement `xml:"DecisionTree"`
}

// segmentation is how a MiningModel combines its segments.
type segmentation struct {
	MultipleModelMethod        string     `xml:"multipleModelMethod,attr"`
	MissingPredictionTreatment string     `xml:"missingPredictionTreatment,attr"`
	MissingThreshold           *float64   `xml:"missingThreshold,attr"`
	Segments                   []*segment `xml:"Segment"`
}

// segment is one model of a Segmentation and the predicate that selects it.
type segment struct {
	ID     string   `xml:"id,attr"`
	Weight *float64 `xml:"weight,attr"`
	models
	Extensions []unknownElement `xml:"Extension"`
	// Other holds the predicate and any model element this reader does
	// not know, told apart by name.
	Other []*pred `xml:",any"`
}
