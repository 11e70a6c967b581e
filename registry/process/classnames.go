package process

import (
	"slices"
	"strconv"
)

// ClassNames returns the names a classifier's classes answer under: the
// model's own, unless meta (the metadata's Classes) names them. Every
// format names classes by the one rule [ModelMetadata.Classes] states:
//
//   - meta empty: the model's names;
//   - meta equal to the model's names: those;
//   - the model's labels integers (intLabels) that are exactly 0, 1, …,
//     k-1 in that order, as XGBoost numbers its classes and scikit-learn
//     writes a classifier trained on such labels: meta renames them, one
//     name per class, in that order;
//   - anything else fails with [ErrModelInvalid], saying why: too few or
//     too many names, or labels that are text, or integers other than
//     0..k-1 in order, whose names the file gives and meta must repeat.
//
// model holds the labels as the file gives them, integers in decimal;
// file names the kind of file for messages ("a PMML file").
func ClassNames(meta, model []string, intLabels bool, file string) ([]string, error) {
	if len(meta) == 0 || slices.Equal(meta, model) {
		return slices.Clone(model), nil
	}
	if len(meta) != len(model) {
		return nil, ModelErrorf(ErrModelInvalid, "the metadata names %d classes, but the model's are %d: %q", len(meta), len(model), model)
	}
	if !intLabels {
		return nil, ModelErrorf(ErrModelInvalid, "the metadata names the classes %q, but the model's are %q; %s names its own classes, which metadata renames only where they are the integers 0..k-1", meta, model, file)
	}
	if !sequence(model) {
		return nil, ModelErrorf(ErrModelInvalid, "the metadata names the classes %q, but the model's are %q, integers other than 0..%d in order; %s names its own classes, which metadata renames only where they are the integers 0..k-1", meta, model, len(model)-1, file)
	}
	return slices.Clone(meta), nil
}

// sequence reports whether labels are "0", "1", …, in order.
func sequence(labels []string) bool {
	for i, l := range labels {
		if l != strconv.Itoa(i) {
			return false
		}
	}
	return true
}

// CheckNames checks that list, the names source gives (such as "the
// metadata"), holds want names, each non-empty and none twice; one and
// many say what they name ("feature", "features"). It fails with
// [ErrModelInvalid], saying which rule list breaks.
func CheckNames(one, many, source string, list []string, want int) error {
	if len(list) != want {
		return ModelErrorf(ErrModelInvalid, "%s names %d %s; the model has %d", source, len(list), many, want)
	}
	seen := make(map[string]bool, len(list))
	for i, s := range list {
		if s == "" {
			return ModelErrorf(ErrModelInvalid, "%s: %s %d has an empty name", source, one, i)
		}
		if seen[s] {
			return ModelErrorf(ErrModelInvalid, "%s: %s name %q appears twice", source, one, s)
		}
		seen[s] = true
	}
	return nil
}
