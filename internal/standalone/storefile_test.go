package standalone

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/internal/pgtest"
	"github.com/scorehub/scorehub/internal/testutil"
)

// TestStoreFile: the connection string, password included, can be given
// in a file (-store-file, SCOREHUB_STORE_FILE), so that it is on no command
// line; -store on the command line with a password in it is flagged for a
// warning, while one from the environment or without a password is not.
func TestStoreFile(t *testing.T) {
	const secretURL = "postgres://scorehub:s3cret-pw@127.0.0.1:5432/scorehub"
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	file, crlf, empty := write("store", secretURL+"\n"), write("crlf", secretURL+"\r\n"), write("empty", "\n")
	tests := []struct {
		name       string
		args       []string
		env        map[string]string
		wantErr    string // "" means cfg.Store is secretURL or the -store given
		wantWarned bool
	}{
		{"-store-file", []string{"-store-file", file}, nil, "", false},
		{"SCOREHUB_STORE_FILE", nil, map[string]string{"SCOREHUB_STORE_FILE": crlf}, "", false},
		{"SCOREHUB_STORE", nil, map[string]string{"SCOREHUB_STORE": secretURL}, "", false},
		{"-store with a password", []string{"-store", secretURL}, nil, "", true},
		{"-store with a password parameter", []string{"-store", "postgres://scorehub@127.0.0.1/scorehub?password=s3cret-pw"}, nil, "", true},
		{"-store without a password", []string{"-store", "postgres://scorehub@127.0.0.1/scorehub"}, nil, "", false},
		{"-store over SCOREHUB_STORE", []string{"-store", secretURL}, map[string]string{"SCOREHUB_STORE": "postgres://scorehub@db/scorehub"}, "", true},
		{"-store and -store-file", []string{"-store", "postgres://scorehub@db/scorehub", "-store-file", file}, nil, "not both", false},
		{"empty file", []string{"-store-file", empty}, nil, "is empty", false},
		{"missing file", []string{"-store-file", filepath.Join(dir, "absent")}, nil, "-store-file", false},
		{"a file of another kind", []string{"-store-file", write("mysql", "mysql://scorehub:s3cret-pw@db/x")}, nil, "postgres://", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			cfg, err := parseConfig(tt.args, func(k string) string { return tt.env[k] }, &stderr)
			if strings.Contains(fmt.Sprint(err)+stderr.String(), "s3cret-pw") {
				t.Errorf("the password is shown: %v %s", err, stderr.String())
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseConfig: %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(cfg.Store, "postgres://scorehub") || strings.ContainsAny(cfg.Store, "\r\n") {
				t.Errorf("the store is %q, want the connection string given", cfg.Store)
			}
			if cfg.StorePasswordInArgs != tt.wantWarned {
				t.Errorf("StorePasswordInArgs = %v, want %v", cfg.StorePasswordInArgs, tt.wantWarned)
			}
		})
	}
}

// TestStorePasswordFlagIsWarnedOf: a server started with the password in
// -store says at start, before it opens the store, that every local user
// can read it, without writing it.
func TestStorePasswordFlagIsWarnedOf(t *testing.T) {
	const password = "s3cret-pw"
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there: the store cannot be opened
	for _, tc := range []struct {
		name  string
		store []string
		warns bool
	}{
		{"in the flag", []string{"-store", "postgres://scorehub:" + password + "@" + addr + "/scorehub?sslmode=disable"}, true},
		{"not in the flag", []string{"-store", "postgres://scorehub@" + addr + "/scorehub?sslmode=disable"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			args := append([]string{"-addr", "127.0.0.1:0", "-data", t.TempDir(), "-gc-min-heap", "0"}, tc.store...)
			if err := run(context.Background(), args, smokeEnv, &out, &errOut, nil); err == nil {
				t.Fatal("run over no database succeeded")
			} else if strings.Contains(err.Error(), password) {
				t.Errorf("the error shows the password: %v", err)
			}
			if strings.Contains(out.String()+errOut.String(), password) {
				t.Errorf("the output shows the password:\n%s\n%s", out.String(), errOut.String())
			}
			if warned := strings.Contains(errOut.String(), "level=WARN") && strings.Contains(errOut.String(), "-store-file"); warned != tc.warns {
				t.Errorf("warned of the password in -store: %v, want %v; stderr:\n%s", warned, tc.warns, errOut.String())
			}
		})
	}
}

// TestStorePasswordOffTheCommandLine: a -store without a password gets it
// from PGPASSFILE or PGPASSWORD, as libpq's clients do, and -store-file
// holds the whole connection string: the server opens the database either
// way, and no password is on its command line.
func TestStorePasswordOffTheCommandLine(t *testing.T) {
	srv := pgtest.New(t)
	url := srv.NewDB(t)
	bare := strings.Replace(url, ":"+srv.Password()+"@", "@", 1)
	if bare == url {
		t.Fatalf("the connection string %q does not hold the password where expected", url)
	}
	dir := t.TempDir()
	passfile := filepath.Join(dir, "pgpass")
	line := fmt.Sprintf("127.0.0.1:%d:%s:%s:%s\n", srv.Port(), pgtest.DBName(url), pgtest.Role, srv.Password())
	storeFile := filepath.Join(dir, "store")
	for p, content := range map[string]string{passfile: line, storeFile: url + "\n"} {
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
	}{
		{"PGPASSFILE", []string{"-store", bare}, map[string]string{"PGPASSFILE": passfile}},
		{"PGPASSWORD", []string{"-store", bare}, map[string]string{"PGPASSWORD": srv.Password()}},
		{"-store-file", []string{"-store-file", storeFile}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The database's driver reads its variables from the process.
			t.Setenv("PGPASSFILE", filepath.Join(dir, "absent"))
			t.Setenv("PGPASSWORD", "")
			os.Unsetenv("PGPASSWORD")
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			for _, a := range tc.args {
				if strings.Contains(a, srv.Password()) {
					t.Fatalf("the command line holds the password: %q", tc.args)
				}
			}
			var logs testutil.LockedBuffer
			cfg, err := parseConfig(append([]string{"-data", t.TempDir()}, tc.args...), smokeEnv, &logs)
			if err != nil {
				t.Fatal(err)
			}
			s, err := newServer(context.Background(), cfg, smokeEnv, io.Discard, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})), &logs)
			if err != nil {
				t.Fatalf("open the database: %v", err)
			}
			defer s.Close()
			if w := serve(s, "GET", "/health/ready", "", "", nil); w.Code != 200 {
				t.Errorf("ready: %d %s", w.Code, w.Body)
			}
			if strings.Contains(logs.String(), srv.Password()) || strings.Contains(logs.String(), "-store-file") {
				t.Errorf("the logs show the password or warn of it:\n%s", logs.String())
			}
		})
	}
}
