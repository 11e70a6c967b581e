package accept

import "testing"

func TestNames(t *testing.T) {
	for _, tt := range []struct {
		lines []string
		want  bool
	}{
		{nil, false},
		{[]string{"*/*"}, false},
		{[]string{"text/*"}, false},
		{[]string{"text/html"}, true},
		{[]string{"application/xhtml+xml;q=0.9"}, true},
		{[]string{"application/json, text/html;q=0.5"}, true},
		{[]string{"text/html;q=0"}, false},
		{[]string{"text/html;q=zero"}, false},
		{[]string{"application/json", "text/html"}, true},
		{[]string{"text/html;;"}, false},
	} {
		if got := Names(tt.lines, "text/html", "application/xhtml+xml"); got != tt.want {
			t.Errorf("Names(%q) = %v, want %v", tt.lines, got, tt.want)
		}
	}
}
