package pgtest_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/scorehub/scorehub/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func TestDBIsFreshAndOwnedByTheRole(t *testing.T) {
	ctx := context.Background()
	a, b := pgtest.DB(t), pgtest.DB(t)
	if pgtest.DBName(a) == pgtest.DBName(b) {
		t.Fatalf("two databases share the name %s", pgtest.DBName(a))
	}
	ca := connect(t, a)
	if _, err := ca.Exec(ctx, "CREATE TABLE x (v int); INSERT INTO x VALUES (1)"); err != nil {
		t.Fatalf("the role cannot write its database: %v", err)
	}
	cb := connect(t, b)
	var n int
	if err := cb.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE tablename = 'x'").Scan(&n); err != nil || n != 0 {
		t.Errorf("the second database sees the first's table: %d, %v", n, err)
	}
	var who string
	if err := ca.QueryRow(ctx, "SELECT current_user").Scan(&who); err != nil || who != pgtest.Role {
		t.Errorf("connected as %q (%v), want %q", who, err, pgtest.Role)
	}
}

func TestTheRoleNeedsItsPassword(t *testing.T) {
	url := pgtest.DB(t)
	wrong := strings.Replace(url, ":"+passwordOf(url)+"@", ":wrong@", 1)
	if wrong == url {
		t.Fatalf("no password in %s", url)
	}
	if c, err := pgx.Connect(context.Background(), wrong); err == nil {
		c.Close(context.Background())
		t.Fatal("a wrong password was accepted")
	}
}

func passwordOf(url string) string {
	rest := strings.TrimPrefix(url, "postgres://"+pgtest.Role+":")
	pw, _, _ := strings.Cut(rest, "@")
	return pw
}

func TestRestartKeepsPortAndData(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.New(t)
	url := srv.NewDB(t)
	c := connect(t, url)
	if _, err := c.Exec(ctx, "CREATE TABLE kept (v int); INSERT INTO kept VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	port := srv.Port()
	srv.Stop(t)
	if srv.Running() {
		t.Fatal("Running after Stop")
	}
	if c2, err := pgx.Connect(ctx, url); err == nil {
		c2.Close(ctx)
		t.Fatal("a stopped server accepted a connection")
	}
	srv.Start(t)
	srv.Restart(t)
	if srv.Port() != port {
		t.Errorf("port %d after restarts, was %d", srv.Port(), port)
	}
	var v int
	if err := connect(t, url).QueryRow(ctx, "SELECT v FROM kept").Scan(&v); err != nil || v != 42 {
		t.Errorf("after restarts the table holds %d (%v), want 42", v, err)
	}
}
