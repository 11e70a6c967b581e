// Package accept reads the Accept header of a request the way scorehub's
// handlers that answer in more than one form do: a media type counts only
// when named outright with a quality above zero, never through a wildcard,
// since curl sends */* and wants the default form.
package accept

import (
	"mime"
	"slices"
	"strconv"
	"strings"
)

// Names reports whether the Accept header lines name one of types with a
// quality above zero.
func Names(lines []string, types ...string) bool {
	for _, line := range lines {
		for part := range strings.SplitSeq(line, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil || !slices.Contains(types, mt) {
				continue
			}
			if q, ok := params["q"]; ok {
				if f, err := strconv.ParseFloat(q, 64); err != nil || f <= 0 {
					continue
				}
			}
			return true
		}
	}
	return false
}
