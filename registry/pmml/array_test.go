package pmml

import (
	"slices"
	"strings"
	"testing"
)

// TestParseArrayCount: an Array holding fewer values than its n says is
// read as the values it holds, with a note; one holding more is refused,
// as a value its producer forgot to quote may have been split in two.
func TestParseArrayCount(t *testing.T) {
	n := func(k int) *int { return &k }
	for _, c := range []struct {
		name  string
		a     array
		want  []string
		note  string
		words string // of the error, when one is wanted
	}{
		{"as said", array{Type: "string", N: n(2), Text: `"a b" c`}, []string{"a b", "c"}, "", ""},
		{"no n", array{Type: "string", Text: `a b c`}, []string{"a", "b", "c"}, "", ""},
		{"fewer", array{Type: "string", N: n(3), Text: `"a" "b"`}, []string{"a", "b"}, "an Array says it holds 3 values but holds 2; the 2 it holds were read", ""},
		{"fewer numbers", array{Type: "int", N: n(4), Text: `1 2 3`}, []string{"1", "2", "3"}, "an Array says it holds 4 values but holds 3; the 3 it holds were read", ""},
		{"more", array{Type: "string", N: n(2), Text: `New York Boston`}, nil, "", "an Array says it holds 2 values but holds 3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, note, err := parseArray(&c.a)
			if c.words != "" {
				if err == nil || !strings.Contains(err.Error(), c.words) {
					t.Fatalf("parseArray = %q, %v; want an error saying %q", got, err, c.words)
				}
				return
			}
			if err != nil || !slices.Equal(got, c.want) || note != c.note {
				t.Fatalf("parseArray = %q, %q, %v; want %q, %q", got, note, err, c.want, c.note)
			}
		})
	}
}
