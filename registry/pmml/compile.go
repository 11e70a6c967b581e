package pmml

import (
	"github.com/scorehub/scorehub/registry/process"
)

// load compiles doc into a LoadedModel.
func load(doc *document, meta process.ModelMetadata, lim Limits) (*process.LoadedModel, error) {
	for _, u := range doc.Unknown {
		switch u.XMLName.Local {
		case "Extension", "MiningBuildTask":
		default:
			return nil, unsupported("PMML element " + u.XMLName.Local + " is not supported")
		}
	}
	if doc.DataDictionary == nil {
		return nil, invalidf("the PMML document has no DataDictionary")
	}
	h, name, err := doc.models.only()
	if err != nil {
		return nil, err
	}
	fs, err := newFieldSet(doc.DataDictionary, lim)
	if err != nil {
		return nil, err
	}
	if td := doc.TransformationDictionary; td != nil {
		if len(td.DefineFunctions) > 0 {
			return nil, unsupported("PMML element DefineFunction is not supported")
		}
		if fs.globals, err = fs.derivedFields(td.DerivedFields); err != nil {
			return nil, err
		}
	}
	c := &compiler{lim: lim}
	m, err := c.compile(&doc.models, fs)
	if err != nil {
		return nil, err
	}
	return newScorer(doc, h, name, m, fs, meta, lim)
}

// compiler compiles model elements, counting what the limits bound.
type compiler struct {
	lim      Limits
	segments int
}

// compile compiles the one model element of ms in fs.
func (c *compiler) compile(ms *models, fs *fieldSet) (model, error) {
	if _, _, err := ms.only(); err != nil {
		return nil, err
	}
	switch {
	case len(ms.TreeModel) == 1:
		return compileTree(ms.TreeModel[0], fs)
	case len(ms.MiningModel) == 1:
		return c.compileMining(ms.MiningModel[0], fs)
	case len(ms.RegressionModel) == 1:
		return compileRegression(ms.RegressionModel[0], fs)
	case len(ms.NaiveBayesModel) == 1:
		return compileNaiveBayes(ms.NaiveBayesModel[0], fs)
	case len(ms.RuleSetModel) == 1:
		return compileRuleSet(ms.RuleSetModel[0], fs)
	}
	return compileClustering(ms.ClusteringModel[0], fs)
}

// only returns the header and name of the one model element of m,
// refusing none or several.
func (m *models) only() (*modelHeader, string, error) {
	var names []string
	var h *modelHeader
	for _, t := range m.TreeModel {
		names, h = append(names, "TreeModel"), &t.modelHeader
	}
	for _, t := range m.MiningModel {
		names, h = append(names, "MiningModel"), &t.modelHeader
	}
	for _, t := range m.RegressionModel {
		names, h = append(names, "RegressionModel"), &t.modelHeader
	}
	for _, t := range m.NaiveBayesModel {
		names, h = append(names, "NaiveBayesModel"), &t.modelHeader
	}
	for _, t := range m.RuleSetModel {
		names, h = append(names, "RuleSetModel"), &t.modelHeader
	}
	for _, t := range m.ClusteringModel {
		names, h = append(names, "ClusteringModel"), &t.modelHeader
	}
	switch len(names) {
	case 0:
		return nil, "", invalidf("the PMML document holds no model this reader scores")
	case 1:
		return h, names[0], nil
	}
	return nil, "", invalidf("a PMML document or Segment holds %d models (%s and %s); only one is scored", len(names), names[0], names[1])
}
