package pmml

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strconv"
	"strings"
)

// namespacePrefix starts the namespace of every PMML 4.x document; the
// version follows, as in "http://www.dmg.org/PMML-4_4".
const namespacePrefix = "http://www.dmg.org/PMML-"

// supportedVersions are the PMML versions this reader scores.
var supportedVersions = []string{"4.0", "4.1", "4.2", "4.3", "4.4"}

// decode parses a PMML file into its document under lim. A first pass
// reads it token by token, bounding its depth and element count and
// refusing a DOCTYPE before encoding/xml builds anything; only a file that
// passes is unmarshalled.
func decode(b []byte, lim Limits) (*document, error) {
	if int64(len(b)) > lim.MaxBytes {
		return nil, limitf("the file has %d bytes, more than the limit of %d", len(b), lim.MaxBytes)
	}
	if err := scan(b, lim); err != nil {
		return nil, err
	}
	var doc document
	d := xml.NewDecoder(bytes.NewReader(b))
	d.CharsetReader = charsetReader
	if err := d.Decode(&doc); err != nil {
		return nil, invalidf("the file is not a valid PMML document: %s", xmlMessage(err))
	}
	return &doc, nil
}

// scan walks the file's tokens once, checking what must hold before it is
// unmarshalled: well-formed XML, no DOCTYPE, a PMML root of a supported
// version, no producer's x- attribute the reader does not implement, and
// the limits on depth and elements.
func scan(b []byte, lim Limits) error {
	d := xml.NewDecoder(bytes.NewReader(b))
	d.Strict = true
	d.CharsetReader = charsetReader
	depth, nodes := 0, 0
	// extension is the depth of the Extension element being read, whose
	// content is the producer's own; 0 outside one.
	extension := 0
	for {
		tok, err := d.Token()
		var ce charsetError
		if errors.As(err, &ce) {
			return invalidf("the file's encoding %q is not supported; PMML files are read as UTF-8", string(ce))
		}
		if err == io.EOF {
			if nodes == 0 {
				return invalidf("the file holds no XML element")
			}
			return nil
		}
		if err != nil {
			return invalidf("the file is not well-formed XML: %s", xmlMessage(err))
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			nodes++
			if depth > lim.MaxDepth {
				return limitf("the file's XML elements nest more than %d deep, the limit", lim.MaxDepth)
			}
			if nodes > lim.MaxNodes {
				return limitf("the file has more than %d XML elements, the limit", lim.MaxNodes)
			}
			if nodes == 1 {
				if err := checkRoot(t); err != nil {
					return err
				}
			} else if depth == 1 {
				return invalidf("the file has more than one root element")
			}
			if extension == 0 && t.Name.Local == "Extension" {
				extension = depth
			}
			if extension == 0 {
				if err := checkExtensionAttrs(t); err != nil {
					return err
				}
			}
		case xml.EndElement:
			if depth == extension {
				extension = 0
			}
			depth--
		case xml.Directive:
			return invalidf("the file has a DOCTYPE or other XML declaration (%s); PMML needs none, and they are refused", firstWord(t))
		}
	}
}

// checkExtensionAttrs refuses an attribute of t that is a producer's
// extension (named x-…) the reader does not implement: such an attribute
// may change the answer (JPMML's x-missingThreshold, for one). The one it
// implements is x-mathContext on a model element.
func checkExtensionAttrs(t xml.StartElement) error {
	for _, a := range t.Attr {
		if a.Name.Space != "" || !strings.HasPrefix(a.Name.Local, "x-") {
			continue
		}
		if a.Name.Local == "x-mathContext" && modelElements[t.Name.Local] {
			continue
		}
		return unsupported("the attribute " + a.Name.Local + " of " + t.Name.Local + " (a producer's extension) is not supported")
	}
	return nil
}

// modelElements are the model elements the reader scores.
var modelElements = map[string]bool{
	"TreeModel": true, "MiningModel": true, "RegressionModel": true,
	"NaiveBayesModel": true, "RuleSetModel": true, "ClusteringModel": true,
}

// checkRoot checks the root element: PMML, in a PMML 4.x namespace that
// agrees with its version attribute.
func checkRoot(t xml.StartElement) error {
	if t.Name.Local != "PMML" {
		return invalidf("the root element is %s, not PMML", t.Name.Local)
	}
	version := ""
	for _, a := range t.Attr {
		if a.Name.Local == "version" && a.Name.Space == "" {
			version = a.Value
		}
	}
	if ns := t.Name.Space; ns != "" {
		if !strings.HasPrefix(ns, namespacePrefix) {
			return invalidf("the PMML element's namespace %q is not a PMML namespace (%s4_4, for example)", ns, namespacePrefix)
		}
		nsVersion := strings.ReplaceAll(strings.TrimPrefix(ns, namespacePrefix), "_", ".")
		if !supported(nsVersion) {
			return invalidf("PMML version %s is not supported (versions 4.0 to 4.4 are)", nsVersion)
		}
		if version == "" {
			version = nsVersion
		}
	}
	if version == "" {
		return invalidf("the PMML element has no version")
	}
	if !supported(version) {
		return invalidf("PMML version %s is not supported (versions 4.0 to 4.4 are)", version)
	}
	return nil
}

// supported reports whether this reader scores PMML version v.
func supported(v string) bool {
	for _, s := range supportedVersions {
		if v == s {
			return true
		}
	}
	return false
}

// firstWord returns the first word of an XML directive, such as DOCTYPE.
func firstWord(d xml.Directive) string {
	f := strings.Fields(string(d))
	if len(f) == 0 {
		return "an empty directive"
	}
	w := f[0]
	if len(w) > 16 {
		w = w[:16]
	}
	return w
}

// xmlMessage is an encoding/xml error as a client can read it.
func xmlMessage(err error) string {
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		return se.Msg + " on line " + strconv.Itoa(se.Line)
	}
	return strings.TrimPrefix(err.Error(), "xml: ")
}

// charsetError names an encoding the reader does not read.
type charsetError string

func (e charsetError) Error() string { return "pmml: encoding " + string(e) + " is not supported" }

// charsetReader accepts the names of UTF-8 and its ASCII subset, which
// encoding/xml reads as they are, and refuses every other encoding.
func charsetReader(label string, r io.Reader) (io.Reader, error) {
	switch strings.ToLower(label) {
	case "utf-8", "utf8", "us-ascii", "ascii":
		return r, nil
	}
	return nil, charsetError(label)
}
