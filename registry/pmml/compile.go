package pmml

import (
	"github.com/scorehub/scorehub/registry"
)

// load compiles doc into a LoadedModel.
func load(doc *document, meta registry.ModelMetadata, lim Limits) (*registry.LoadedModel, error) {
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
	name, err := doc.models.only()
	if err != nil {
		return nil, err
	}
	return nil, unsupported("PMML element " + name + " is not supported")
}

// only returns the name of the one model element of m, refusing none or
// several.
func (m *models) only() (string, error) {
	var names []string
	add := func(name string, n int) {
		for range n {
			names = append(names, name)
		}
	}
	add("TreeModel", len(m.TreeModel))
	add("MiningModel", len(m.MiningModel))
	add("RegressionModel", len(m.RegressionModel))
	add("NaiveBayesModel", len(m.NaiveBayesModel))
	add("RuleSetModel", len(m.RuleSetModel))
	add("ClusteringModel", len(m.ClusteringModel))
	switch len(names) {
	case 0:
		return "", invalidf("the PMML document holds no model this reader scores")
	case 1:
		return names[0], nil
	}
	return "", invalidf("the PMML document holds %d models (%s and %s); only one is scored", len(names), names[0], names[1])
}
