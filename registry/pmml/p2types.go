package pmml

// This file holds placeholders for the XML structs and compile functions of
// RuleSetModel and ClusteringModel, so the document type can name them; the
// files that read those models replace it. Until then those elements are
// refused by name.

// ruleSetModel is a RuleSetModel element.
type ruleSetModel struct{ modelHeader }

// clusteringModel is a ClusteringModel element.
type clusteringModel struct{ modelHeader }

func compileRuleSet(r *ruleSetModel, fs *fieldSet) (model, error) {
	return nil, unsupported("PMML element RuleSetModel is not supported")
}

func compileClustering(r *clusteringModel, fs *fieldSet) (model, error) {
	return nil, unsupported("PMML element ClusteringModel is not supported")
}
