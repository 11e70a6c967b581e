// Package readme runs what the repository's README shows against the
// reference server: its commands, as written there, and the answers it
// shows after them.
package readme

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/e2e/internal/harness"
	"github.com/scorehub/scorehub/internal/testutil"
)

// readmePath is the README, from this package's directory.
const readmePath = "../../README.md"

// readmeBase is the address the README's commands use.
const readmeBase = "http://127.0.0.1:8080"

// readmeRoot is the directory the README's commands run in, the
// repository's root, from this package's directory: the files they send
// (curl -F name=@path, --data-binary @path) are named from there.
const readmeRoot = "../.."

// readmeStep is one command of the README: a curl command, the variable
// its output's field goes to, if any (TOKEN=$(curl … | jq -r .idToken)),
// and the JSON the README shows after it, if any (for an assignment, the
// whole answer before jq takes the field).
type readmeStep struct {
	text   string
	assign string
	field  string
	words  []string // unexpanded: see shellWords
	want   string
}

// readmeSection is a "## " section of the README and the commands it runs.
type readmeSection struct {
	heading string
	steps   []readmeStep
}

// notRun is the marker that, on the line before an sh block, leaves the
// block out of the run, saying why: <!-- not run: why -->.
const notRun = "<!-- not run: "

// readmeSections reads the README's "## " sections that have commands to
// run, each with its commands in order: every sh block not marked notRun,
// with the json block that follows it, if any.
func readmeSections(t *testing.T) []readmeSection {
	t.Helper()
	b, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?ms)^(" + regexp.QuoteMeta(notRun) + "[^\n]*-->\n)?```(\\w*)\n(.*?)^```$")
	var sections []readmeSection
	for _, part := range strings.Split(string(b), "\n## ")[1:] {
		heading, body, _ := strings.Cut(part, "\n")
		sec := readmeSection{heading: "## " + heading}
		lastRun := false // whether the block before was a command that runs
		for _, m := range block.FindAllStringSubmatch(body, -1) {
			marked, kind, text := m[1] != "", m[2], strings.TrimSpace(m[3])
			if marked && kind != "sh" {
				t.Fatalf("README %s: a not-run marker before a %q block, not an sh block:\n%s", sec.heading, kind, text)
			}
			if kind == "json" && lastRun {
				if sec.steps[len(sec.steps)-1].want != "" {
					t.Fatalf("README %s: two json blocks after one command:\n%s", sec.heading, text)
				}
				sec.steps[len(sec.steps)-1].want = text
				continue
			}
			lastRun = kind == "sh" && !marked
			if !lastRun {
				continue
			}
			sec.steps = append(sec.steps, parseStep(t, sec.heading, text))
		}
		if len(sec.steps) > 0 {
			sections = append(sections, sec)
		}
	}
	return sections
}

// parseStep reads the command of one sh block.
func parseStep(t *testing.T, heading, text string) readmeStep {
	t.Helper()
	line := strings.ReplaceAll(text, "\\\n", " ")
	if strings.Contains(line, "\n") {
		t.Fatalf("README %s: one command per sh block, please:\n%s", heading, text)
	}
	s := readmeStep{text: text}
	if m := regexp.MustCompile(`^(\w+)=\$\((.*) \| jq -r \.(\w+)\)$`).FindStringSubmatch(line); m != nil {
		s.assign, line, s.field = m[1], m[2], m[3]
	}
	var err error
	if s.words, err = shellWords(line); err != nil {
		t.Fatalf("README %s: %v in\n%s", heading, err, text)
	}
	return s
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
	var form []string // the -F arguments, in order
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
		case "--data-binary":
			b, err := readArg(arg())
			if err != nil {
				t.Fatal(err)
			}
			body = string(b)
		case "-F":
			form = append(form, arg())
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
	if len(form) > 0 {
		if body != "" {
			t.Fatalf("both -F and a body in %q", words)
		}
		b, ct, err := multipartBody(form)
		if err != nil {
			t.Fatalf("%v in %q", err, words)
		}
		body = string(b)
		header.Set("Content-Type", ct)
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

// readArg is the data of curl's --data-binary argument a: the file's
// content for @path, else a itself.
func readArg(a string) ([]byte, error) {
	if path, ok := strings.CutPrefix(a, "@"); ok {
		return os.ReadFile(filepath.Join(readmeRoot, path))
	}
	return []byte(a), nil
}

// multipartBody is the multipart/form-data body curl sends for its -F
// arguments, name=value or name=@path, each with an optional ;type=…: a
// file part is named after its file, application/octet-stream unless a
// type is given; a value part has no type unless one is given. It returns
// the body and its Content-Type.
func multipartBody(form []string) ([]byte, string, error) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, f := range form {
		name, value, ok := strings.Cut(f, "=")
		if !ok {
			return nil, "", fmt.Errorf("-F %q has no =", f)
		}
		value, typ, _ := strings.Cut(value, ";type=")
		h := textproto.MIMEHeader{}
		data := []byte(value)
		if path, ok := strings.CutPrefix(value, "@"); ok {
			var err error
			if data, err = os.ReadFile(filepath.Join(readmeRoot, path)); err != nil {
				return nil, "", err
			}
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename=%q`, name, filepath.Base(path)))
			if typ == "" {
				typ = "application/octet-stream"
			}
		} else {
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q`, name))
		}
		if typ != "" {
			h.Set("Content-Type", typ)
		}
		pw, err := mw.CreatePart(h)
		if err != nil {
			return nil, "", err
		}
		pw.Write(data)
	}
	if err := mw.Close(); err != nil {
		return nil, "", err
	}
	return b.Bytes(), mw.FormDataContentType(), nil
}

