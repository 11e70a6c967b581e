package pgtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/scorehub/scorehub/internal/testenv"
)

// Role is the role tests connect as: it owns the databases [DB] and
// [Server.NewDB] create and logs in with a password, over TCP on
// 127.0.0.1, like a deployment's role would.
const Role = "scorehub"

// superuser is the cluster's superuser, trusted from 127.0.0.1 without a
// password; only this package and tests that must act as an administrator
// (ending another session's backend) use it.
const superuser = "postgres"

// installHint is what a test that skips says to do.
const installHint = "apt-get install postgresql"

// startTimeout bounds how long a server may take to accept connections.
const startTimeout = 60 * time.Second

// Server is one PostgreSQL server a test started. Its methods are safe for
// concurrent use.
type Server struct {
	bin      string // directory of initdb and postgres
	dir      string // the temporary directory: data/, sockets, log
	port     int
	password string
	cred     *syscall.Credential // the user the server runs as, when not this process's

	mu      sync.Mutex // guards cmd, exited
	cmd     *exec.Cmd
	exited  chan struct{}
	removed bool

	dbs atomic.Int64 // numbers the databases NewDB creates
}

// New starts a server of the test's own, stopped and removed when the test
// ends. It skips the test (or fails it, see package internal/testenv) when
// the server binaries are not installed.
func New(t testing.TB) *Server {
	t.Helper()
	bin := binDir(t)
	s, err := start(bin)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		if err := s.remove(); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return s
}

// shared is the server [DB] creates databases on: one per test binary,
// started by the first test that needs it and stopped by [Main]. It is the
// one package-level variable here because that server outlives any single
// test.
var shared struct {
	once sync.Once
	srv  *Server
	err  error
}

// DB returns the connection string of a new, empty database owned by
// [Role], on the server the test binary shares, and drops the database
// when the test ends. It skips the test (or fails it, see package
// internal/testenv) when the server binaries are not installed.
func DB(t testing.TB) string {
	t.Helper()
	bin := binDir(t)
	shared.once.Do(func() { shared.srv, shared.err = start(bin) })
	if shared.err != nil {
		t.Fatalf("pgtest: the shared server: %v", shared.err)
	}
	return shared.srv.NewDB(t)
}

// Main runs the tests of m and then stops and removes the server [DB]
// started, if any; it returns m.Run's exit code. A package whose tests call
// DB runs it from TestMain. (Without it the server still ends with the
// test binary, which it watches, but leaves its directory behind.)
func Main(m *testing.M) int {
	code := m.Run()
	if shared.srv != nil {
		if err := shared.srv.remove(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// binDir returns the directory of the server binaries, or ends the test.
func binDir(t testing.TB) string {
	t.Helper()
	if dir, ok := findBin(); ok {
		return dir
	}
	testenv.SkipOrFail(t, "pgtest: the PostgreSQL server binaries (initdb, postgres) are not installed: %s", installHint)
	return ""
}

// findBin finds initdb and postgres: in Debian's versioned directories,
// the newest version first, else on PATH.
func findBin() (string, bool) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int {
		va, _ := strconv.Atoi(filepath.Base(filepath.Dir(a)))
		vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(b)))
		return vb - va
	})
	if p, err := exec.LookPath("initdb"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			return d, true
		}
	}
	return "", false
}

