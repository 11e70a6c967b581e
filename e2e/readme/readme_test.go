// Package readme runs what the repository's README and the pages of its
// docs directory show against the reference server: their commands, as
// written there, and the answers they show after them.
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
	"unicode"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/e2e/internal/harness"
	"github.com/scorehub/scorehub/internal/testutil"
)

// readmePath is the README, from this package's directory.
const readmePath = "../../README.md"

// docsGlob names the pages of the docs directory, from this package's
// directory: their commands run as the README's do.
const docsGlob = "../../docs/*.md"

// readmeBase is the address the README's commands use.
const readmeBase = "http://127.0.0.1:8080"

// readmeRoot is the directory the README's commands run in, the
// repository's root, from this package's directory: the files they send
// (curl -F name=@path, --data-binary @path) are named from there.
const readmeRoot = "../.."

// readmeStep is one command of the README: a curl command, the variable
// its output's field goes to, if any (TOKEN=$(curl … | jq -r .idToken),
// with or without export),
// and the JSON the README shows after it, if any (for an assignment, the
// whole answer before jq takes the field).
type readmeStep struct {
	text   string
	assign string
	field  string
	words  []string // unexpanded: see shellWords
	want   string
}

// readmeSection is a "## " section of the README or of a page in docs and
// the commands it runs. Its heading names the file too: "README.md ## Quick
// start", "docs/security.md ## Tokens".
type readmeSection struct {
	heading string
	steps   []readmeStep
}

// docFiles are the README and the pages of docs, as paths from the
// repository's root, and their paths from this package's directory.
func docFiles(t *testing.T) (names, paths []string) {
	t.Helper()
	pages, err := filepath.Glob(docsGlob)
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatalf("no pages match %s", docsGlob)
	}
	names, paths = []string{"README.md"}, []string{readmePath}
	for _, p := range pages {
		rel, err := filepath.Rel(readmeRoot, p)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, filepath.ToSlash(rel))
		paths = append(paths, p)
	}
	return names, paths
}

// notRun is the marker that, on the line before an sh block, leaves the
// block out of the run, saying why: <!-- not run: why -->.
const notRun = "<!-- not run: "

// readmeSections reads the "## " sections of the README and of the pages
// in docs that have commands to run, each with its commands in order: every
// sh block not marked notRun, with the json block that follows it, if any.
func readmeSections(t *testing.T) []readmeSection {
	t.Helper()
	var sections []readmeSection
	names, paths := docFiles(t)
	for i, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		sections = append(sections, fileSections(t, names[i], string(b))...)
	}
	return sections
}

// fileSections reads the sections of one file, named name, with commands
// to run.
func fileSections(t *testing.T, name, text string) []readmeSection {
	t.Helper()
	block := regexp.MustCompile("(?ms)^(" + regexp.QuoteMeta(notRun) + "[^\n]*-->\n)?```(\\w*)\n(.*?)^```$")
	var sections []readmeSection
	for _, part := range strings.Split(text, "\n## ")[1:] {
		heading, body, _ := strings.Cut(part, "\n")
		sec := readmeSection{heading: name + " ## " + heading}
		lastRun := false // whether the block before was a command that runs
		for _, m := range block.FindAllStringSubmatch(body, -1) {
			marked, kind, text := m[1] != "", m[2], strings.TrimSpace(m[3])
			if marked && kind != "sh" {
				t.Fatalf("%s: a not-run marker before a %q block, not an sh block:\n%s", sec.heading, kind, text)
			}
			if kind == "json" && lastRun {
				if sec.steps[len(sec.steps)-1].want != "" {
					t.Fatalf("%s: two json blocks after one command:\n%s", sec.heading, text)
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
		t.Fatalf("%s: one command per sh block, please:\n%s", heading, text)
	}
	s := readmeStep{text: text}
	if m := regexp.MustCompile(`^(?:export )?(\w+)=\$\((.*) \| jq -r \.(\w+)\)$`).FindStringSubmatch(line); m != nil {
		s.assign, line, s.field = m[1], m[2], m[3]
	}
	var err error
	if s.words, err = shellWords(line); err != nil {
		t.Fatalf("%s: %v in\n%s", heading, err, text)
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
	"id": true, "idToken": true, "expirationDate": true, "token": true, "at": true,
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
	"README.md ## Quick start":                1, // the demo endpoint
	"README.md ## Tokens":                     4, // an idToken, an API token, a route called with it, a call with no token
	"README.md ## Deploy your own model":      5, // the token, the upload, the deployment, scoring, a misspelt feature
	"docs/security.md ## Tokens":              2, // a token, a route called with it
	"docs/management.md ## Management API":    6, // the token, the group, the deployment, scoring, disabling and scoring again
	"docs/security.md ## Protected endpoints": 8,
	"docs/management.md ## Jobs":              7,  // the tokens, submitting, the job, its result, stopping it, the list
	"docs/models.md ## Deploy a model":        10, // the token, two uploads, the deployment, scoring, promoting, scoring, rolling back, the delete refused
}

// TestReadme runs every section of the README and of the pages in docs
// that has commands, each
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
		t.Run(strings.Replace(sec.heading, " ## ", ": ", 1), func(t *testing.T) {
			t.Parallel()
			if n := readmeMinSteps[sec.heading]; len(sec.steps) < n {
				t.Fatalf("the %s section has %d commands to run, want at least %d", sec.heading, len(sec.steps), n)
			}
			if sec.heading == "docs/management.md ## Management API" && !strings.Contains(sec.steps[len(sec.steps)-1].want, `"endpoint_disabled"`) {
				t.Errorf("the walk-through does not end by showing the disabled endpoint's 404 type")
			}
			runSteps(t, harness.Start(t, harness.Options{}), sec.steps)
		})
	}
	for heading := range readmeMinSteps {
		if !seen[heading] {
			t.Errorf("there is no %s section with commands to run", heading)
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
			t.Errorf("step %d (%s) answered %d (-shown +server):\n%s", i, s.text, status, d)
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

// TestReadmeTrainingScript: the script the README shows for training a
// model is examples/models/cancer.py, whose files the README's commands
// upload, so that what a reader runs is what wrote them.
func TestReadmeTrainingScript(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join(readmeRoot, "examples", "models", "cancer.py"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "\n## Deploy your own model\n")
	if !ok {
		t.Fatal("the README has no section ## Deploy your own model")
	}
	_, block, ok := strings.Cut(after, "```python\n")
	if !ok {
		t.Fatal("the README's ## Deploy your own model section has no python block")
	}
	block, _, _ = strings.Cut(block, "```\n")
	if d := cmp.Diff(string(script), block); d != "" {
		t.Errorf("the README's training script differs from examples/models/cancer.py (-file +README):\n%s", d)
	}
}

// TestDocLinks: every relative link of the README, BENCHMARKS.md and the
// pages in docs names a file that exists and, after #, a heading of it.
func TestDocLinks(t *testing.T) {
	t.Parallel()
	names, paths := docFiles(t)
	names, paths = append(names, "BENCHMARKS.md"), append(paths, filepath.Join(readmeRoot, "BENCHMARKS.md"))
	anchors := map[string]map[string]bool{} // file from the root → its headings' anchors
	anchorsOf := func(name string) (map[string]bool, error) {
		if a, ok := anchors[name]; ok {
			return a, nil
		}
		b, err := os.ReadFile(filepath.Join(readmeRoot, name))
		if err != nil {
			return nil, err
		}
		a := map[string]bool{}
		inCode := false
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "```") {
				inCode = !inCode
			}
			if h, ok := strings.CutPrefix(l, "#"); ok && !inCode {
				a[anchor(strings.TrimLeft(h, "#"))] = true
			}
		}
		anchors[name] = a
		return a, nil
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for i, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			name := names[i]
			if file != "" {
				name = filepath.ToSlash(filepath.Join(filepath.Dir(names[i]), file))
				if _, err := os.Stat(filepath.Join(readmeRoot, name)); err != nil {
					t.Errorf("%s links to %s, which does not exist", names[i], target)
					continue
				}
			}
			if frag == "" || !strings.HasSuffix(name, ".md") {
				continue
			}
			a, err := anchorsOf(name)
			if err != nil {
				t.Fatal(err)
			}
			if !a[frag] {
				t.Errorf("%s links to %s, but %s has no heading whose anchor is #%s", names[i], target, name, frag)
			}
		}
	}
}

// anchor is the fragment GitHub gives a heading: lower case, spaces as
// hyphens, punctuation other than hyphens and underscores left out.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
