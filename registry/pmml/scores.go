package pmml

import (
	"math"
	"strconv"
)

// This file holds what the regression, naive Bayes, rule set and
// clustering models share: matching a row's value against a category the
// file writes, and naming the most probable class.

// category is a category as a model element writes it (a
// CategoricalPredictor's value, a PairCounts' value), ready to compare
// with a row's value: as text with text, as a number with a number, so
// that "1" and "1.0" name the same category of a numeric field.
type category struct {
	text  string
	num   float64
	isNum bool
}

// newCategory reads s, as written in the file.
func newCategory(s string) category {
	f, err := strconv.ParseFloat(s, 64)
	return category{text: s, num: f, isNum: err == nil && !math.IsNaN(f)}
}

// matches reports whether v is the category c.
func (c category) matches(v value) bool {
	switch v.kind {
	case number:
		return c.isNum && c.num == v.num
	case text:
		return c.text == v.str
	}
	return false
}

// bestClass returns the most probable class of p (the first on a tie) as
// a text value, or a missing value when no probability is a number.
func bestClass(p []float64, names []string) value {
	best := -1
	for k, q := range p {
		if !math.IsNaN(q) && (best < 0 || q > p[best]) {
			best = k
		}
	}
	if best < 0 {
		return value{}
	}
	return textValue(names[best])
}
