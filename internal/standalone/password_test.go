package standalone

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAdminPasswordFile: the admin password can be given in a file named by
// SCOREHUB_ADMIN_PASSWORD_FILE, so that it need not sit in the process's
// environment (/proc/<pid>/environ). The file's trailing line break is not
// part of the password; an empty file, a missing one, or the file and the
// variable both set stop the server instead of falling back to another
// password.
func TestAdminPasswordFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	withNewline := write("newline", "from the file\n")
	withCRLF := write("crlf", "from the file\r\n")
	bare := write("bare", "from the file")
	empty := write("empty", "")
	onlyNewline := write("only-newline", "\n")

	tests := []struct {
		name    string
		env     map[string]string
		wantErr string // "" means the admin logs in with "from the file"
	}{
		{"file with a trailing newline", map[string]string{"SCOREHUB_ADMIN_PASSWORD_FILE": withNewline}, ""},
		{"file with a trailing CRLF", map[string]string{"SCOREHUB_ADMIN_PASSWORD_FILE": withCRLF}, ""},
		{"file without a newline", map[string]string{"SCOREHUB_ADMIN_PASSWORD_FILE": bare}, ""},
		{"empty file", map[string]string{"SCOREHUB_ADMIN_PASSWORD_FILE": empty}, "is empty"},
		{"file of a newline", map[string]string{"SCOREHUB_ADMIN_PASSWORD_FILE": onlyNewline}, "is empty"},
		{"missing file", map[string]string{"SCOREHUB_ADMIN_PASSWORD_FILE": filepath.Join(dir, "absent")}, "SCOREHUB_ADMIN_PASSWORD_FILE"},
		{"file and variable", map[string]string{"SCOREHUB_ADMIN_PASSWORD_FILE": bare, "SCOREHUB_ADMIN_PASSWORD": "from the file"}, "not both"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config{DataDir: t.TempDir()}
			sc, err := cfg.service(func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("service: %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if sc.AdminPassword != "from the file" {
				t.Errorf("the admin's password is %q, want the file's without its line break", sc.AdminPassword)
			}
		})
	}
}