func isExec(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// start initialises a cluster in a new temporary directory and starts it.
func start(bin string) (*Server, error) {
	s := &Server{bin: bin, password: randomHex(16)}
	if os.Geteuid() == 0 {
		cred, err := postgresUser()
		if err != nil {
			return nil, err
		}
		s.cred = cred
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	s.dir = dir
	if err := s.init(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.launch(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.createRole(); err != nil {
		s.remove()
		return nil, err
	}
	return s, nil
}

// postgresUser is the user a root process runs the server as.
func postgresUser() (*syscall.Credential, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root, the server needs an unprivileged user to run as: %w (%s creates one)", err, installHint)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, err
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// init runs initdb and writes the authentication rules.
func (s *Server) init() error {
	if s.cred != nil {
		if err := os.Chown(s.dir, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return err
		}
	}
	data := filepath.Join(s.dir, "data")
	cmd := exec.Command(filepath.Join(s.bin, "initdb"), "-D", data, "-U", superuser,
		"--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Pdeathsig: syscall.SIGKILL}
	cmd.Dir = s.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %w\n%s", err, out)
	}
	// Trust only the superuser, only on loopback and the private socket
	// directory; everyone else logs in with a password.
	hba := "local all all trust\n" +
		"host all " + superuser + " 127.0.0.1/32 trust\n" +
		"host all all 127.0.0.1/32 scram-sha-256\n"
	path := filepath.Join(data, "pg_hba.conf")
	if err := os.WriteFile(path, []byte(hba), 0o600); err != nil {
		return err
	}
	if s.cred != nil {
		if err := os.Chown(path, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return err
		}
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	s.port = port
	return nil
}

// freePort returns a TCP port of 127.0.0.1 that nothing listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// launch starts the server process and waits until it accepts
// connections.
func (s *Server) launch() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("the server is already running")
	}
	logFile, err := os.OpenFile(s.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logFile.Close() // the child has its own descriptor
	cmd := exec.Command(filepath.Join(s.bin, "postgres"),
		"-D", filepath.Join(s.dir, "data"),
		"-p", strconv.Itoa(s.port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories="+s.dir,
		"-c", "max_connections=300",
		// Durability against a crash of the machine is not what tests
		// check; a crash of the server still loses nothing committed.
		"-c", "fsync=off",
		"-c", "full_page_writes=off",
	)
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// The server ends with the test binary even when the binary dies
	// without stopping it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Pdeathsig: syscall.SIGQUIT}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	s.cmd, s.exited = cmd, exited
	if err := s.waitReady(exited); err != nil {
		cmd.Process.Signal(syscall.SIGQUIT)
		<-exited
		s.cmd, s.exited = nil, nil
		return err
	}
	return nil
}

// waitReady polls until the server accepts a connection.
func (s *Server) waitReady(exited <-chan struct{}) error {
	deadline := time.Now().Add(startTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgx.Connect(ctx, s.AdminURL("postgres"))
		cancel()
		if err == nil {
			conn.Close(context.Background())
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("postgres exited while starting:\n%s", s.logTail())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres did not accept connections within %v: %v\n%s", startTimeout, err, s.logTail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *Server) logPath() string { return filepath.Join(s.dir, "postgres.log") }

// logTail returns the end of the server's log, for an error message.
func (s *Server) logTail() string {
	b, _ := os.ReadFile(s.logPath())
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(bytes.TrimSpace(b))
}

// createRole creates [Role] with the server's password.
func (s *Server) createRole() error {
	return s.admin("postgres", func(ctx context.Context, c *pgx.Conn) error {
		_, err := c.Exec(ctx, "CREATE ROLE "+Role+" LOGIN CREATEDB PASSWORD '"+s.password+"'")
		return err
	})
}

// admin runs fn on a superuser connection to database db.
func (s *Server) admin(db string, fn func(context.Context, *pgx.Conn) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.AdminURL(db))
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	return fn(ctx, conn)
}

// stop ends the server with a fast shutdown: sessions are ended, every
// committed transaction is kept.
func (s *Server) stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return nil
	}
	s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.exited:
	case <-time.After(startTimeout):
		s.cmd.Process.Kill()
		<-s.exited
		s.cmd, s.exited = nil, nil
		return fmt.Errorf("postgres did not stop within %v:\n%s", startTimeout, s.logTail())
	}
	s.cmd, s.exited = nil, nil
	return nil
}

// remove stops the server and removes its directory.
func (s *Server) remove() error {
	err := s.stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.removed {
		return err
	}
	s.removed = true
	return errors.Join(err, os.RemoveAll(s.dir))
}

// Port returns the TCP port the server listens on, on 127.0.0.1; it stays
// the same across [Server.Restart].
func (s *Server) Port() int { return s.port }

// Password returns [Role]'s password.
func (s *Server) Password() string { return s.password }

// URL returns the connection string of database db as [Role], password
// included.
func (s *Server) URL(db string) string {
	return fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/%s?sslmode=disable", Role, s.password, s.port, db)
}

// AdminURL returns the connection string of database db as the cluster's
// superuser, for what only an administrator may do, such as ending
// another role's sessions.
func (s *Server) AdminURL(db string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", superuser, s.port, db)
}

// NewDB creates an empty database owned by [Role] and returns its
// connection string ([Server.URL]); the database is dropped, its sessions
// ended, when the test ends, unless the server is stopped then.
func (s *Server) NewDB(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("t%d_%s", s.dbs.Add(1), randomHex(4))
	err := s.admin("postgres", func(ctx context.Context, c *pgx.Conn) error {
		_, err := c.Exec(ctx, "CREATE DATABASE "+name+" OWNER "+Role)
		return err
	})
	if err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		if !s.Running() {
			return
		}
		err := s.admin("postgres", func(ctx context.Context, c *pgx.Conn) error {
			_, err := c.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)")
			return err
		})
		if err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	return s.URL(name)
}

// DBName returns the database a connection string of this package names.
func DBName(url string) string {
	rest := url[strings.LastIndex(url, "/")+1:]
	name, _, _ := strings.Cut(rest, "?")
	return name
}

// Running reports whether the server process runs.
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd != nil
}

// Stop shuts the server down (a fast shutdown: open sessions end, nothing
// committed is lost) and waits until it has exited.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	if err := s.stop(); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
}

// Start starts the stopped server again, on the same port and data, and
// waits until it accepts connections.
func (s *Server) Start(t testing.TB) {
	t.Helper()
	if err := s.launch(); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
}

// Restart stops the server and starts it again.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop(t)
	s.Start(t)
}

// Exec runs sql as the superuser on database db, for what a test does as
// an administrator (pg_terminate_backend of another role's session).
func (s *Server) Exec(t testing.TB, db, sql string, args ...any) {
	t.Helper()
	err := s.admin(db, func(ctx context.Context, c *pgx.Conn) error {
		_, err := c.Exec(ctx, sql, args...)
		return err
	})
	if err != nil {
		t.Fatalf("pgtest: %s: %v", sql, err)
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
