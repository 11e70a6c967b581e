package process_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/registry/process"
)

func TestClassNames(t *testing.T) {
	ints := []string{"0", "1", "2"}
	names := []string{"setosa", "versicolor", "virginica"}
	for _, c := range []struct {
		name      string
		meta      []string
		model     []string
		intLabels bool
		want      []string
		words     string // of the error, when one is wanted
	}{
		{"no metadata", nil, ints, true, ints, ""},
		{"integers 0..k-1 renamed", names, ints, true, names, ""},
		{"the model's own names repeated", []string{"a", "b"}, []string{"a", "b"}, false, []string{"a", "b"}, ""},
		{"other integers repeated", []string{"3", "5"}, []string{"3", "5"}, true, []string{"3", "5"}, ""},
		{"text labels", []string{"x", "y"}, []string{"a", "b"}, false, nil, `a test file names its own classes`},
		{"text labels that look like integers", names, ints, false, nil, `a test file names its own classes`},
		{"integers from 1", names, []string{"1", "2", "3"}, true, nil, `integers other than 0..2 in order`},
		{"integers out of order", []string{"a", "b"}, []string{"1", "0"}, true, nil, `integers other than 0..1 in order`},
		{"too few names", names[:2], ints, true, nil, `names 2 classes, but the model's are 3`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := process.ClassNames(c.meta, c.model, c.intLabels, "a test file")
			if c.words != "" {
				if !errors.Is(err, process.ErrModelInvalid) || !strings.Contains(err.Error(), c.words) {
					t.Fatalf("ClassNames = %q, %v; want an invalid model saying %q", got, err, c.words)
				}
				return
			}
			if err != nil || !slices.Equal(got, c.want) {
				t.Fatalf("ClassNames = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}
