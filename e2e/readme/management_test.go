// Package readme runs what the repository's README shows against the
// reference server: its commands, as written there, and the answers it
// shows after them.
package readme

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/e2e/internal/harness"
)

// readmePath is the README, from this package's directory.
const readmePath = "../../README.md"

// readmeBase is the address the README's commands use.
const readmeBase = "http://127.0.0.1:8080"

// readmeStep is one command of the README's management walk-through: a curl
// command, the variable its output's field goes to, if any
// (TOKEN=$(curl … | jq -r .idToken)), and the JSON the README shows after
// it, if any.
type readmeStep struct {
	text   string
	assign string
	field  string
	words  []string // unexpanded: see shellWords
	want   string
}

// readmeSteps reads the commands of the README's section under heading
// ("## Management API"): every sh block, with the json block that follows
// it.
func readmeSteps(t *testing.T, heading string) []readmeStep {
	t.Helper()
	b, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("README.md has no %s section", heading)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var steps []readmeStep
	for _, m := range regexp.MustCompile("(?s)```(sh|json)\n(.*?)```").FindAllStringSubmatch(section, -1) {
		kind, text := m[1], strings.TrimSpace(m[2])
		if kind == "json" {
			if len(steps) == 0 || steps[len(steps)-1].want != "" {
				t.Fatalf("README: a json block follows no command:\n%s", text)
			}
			steps[len(steps)-1].want = text
			continue
		}
		line := strings.ReplaceAll(text, "\\\n", " ")
		if strings.Contains(line, "\n") {
			t.Fatalf("README: one command per sh block, please:\n%s", text)
		}
		s := readmeStep{text: text}
		if m := regexp.MustCompile(`^(\w+)=\$\((.*) \| jq -r \.(\w+)\)$`).FindStringSubmatch(line); m != nil {
			s.assign, line, s.field = m[1], m[2], m[3]
		}
		if s.words, err = shellWords(line); err != nil {
			t.Fatalf("README: %v in\n%s", err, text)
		}
		steps = append(steps, s)
	}
	return steps
}

// shellWords splits a command line as sh would, for the little the README
// uses: 'literal', "with $VAR", bare words with $VAR. Variables stay as
// \x00NAME\x00 marks for expand.
func shellWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	variable := regexp.MustCompile(`^\$(\w+|\{\w+\})`)
	variables := regexp.MustCompile(`\$(\w+|\{\w+\})`)
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
			i++
		case c == '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("unterminated ' at %d", i)
			}
			cur.WriteString(line[i+1 : i+1+end])
			i += end + 2
			inWord = true
		case c == '"':
			end := strings.IndexByte(line[i+1:], '"')
			if end < 0 {
				return nil, fmt.Errorf("unterminated \" at %d", i)
			}
			inner := line[i+1 : i+1+end]
			if strings.ContainsAny(inner, "\\`") || strings.Contains(inner, "$(") {
				return nil, fmt.Errorf("escapes and substitutions inside \"…\" are not understood: %s", inner)
			}
			cur.WriteString(variables.ReplaceAllStringFunc(inner, mark))
			for rest := inner; ; {
				j := strings.IndexByte(rest, '$')
				if j < 0 {
					break
				}
				if m := variable.FindString(rest[j:]); m == "" {
					return nil, fmt.Errorf("a $ that is not a variable: %s", inner)
				}
				rest = rest[j+1:]
			}
			i += end + 2
			inWord = true
		case c == '$':
			m := variable.FindString(line[i:])
			if m == "" {
				return nil, fmt.Errorf("a $ that is not a variable at %d", i)
			}
			cur.WriteString(mark(m))
			i += len(m)
			inWord = true
		case strings.IndexByte("|&;<>()`\\*?[]{}~#", c) >= 0:
			return nil, fmt.Errorf("shell syntax %q is not understood", c)
		default:
			cur.WriteByte(c)
			i++
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

func mark(v string) string { return "\x00" + strings.Trim(v, "${}") + "\x00" }

// expand replaces the variable marks in w by their values.
func expand(w string, vars map[string]string) (string, error) {
	parts := strings.Split(w, "\x00")
	for i := 1; i < len(parts); i += 2 {
		v, ok := vars[parts[i]]
		if !ok {
			return "", fmt.Errorf("variable $%s is not set", parts[i])
		}
		parts[i] = v
	}
	return strings.Join(parts, ""), nil
}

