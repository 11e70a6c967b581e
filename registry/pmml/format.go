package pmml

import (
	"bytes"

	"github.com/scorehub/scorehub/registry/process"
)

// Format reads PMML files. Its zero value is ready to use with the default
// limits. A Format is safe for concurrent use, and so is every model it
// loads.
type Format struct {
	Limits Limits
}

var _ process.ModelFormat = Format{}

// Name returns "pmml".
func (Format) Name() string { return "pmml" }

// detectWindow is how far into a file Detect looks for the root element.
const detectWindow = 64 << 10

// Detect reports whether artifact looks like a PMML file: XML whose root
// element is PMML, after an optional byte order mark, XML declaration,
// comments and white space (or a DOCTYPE naming PMML, which Load then
// refuses).
func (Format) Detect(artifact []byte) bool {
	b := artifact[:min(len(artifact), detectWindow)]
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	for {
		b = bytes.TrimLeft(b, " \t\r\n")
		switch {
		case bytes.HasPrefix(b, []byte("<?")):
			end := bytes.Index(b, []byte("?>"))
			if end < 0 {
				return false
			}
			b = b[end+2:]
		case bytes.HasPrefix(b, []byte("<!DOCTYPE")):
			// Load refuses a DOCTYPE; claiming the file lets it say so.
			f := bytes.Fields(b[min(len(b), len("<!DOCTYPE")):min(len(b), 64)])
			return len(f) > 0 && bytes.Equal(bytes.TrimRight(f[0], "[>"), []byte("PMML"))
		case bytes.HasPrefix(b, []byte("<!--")):
			end := bytes.Index(b[4:], []byte("-->"))
			if end < 0 {
				return false
			}
			b = b[4+end+3:]
		case bytes.HasPrefix(b, []byte("<")):
			name := b[1:]
			if i := bytes.IndexAny(name, " \t\r\n/>"); i >= 0 {
				name = name[:i]
			} else {
				return false
			}
			if i := bytes.IndexByte(name, ':'); i >= 0 {
				name = name[i+1:]
			}
			return string(name) == "PMML"
		default:
			return false
		}
	}
}

// Load reads a PMML 4.0 to 4.4 file and returns its model ready to score.
// meta may rename the label; the inputs, classes and outputs are the
// file's own. Anything the reader does not support is refused with an
// error naming it.
func (f Format) Load(artifact []byte, meta process.ModelMetadata) (*process.LoadedModel, error) {
	lim := f.Limits.withDefaults()
	doc, err := decode(artifact, lim)
	if err != nil {
		return nil, err
	}
	return load(doc, meta, lim)
}