// volatile are the members whose values differ from run to run.
var volatile = map[string]bool{
	"createdAt": true, "updatedAt": true, "lastUsedAt": true, "startedAt": true, "finishedAt": true,
	"id": true, "idToken": true, "expirationDate": true,
}

// withoutVolatile replaces the value of every volatile member of v with
// the same mark, so that an answer still needs the member to match.
func withoutVolatile(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k := range v {
			if volatile[k] {
				v[k] = "(varies)"
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

// readmeMinSteps are the sections that must have commands to run, with
// the fewest each must have, so that a block the parser stops reading
// cannot drop out of the run unnoticed.
var readmeMinSteps = map[string]int{
	"## Quick start":         1, // the demo endpoint
	"## Tokens":              2, // a token, a route called with it
	"## Management API":      6, // the token, the group, the deployment, scoring, disabling and scoring again
	"## Protected endpoints": 8,
	"## Jobs":                6,  // the token, submitting, the job, its result, stopping it, the list
	"## Deploy a model":      10, // the token, two uploads, the deployment, scoring, promoting, scoring, rolling back, the delete refused
}

// TestReadme runs every section of the README that has commands, each
// against a fresh server of its own, as written there, and compares what
// each command answers with what the README shows (times and ids aside).
//
// The rule: every ```sh block runs, in order, unless the line before it is
// an HTML comment <!-- not run: why --> (starting the server, the test and
// harness commands, a token that must first expire). A ```json block right
// after a block that runs is what that command answers; after
// VAR=$(curl … | jq -r .field) it is the whole answer before jq.
func TestReadme(t *testing.T) {
	t.Parallel()
	sections := readmeSections(t)
	seen := map[string]bool{}
	for _, sec := range sections {
		seen[sec.heading] = true
		t.Run(strings.TrimPrefix(sec.heading, "## "), func(t *testing.T) {
			t.Parallel()
			if n := readmeMinSteps[sec.heading]; len(sec.steps) < n {
				t.Fatalf("the README's %s section has %d commands to run, want at least %d", sec.heading, len(sec.steps), n)
			}
			if sec.heading == "## Management API" && !strings.Contains(sec.steps[len(sec.steps)-1].want, `"endpoint_disabled"`) {
				t.Errorf("the walk-through does not end by showing the disabled endpoint's 404 type")
			}
			runSteps(t, harness.Start(t, harness.Options{}), sec.steps)
		})
	}
	for heading := range readmeMinSteps {
		if !seen[heading] {
			t.Errorf("the README has no %s section with commands to run", heading)
		}
	}
}

// runSteps runs steps against srv and compares each answer with what the
// README shows. A GET whose answer differs is asked again for up to five
// seconds, as a reader waits a moment for a job to finish.
func runSteps(t *testing.T, srv *harness.Server, steps []readmeStep) {
	t.Helper()
	vars := map[string]string{"SCOREHUB_ADMIN_PASSWORD": harness.AdminPassword}
	for i, s := range steps {
		if s.assign == "" && s.want == "" {
			t.Errorf("step %d (%s) shows no answer", i, s.text)
			continue
		}
		var want any
		if s.want != "" {
			if err := json.Unmarshal([]byte(strings.ReplaceAll(s.want, readmeBase, srv.Base)), &want); err != nil {
				t.Fatalf("step %d: the README's answer is not JSON: %v", i, err)
			}
			want = withoutVolatile(want)
		}
		var status int
		var d string
		testutil.Poll(5*time.Second, func() bool {
			var body []byte
			status, body = curl(t, srv, s.words, vars)
			var got any
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatalf("step %d (%s): answer %d %s is not JSON", i, s.text, status, body)
			}
			if s.assign != "" {
				v, _ := got.(map[string]any)[s.field].(string)
				if v == "" {
					t.Fatalf("step %d (%s): no %s in %s", i, s.text, s.field, body)
				}
				vars[s.assign] = v
			}
			if s.want == "" {
				return true
			}
			d = cmp.Diff(want, withoutVolatile(got))
			// Only a GET is asked again: the other steps change the server.
			return d == "" || !isGet(s.words)
		})
		if d != "" {
			t.Errorf("step %d (%s) answered %d (-README +server):\n%s", i, s.text, status, d)
		}
	}
}

// isGet reports whether the curl command words send a GET: no -X, no
// body.
func isGet(words []string) bool {
	for _, w := range words {
		switch w {
		case "-X", "-d", "--data-binary", "-F":
			return false
		}
	}
	return true
}

// TestMultipartBody: -F sends a file part named after its file and a value
// part with the type given, in order, as curl does.
func TestMultipartBody(t *testing.T) {
	t.Parallel()
	body, ct, err := multipartBody([]string{"artifact=@go.mod", `metadata={"label":"species"};type=application/json`})
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(readmeRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	_, params, _ := strings.Cut(ct, "boundary=")
	if !strings.HasPrefix(ct, "multipart/form-data; ") || params == "" {
		t.Fatalf("Content-Type %q, want multipart/form-data with a boundary", ct)
	}
	type part struct{ Name, File, Type, Data string }
	var got []part
	mr := multipart.NewReader(bytes.NewReader(body), params)
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(p)
		got = append(got, part{p.FormName(), p.FileName(), p.Header.Get("Content-Type"), string(data)})
	}
	want := []part{
		{"artifact", "go.mod", "application/octet-stream", string(mod)},
		{"metadata", "", "application/json", `{"label":"species"}`},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("parts (-want +got):\n%s", d)
	}
	if _, _, err := multipartBody([]string{"artifact=@no/such/file"}); err == nil {
		t.Error("a missing file gave no error")
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
