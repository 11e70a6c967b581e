package pgstore_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/pgstore"
	"github.com/scorehub/scorehub/internal/pgtest"
)

// TestPasswordNotInErrors opens databases that cannot be used, with a
// password in the connection string, and checks that no error repeats
// it.
func TestPasswordNotInErrors(t *testing.T) {
	const secret = "pw-Zq7-secret"
	url := pgtest.DB(t)
	_, rest, _ := strings.Cut(url, "@")
	hostPort, _, _ := strings.Cut(rest, "/")
	closed := closedPort(t)
	tests := []struct {
		name, url string
	}{
		{"wrong password", fmt.Sprintf("postgres://%s:%s@%s/%s?sslmode=disable", pgtest.Role, secret, hostPort, pgtest.DBName(url))},
		{"nothing listening", fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/x?sslmode=disable&connect_timeout=2", pgtest.Role, secret, closed)},
		{"a URL that does not parse", fmt.Sprintf("postgres://%s:%s@127.0.0.1:port/x", pgtest.Role, secret)},
		{"an unknown parameter", fmt.Sprintf("postgres://%s:%s@127.0.0.1:1/x?sslmode=sometimes", pgtest.Role, secret)},
		{"keyword/value pairs", fmt.Sprintf("host=127.0.0.1 port=%d user=%s password=%s dbname=x sslmode=disable connect_timeout=2", closed, pgtest.Role, secret)},
		{"a quoted keyword/value password", fmt.Sprintf("host=127.0.0.1 port=%d user=%s password='%s' dbname=x sslmode=maybe", closed, pgtest.Role, secret)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			db, err := pgstore.Open(ctx, pgstore.Config{URL: tt.url})
			if err == nil {
				db.Close()
				t.Fatal("Open succeeded")
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the error holds the password: %v", err)
			}
			if !strings.HasPrefix(err.Error(), "postgres: ") {
				t.Errorf("the error does not say where it comes from: %v", err)
			}
		})
	}
}

// TestPasswordNotInOutageErrors checks the errors of calls while the
// server is down.
func TestPasswordNotInOutageErrors(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.New(t)
	db := open(t, pgstore.Config{URL: srv.NewDB(t)})
	srv.Stop(t)
	_, err := db.Load(ctx)
	if err == nil {
		t.Fatal("Load succeeded with the server stopped")
	}
	if strings.Contains(err.Error(), srv.Password()) {
		t.Errorf("the error holds the password: %v", err)
	}
	srv.Start(t)
	if _, err := db.Load(ctx); err != nil {
		t.Errorf("Load after the server is back: %v", err)
	}
}

// closedPort returns a port of 127.0.0.1 nothing listens on.
func closedPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
