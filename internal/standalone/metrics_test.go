package standalone

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestMetricsAddrKeepsMetricsOffThePublicListener: /metrics names the
// protected groups and endpoints and takes no token, so -metrics-addr serves
// it on a listener of its own and the public address answers 404 for it;
// without the flag the public address serves it, as before.
func TestMetricsAddrKeepsMetricsOffThePublicListener(t *testing.T) {
	t.Run("without -metrics-addr", func(t *testing.T) {
		base, stop := startInProcess(t, io.Discard)
		defer stop()
		if code, body := get(t, base+metricsPath); code != http.StatusOK || !strings.Contains(body, "scorehub_queue_running") {
			t.Errorf("GET %s on the public address: %d %.200s; want the metrics", metricsPath, code, body)
		}
	})
	t.Run("with -metrics-addr", func(t *testing.T) {
		addr := freeAddr(t)
		base, stop := startInProcess(t, io.Discard, "-metrics-addr", addr)
		defer stop()
		if code, body := get(t, base+metricsPath); code != http.StatusNotFound || strings.Contains(body, "scorehub_") {
			t.Errorf("GET %s on the public address: %d %.200s; want 404", metricsPath, code, body)
		}
		if code, body := get(t, "http://"+addr+metricsPath); code != http.StatusOK || !strings.Contains(body, "scorehub_queue_running") {
			t.Errorf("GET %s on the metrics address: %d %.200s; want the metrics", metricsPath, code, body)
		}
		if code, _ := get(t, "http://"+addr+"/executions/queues"); code != http.StatusNotFound {
			t.Errorf("the metrics address answered %d for a route of the public one, want 404", code)
		}
	})
}

func TestMetricsAddrNeedsMetrics(t *testing.T) {
	_, err := parseConfig([]string{"-metrics=false", "-metrics-addr", "127.0.0.1:0"}, func(string) string { return "" }, io.Discard)
	if err == nil {
		t.Error("-metrics-addr with -metrics=false was accepted, want an error")
	}
	c, err := parseConfig(nil, func(k string) string {
		if k == "SCOREHUB_METRICS_ADDR" {
			return "127.0.0.1:9100"
		}
		return ""
	}, io.Discard)
	if err != nil || c.MetricsAddr != "127.0.0.1:9100" {
		t.Errorf("SCOREHUB_METRICS_ADDR gave %q, %v; want 127.0.0.1:9100", c.MetricsAddr, err)
	}
}

// get returns the status and body of a GET.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

// freeAddr returns a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
