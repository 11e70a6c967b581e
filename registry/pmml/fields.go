package pmml

// fieldSet names the fields a model can read and gives each a slot in the
// []value a row is evaluated in.
type fieldSet struct {
	parent *fieldSet
	slots  map[string]int
}
