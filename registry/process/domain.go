package process

import (
	"fmt"
	"math"
	"slices"
)

// Domain is what a model file declares of one input's valid values: a
// range of numbers, or a set of values. A format fills in what its files
// say (LightGBM's feature_infos, a PMML DataDictionary's Intervals and
// Values) in [ModelSchema.Domains], so that a model can be watched for
// values it was never meant to see when no rows it was built on are at
// hand (package drift's DeclaredProfile).
//
// A domain says only what is valid, never how often: a file declares no
// distribution.
type Domain struct {
	// Name is the input's, as in [ModelSchema.Inputs].
	Name string `json:"name"`
	// Min and Max bound a Number input's valid values; nil where the file
	// sets no bound on that side. MinOpen and MaxOpen say that the bound
	// itself is not valid, as in an open interval. A file that declares
	// several intervals declares their union, and Min and Max bound it: a
	// value in a gap between two intervals lies within them.
	Min     *float64 `json:"min,omitempty"`
	Max     *float64 `json:"max,omitempty"`
	MinOpen bool     `json:"minOpen,omitempty"`
	MaxOpen bool     `json:"maxOpen,omitempty"`
	// Values are a Text input's valid values, in the order the file lists
	// them.
	Values []string `json:"values,omitempty"`
	// Numbers are a categorical Number input's valid values (LightGBM's
	// category codes, a PMML categorical field of an integer dataType), in
	// the order the file lists them: a value that is none of them is not
	// one the model knows, even between two of them. A domain with Numbers
	// has no Min or Max; its range is theirs.
	Numbers []float64 `json:"numbers,omitempty"`
}

// clone returns a copy of d that shares no memory with it.
func (d Domain) clone() Domain {
	if d.Min != nil {
		v := *d.Min
		d.Min = &v
	}
	if d.Max != nil {
		v := *d.Max
		d.Max = &v
	}
	d.Values = slices.Clone(d.Values)
	d.Numbers = slices.Clone(d.Numbers)
	return d
}

// checkDomains reports domains a format should never return: one that
// names no input or is out of the inputs' order, declares nothing, values
// of another kind than its input's, a range holding no number, or a
// number JSON cannot hold.
func checkDomains(domains []Domain, inputs []ColumnSpec) error {
	at := make(map[string]int, len(inputs))
	for i, c := range inputs {
		at[c.Name] = i
	}
	last := -1
	for _, d := range domains {
		i, ok := at[d.Name]
		if !ok || i <= last {
			return fmt.Errorf("the domain of %q names no input, or is out of the inputs' order", d.Name)
		}
		last = i
		ranged := d.Min != nil || d.Max != nil || d.MinOpen || d.MaxOpen
		if inputs[i].Kind == Text && (ranged || d.Numbers != nil) || inputs[i].Kind == Number && d.Values != nil || ranged && d.Numbers != nil {
			return fmt.Errorf("the domain of %s input %q declares values of another kind", inputs[i].Kind, d.Name)
		}
		if d.MinOpen && d.Min == nil || d.MaxOpen && d.Max == nil {
			return fmt.Errorf("the domain of %q has an open bound that is not set", d.Name)
		}
		if d.Min != nil && notFinite(*d.Min) || d.Max != nil && notFinite(*d.Max) || slices.ContainsFunc(d.Numbers, notFinite) {
			return fmt.Errorf("the domain of %q declares a number that is not finite", d.Name)
		}
		if d.Min != nil && d.Max != nil && (*d.Min > *d.Max || *d.Min == *d.Max && (d.MinOpen || d.MaxOpen)) {
			return fmt.Errorf("the domain of %q bounds no number: [%v, %v] (open: %t, %t)", d.Name, *d.Min, *d.Max, d.MinOpen, d.MaxOpen)
		}
		if !ranged && d.Values == nil && d.Numbers == nil {
			return fmt.Errorf("the domain of %q declares nothing", d.Name)
		}
	}
	return nil
}

func notFinite(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }
