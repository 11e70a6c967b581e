package httperr

import (
	"go/ast"
	"go/parser"
	"go/token"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/problem"
)

// problemCodes returns every constant of type Code that package problem
// declares, read from its source, so that a code added there is checked
// here without a list to keep.
func problemCodes(t *testing.T) map[string]problem.Code {
	t.Helper()
	const dir = "../../problem"
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	codes := map[string]problem.Code{}
	for _, entry := range entries {
		name := entry.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				v := s.(*ast.ValueSpec)
				if id, ok := v.Type.(*ast.Ident); !ok || id.Name != "Code" {
					t.Fatalf("%s: a constant of package problem without the type Code", fset.Position(v.Pos()))
				}
				for i, name := range v.Names {
					lit, ok := v.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Fatalf("%s: code %s is not a string literal", fset.Position(v.Pos()), name.Name)
					}
					s, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					codes[name.Name] = problem.Code(s)
				}
			}
		}
	}
	if len(codes) < 40 {
		t.Fatalf("found %d codes in package problem; the parse missed some", len(codes))
	}
	return codes
}

// Every code has its status in the table: a code added to package problem
// without one fails here, not as a 500 a client gets.
func TestEveryCodeHasAStatus(t *testing.T) {
	seen := map[problem.Code]string{}
	for name, code := range problemCodes(t) {
		if other, ok := seen[code]; ok {
			t.Errorf("problem.%s and problem.%s are both %q", name, other, code)
		}
		seen[code] = name
		if _, known := lookup(code); !known {
			t.Errorf("problem.%s (%q) has no status in the table", name, code)
		}
	}
}

// An error of a code the table does not know, and that sets no status of
// its own, is answered 500, and the log says so at error level even when
// it is set to show nothing less.
func TestWriteLogsAnUnknownCodeLoudly(t *testing.T) {
	var buf strings.Builder
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelError}))
	rec := httptest.NewRecorder()
	Write(rec, httptest.NewRequest(http.MethodGet, "/x", nil), logger, &problem.Error{Code: "not_fuond", Message: "no such thing"})
	if rec.Code != http.StatusInternalServerError {
		t.Errorf("answered %d, want 500", rec.Code)
	}
	if !strings.Contains(buf.String(), "level=ERROR") || !strings.Contains(buf.String(), "not in the status table") ||
		!strings.Contains(buf.String(), "type=not_fuond") {
		t.Errorf("logged %q, want an error naming the code", buf.String())
	}

	// A host's own code with its own status is not a fault.
	buf.Reset()
	rec = httptest.NewRecorder()
	Write(rec, httptest.NewRequest(http.MethodGet, "/x", nil), logger, &problem.Error{Code: "teapot", Status: http.StatusTeapot})
	if rec.Code != http.StatusTeapot || buf.Len() != 0 {
		t.Errorf("a code with its own status: answered %d, logged %q", rec.Code, buf.String())
	}
}
