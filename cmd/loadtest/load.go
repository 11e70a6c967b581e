package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// target is one endpoint under load and the request sent to it.
type target struct {
	url           string
	body          []byte
	authorization string // the Authorization header, if any
}

// bounds end a load run at whichever comes first.
type bounds struct {
	duration time.Duration // wall time; must be positive
	requests int64         // requests sent, failures included; 0 means no bound
	pause    time.Duration // how long a client waits after each answer
}

// result is what a load run measured.
type result struct {
	ok, errors int64
	elapsed    time.Duration
	latencies  []time.Duration // of the requests answered 200, in no order
	firstError string
	cpu        cpuUse // set by the caller, which knows whose time counts
}

// newClient returns a client for clients concurrent keep-alive connections
// to one loopback server. It ignores proxy settings from the environment:
// the harness measures the server, never a proxy.
func newClient(clients int, timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        clients,
			MaxIdleConnsPerHost: clients,
			MaxConnsPerHost:     clients,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true,
		},
	}
}

// drive sends t's request from clients goroutines, each waiting for its
// answer before it sends the next, until b or ctx ends the run. A request
// is an error when it fails, is not answered 200, or its answer cannot be
// read to the end; requests cut short because ctx ended are not counted.
func drive(ctx context.Context, c *http.Client, t target, clients int, b bounds) result {
	ctx, cancel := context.WithTimeout(ctx, b.duration)
	defer cancel()
	var (
		issued     atomic.Int64
		ok, failed atomic.Int64
		mu         sync.Mutex
		latencies  []time.Duration
		firstError string
		wg         sync.WaitGroup
	)
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			var errMsg string
			for ctx.Err() == nil {
				if b.requests > 0 && issued.Add(1) > b.requests {
					break
				}
				began := time.Now()
				err := send(ctx, c, t)
				took := time.Since(began)
				if b.pause > 0 {
					pause(ctx, b.pause)
				}
				switch {
				case err == nil:
					ok.Add(1)
					mine = append(mine, took)
				case ctx.Err() != nil:
					// The run ended during the request: neither a success
					// nor the server's fault.
				default:
					failed.Add(1)
					if errMsg == "" {
						errMsg = err.Error()
					}
				}
			}
			mu.Lock()
			latencies = append(latencies, mine...)
			if firstError == "" {
				firstError = errMsg
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	return result{
		ok: ok.Load(), errors: failed.Load(), elapsed: time.Since(start),
		latencies: latencies, firstError: firstError,
	}
}

// send posts t's body to t's URL and reads the answer to the end, so that
// the connection is reused.
func send(ctx context.Context, c *http.Client, t target) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, bytes.NewReader(t.body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if t.authorization != "" {
		req.Header.Set("Authorization", t.authorization)
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		io.Copy(io.Discard, resp.Body)
		return fmt.Errorf("status %d: %s", resp.StatusCode, bytes.TrimSpace(msg))
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return fmt.Errorf("read the answer: %w", err)
	}
	return nil
}

// probe sends t's request once and returns the answer's body, which must be
// a 200.
func probe(ctx context.Context, c *http.Client, t target) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, bytes.NewReader(t.body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if t.authorization != "" {
		req.Header.Set("Authorization", t.authorization)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("POST %s: status %d: %.300s", t.url, resp.StatusCode, body)
	}
	return body, nil
}

// errNoRequests reports a run in which nothing succeeded.
var errNoRequests = errors.New("loadtest: no request succeeded")

// pause waits d, or until ctx ends.
func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