// curl runs the curl command words against the server s, as curl -s
// would, and returns the status and the body.
func curl(t *testing.T, s *harness.Server, words []string, vars map[string]string) (int, []byte) {
	t.Helper()
	if len(words) == 0 || words[0] != "curl" {
		t.Fatalf("not a curl command: %q", words)
	}
	var method, url, body string
	header := http.Header{}
	var user, password string
	for i := 1; i < len(words); i++ {
		w, err := expand(words[i], vars)
		if err != nil {
			t.Fatal(err)
		}
		arg := func() string {
			i++
			if i == len(words) {
				t.Fatalf("%s needs an argument", w)
			}
			v, err := expand(words[i], vars)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		switch w {
		case "-s":
		case "-X":
			method = arg()
		case "-H":
			k, v, ok := strings.Cut(arg(), ":")
			if !ok {
				t.Fatalf("header without a colon in %q", words)
			}
			header.Add(k, strings.TrimSpace(v))
		case "-d":
			body = arg()
		case "-u":
			user, password, _ = strings.Cut(arg(), ":")
		default:
			if strings.HasPrefix(w, "-") || url != "" {
				t.Fatalf("curl argument %q is not understood", w)
			}
			url = w
		}
	}
	if !strings.HasPrefix(url, readmeBase+"/") {
		t.Fatalf("URL %q does not start with %s", url, readmeBase)
	}
	url = s.Base + strings.TrimPrefix(url, readmeBase)
	if method == "" {
		method = http.MethodGet
		if body != "" {
			method = http.MethodPost
		}
	}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
		if header.Get("Content-Type") == "" {
			header.Set("Content-Type", "application/x-www-form-urlencoded") // what curl -d sends
		}
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	res, err := s.Client(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, out
}

// volatile are the members whose values differ from run to run.
var volatile = map[string]bool{"createdAt": true, "updatedAt": true, "lastUsedAt": true, "id": true}

func withoutVolatile(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k := range v {
			if volatile[k] {
				delete(v, k)
				continue
			}
			v[k] = withoutVolatile(v[k])
		}
	case []any:
		for i := range v {
			v[i] = withoutVolatile(v[i])
		}
	}
	return v
}

// TestReadmeManagementWalkthrough runs the README's management commands,
// as written there, against a fresh server, and compares what each answers
// with what the README shows (times aside).
func TestReadmeManagementWalkthrough(t *testing.T) {
	t.Parallel()
	srv := harness.Start(t, harness.Options{})
	steps := readmeSteps(t, "## Management API")
	if len(steps) < 6 {
		t.Fatalf("the README's management section has %d commands, want the token, the group, the deployment, scoring, disabling and scoring again", len(steps))
	}
	if !strings.Contains(steps[len(steps)-1].want, `"endpoint_disabled"`) {
		t.Errorf("the walk-through does not end by showing the disabled endpoint's 404 type")
	}
	runSteps(t, srv, steps)
}

// TestReadmeProtectedEndpointsWalkthrough runs the README's commands that
// make a user, a protected group and an API token, and call the group's
// endpoint without credentials, with Basic and with the API token.
func TestReadmeProtectedEndpointsWalkthrough(t *testing.T) {
	t.Parallel()
	srv := harness.Start(t, harness.Options{})
	steps := readmeSteps(t, "## Protected endpoints")
	if len(steps) < 8 {
		t.Fatalf("the README's protected endpoints section has %d commands, want at least 8", len(steps))
	}
	runSteps(t, srv, steps)
}

// runSteps runs steps against srv and compares each answer with what the
// README shows.
func runSteps(t *testing.T, srv *harness.Server, steps []readmeStep) {
	t.Helper()
	vars := map[string]string{"SCOREHUB_ADMIN_PASSWORD": harness.AdminPassword}
	for i, s := range steps {
		status, body := curl(t, srv, s.words, vars)
		if s.assign != "" {
			var out map[string]any
			if err := json.Unmarshal(body, &out); err != nil {
				t.Fatalf("step %d (%s): answer %d %s is not JSON", i, s.text, status, body)
			}
			v, ok := out[s.field].(string)
			if !ok || v == "" {
				t.Fatalf("step %d (%s): no %s in %s", i, s.text, s.field, body)
			}
			vars[s.assign] = v
			continue
		}
		if s.want == "" {
			t.Errorf("step %d (%s) shows no answer", i, s.text)
			continue
		}
		var got, want any
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("step %d (%s): answer %d %s is not JSON", i, s.text, status, body)
		}
		if err := json.Unmarshal([]byte(strings.ReplaceAll(s.want, readmeBase, srv.Base)), &want); err != nil {
			t.Fatalf("step %d: the README's answer is not JSON: %v", i, err)
		}
		if d := cmp.Diff(withoutVolatile(want), withoutVolatile(got)); d != "" {
			t.Errorf("step %d (%s) answered %d (-README +server):\n%s", i, s.text, status, d)
		}
	}
}

func TestShellWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		line string
		want []string
		err  bool
	}{
		{`curl -s -u admin:"$P" http://x`, []string{"curl", "-s", "-u", "admin:\x00P\x00", "http://x"}, false},
		{`-H "Authorization: Bearer ${TOKEN}" -d '{"a":"$b"}'`, []string{"-H", "Authorization: Bearer \x00TOKEN\x00", "-d", `{"a":"$b"}`}, false},
		{`curl x | jq .a`, nil, true},
		{`curl "$(id)"`, nil, true},
		{`curl 'open`, nil, true},
		{`curl "a $ b"`, nil, true},
	}
	for _, tt := range tests {
		got, err := shellWords(tt.line)
		if (err != nil) != tt.err {
			t.Errorf("shellWords(%q) error %v, want error %v", tt.line, err, tt.err)
			continue
		}
		if d := cmp.Diff(tt.want, got); d != "" && !tt.err {
			t.Errorf("shellWords(%q) (-want +got):\n%s", tt.line, d)
		}
	}
}
