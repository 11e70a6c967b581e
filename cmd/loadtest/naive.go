package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"time"

	"github.com/scorehub/scorehub/internal/demo"
	"github.com/scorehub/scorehub/registry/process"
)

// naiveHandler scores iris requests the way a Go developer first writes
// such a service, as the ceiling scoring's large requests are compared
// with: encoding/json decodes the body into []map[string]any, the
// measurements go into a table for the same demo model the standalone
// server serves, and encoding/json writes the rows back with the result
// columns added. It answers any POST path.
func naiveHandler(iris process.ProcessInfo) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		var req struct {
			Data []map[string]any `json:"data"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		n := len(req.Data)
		cols := make([]process.Column, len(iris.Input))
		for c, spec := range iris.Input {
			nums := make([]float64, n)
			for i, row := range req.Data {
				v, ok := row[spec.Name].(float64)
				if !ok {
					http.Error(w, fmt.Sprintf("row %d: %s must be a number", i, spec.Name), http.StatusBadRequest)
					return
				}
				nums[i] = v
			}
			cols[c] = process.NumberColumn(spec.Name, nums, nil)
		}
		in, err := process.NewTable(n, cols...)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		out, err := iris.Process.Score(r.Context(), process.Input{Table: in})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		for c := range out.NumColumns() {
			col := out.Column(c)
			for i, row := range req.Data {
				if v, ok := col.Number(i); ok {
					row[col.Name] = v
				} else if s, ok := col.Text(i); ok {
					row[col.Name] = s
				} else {
					row[col.Name] = nil
				}
			}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"data": req.Data})
	})
}

// serveNaiveProcess is the naive server's main: it serves until ctx ends.
func serveNaiveProcess(ctx context.Context, stdout io.Writer) error {
	iris, err := demo.Iris()
	if err != nil {
		return fmt.Errorf("loadtest: naive process: %w", err)
	}
	srv, err := startBare(naiveHandler(iris))
	if err != nil {
		return fmt.Errorf("loadtest: naive process: %w", err)
	}
	if _, err := fmt.Fprintf(stdout, "%s%s\n", bareListening, srv.base); err != nil {
		srv.Close()
		return err
	}
	<-ctx.Done()
	return srv.Close()
}

// startNaiveProcess starts this program again as the naive server and
// waits, at most timeout, until it listens.
func startNaiveProcess(ctx context.Context, timeout time.Duration) (*serverProc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("loadtest: naive process: %w", err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), bareProcessEnv+"="+naiveProcess)
	return startProcess(ctx, cmd, bareListening, timeout)
}
