package keyedlimit

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
)

func TestClientAddr(t *testing.T) {
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}
	tests := []struct {
		name    string
		remote  string
		xff     []string
		trusted []netip.Prefix
		want    string
	}{
		{"remote address", "192.0.2.1:1234", nil, nil, "192.0.2.1"},
		{"X-Forwarded-For ignored without trusted proxies", "192.0.2.1:1234", []string{"203.0.113.9"}, nil, "192.0.2.1"},
		{"X-Forwarded-For ignored from an untrusted peer", "192.0.2.1:1234", []string{"203.0.113.9"}, proxies, "192.0.2.1"},
		{"one trusted proxy", "10.0.0.2:1234", []string{"203.0.113.9"}, proxies, "203.0.113.9"},
		{"spoofed entries left of the real one", "10.0.0.2:1234", []string{"1.1.1.1, 203.0.113.9"}, proxies, "203.0.113.9"},
		{"chain of trusted proxies", "10.0.0.2:1234", []string{"203.0.113.9, 10.1.1.1", "10.2.2.2"}, proxies, "203.0.113.9"},
		{"all trusted", "10.0.0.2:1234", []string{"10.9.9.9, 10.1.1.1"}, proxies, "10.9.9.9"},
		{"unparsable entry stops at the last trusted hop", "10.0.0.2:1234", []string{"203.0.113.9, junk, 10.1.1.1"}, proxies, "10.1.1.1"},
		{"empty header", "10.0.0.2:1234", nil, proxies, "10.0.0.2"},
		{"entries with ports and brackets", "[fd00::1]:443", []string{"[2001:db8::7]:5555, 10.1.1.1:80"}, proxies, "2001:db8::7"},
		{"IPv4-mapped IPv6 is unmapped", "[::ffff:192.0.2.1]:1234", nil, nil, "192.0.2.1"},
		{"Unix socket", "@", nil, proxies, "invalid IP"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = tt.remote
			for _, v := range tt.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := ClientAddr(r, tt.trusted).String(); got != tt.want {
				t.Errorf("ClientAddr = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestCheckProxies(t *testing.T) {
	tests := []struct {
		name    string
		ps      []netip.Prefix
		wantErr bool
	}{
		{"none", nil, false},
		{"valid", []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, false},
		{"zero prefix", []netip.Prefix{{}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := CheckProxies(tt.ps); (err != nil) != tt.wantErr {
				t.Errorf("CheckProxies(%v) = %v, want error %v", tt.ps, err, tt.wantErr)
			}
		})
	}
}
