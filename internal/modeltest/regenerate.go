package modeltest

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// SameFixtureNames fails t unless the generator script wrote into out
// the fixtures that dir holds, and returns their names.
func SameFixtureNames(t testing.TB, script, dir, out string) []string {
	t.Helper()
	committed := FixtureNames(t, dir)
	if fresh := FixtureNames(t, out); !slices.Equal(fresh, committed) {
		t.Fatalf("%s writes the fixtures %q; %s holds %q (run it to update %[3]s)", script, fresh, dir, committed)
	}
	return committed
}

// maxListed is how many differences SameTree lists.
const maxListed = 20

// SameTree fails t unless [Compare] finds want and got the same: the
// decoded committed file and the one the generator script wrote again.
// The message lists where they differ, the committed value and the new
// one. file names the file.
//
// A file is compared by what it holds rather than byte for byte: another
// build of the training library may compute the last digits of a number
// differently (numpy rounds some sums otherwise on a CPU with AVX-512).
func SameTree(t testing.TB, script, file string, want, got any) {
	t.Helper()
	diffs := Compare(want, got)
	if len(diffs) == 0 {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s now writes %s differently (run it to update testdata if that is on purpose): ", script, file)
	if len(diffs) == 1 {
		b.WriteString("1 value differs")
	} else {
		fmt.Fprintf(&b, "%d values differ", len(diffs))
	}
	for i, d := range diffs {
		if i == maxListed {
			fmt.Fprintf(&b, "\n\t… and %d more", len(diffs)-i)
			break
		}
		b.WriteString("\n\t" + d.String())
	}
	t.Errorf("%s", b.String())
}

// SameJSON fails t unless the JSON files at want and got hold the same
// document, as [SameTree] compares them, numbers as json.Number; script is
// the generator that wrote got. A NaN where a value stands, which XGBoost
// writes as the condition of a categorical split and JSON lacks, reads as
// null.
func SameJSON(t testing.TB, script, want, got string) {
	t.Helper()
	sameFile(t, script, want, got, decodeJSON)
}

// SameXML fails t unless the XML files at want and got hold the same
// document, as [SameTree] compares them; script is the generator that
// wrote got. An element is an object of:
//
//   - @NAME, each attribute's value;
//   - #text, the words of its text, if any (an Array's numbers);
//   - NAME[K], its K-th child element of that name, from 1, as in XPath;
//   - #children, the names of its child elements in order, so that
//     children that trade places are a difference too.
//
// An attribute value or a word that is a number is a json.Number, held to
// [Tolerance] unless it is an integer. Comments, processing instructions
// and the space between elements are left out.
func SameXML(t testing.TB, script, want, got string) {
	t.Helper()
	sameFile(t, script, want, got, decodeXML)
}

func sameFile(t testing.TB, script, want, got string, decode func([]byte) (any, error)) {
	t.Helper()
	var docs [2]any
	for i, p := range []string{want, got} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if docs[i], err = decode(b); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	SameTree(t, script, filepath.Base(want), docs[0], docs[1])
}

// nanValue matches a NaN where JSON has a value, and what precedes it.
var nanValue = regexp.MustCompile(`([\[,:]\s*)NaN\b`)

// decodeJSON decodes a JSON document as SameJSON says.
func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(nanValue.ReplaceAll(b, []byte("${1}null"))))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON document")
	}
	return v, nil
}

// numberText matches a number as XML attributes and text spell one.
var numberText = regexp.MustCompile(`^-?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$`)

// decodeXML decodes an XML document as SameXML says, into an object
// holding the root element by its name.
func decodeXML(b []byte) (any, error) {
	type element struct {
		fields   map[string]any
		seen     map[string]int
		children []any
		words    []any
	}
	word := func(s string) any {
		if numberText.MatchString(s) {
			return json.Number(s)
		}
		return s
	}
	root := map[string]any{}
	var open []*element
	d := xml.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			e := &element{fields: map[string]any{}, seen: map[string]int{}}
			for _, a := range tok.Attr {
				name := a.Name.Local
				if a.Name.Space != "" {
					name = a.Name.Space + ":" + name
				}
				e.fields["@"+name] = word(a.Value)
			}
			open = append(open, e)
		case xml.CharData:
			if len(open) > 0 {
				e := open[len(open)-1]
				for _, w := range strings.Fields(string(tok)) {
					e.words = append(e.words, word(w))
				}
			}
		case xml.EndElement:
			e := open[len(open)-1]
			open = open[:len(open)-1]
			if e.words != nil {
				e.fields["#text"] = e.words
			}
			if e.children != nil {
				e.fields["#children"] = e.children
			}
			name := tok.Name.Local
			if len(open) == 0 {
				if len(root) > 0 {
					return nil, errors.New("more than one root element")
				}
				root[name] = e.fields
				continue
			}
			parent := open[len(open)-1]
			parent.seen[name]++
			parent.fields[fmt.Sprintf("%s[%d]", name, parent.seen[name])] = e.fields
			parent.children = append(parent.children, name)
		}
	}
	if len(root) == 0 {
		return nil, errors.New("no root element")
	}
	return root, nil
}
