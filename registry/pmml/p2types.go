package pmml

// This file holds placeholders for the XML structs and compile functions of
// RuleSetModel, so the document type can name them; the
// files that read those models replace it. Until then those elements are
// refused by name.

// ruleSetModel is a RuleSetModel element.
type ruleSetModel struct{ modelHeader }

func compileRuleSet(r *ruleSetModel, fs *fieldSet) (model, error) {
	return nil, unsupported("PMML element RuleSetModel is not supported")
}
