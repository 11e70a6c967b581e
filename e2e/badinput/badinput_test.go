// Package badinput sends the reference server a catalogue of malformed and
// hostile requests and checks each answer, and that the server is as it
// was afterwards.
package badinput

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/e2e/internal/harness"
	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/tokens"
	"github.com/scorehub/scorehub/tokens/accounts"
)

// The server timeouts the catalogue runs with: short, so that slow senders
// are cut off within the test, and far above what loopback needs. The
// read timeout is the longest, as the 33 MiB chunked body must arrive
// within it: under the race detector, on two cores busy with the other
// suites, it once took 7.4 s.
const (
	badReadHeaderTimeout = time.Second
	badReadTimeout       = 15 * time.Second
	badIdleTimeout       = 5 * time.Second
	badWriteTimeout      = 30 * time.Second
)

// badHang is how long a catalogue request may go unanswered before the
// test calls it a hang; it is not a speed requirement.
const badHang = 30 * time.Second

// badPlain as a case's error type means the answer comes from net/http
// itself, before any handler runs: a text/plain status line the server
// cannot shape.
const badPlain = "(net/http)"

// badIrisRow is one valid row for the demo endpoint.
const badIrisRow = harness.IrisRow

// badEnv is what the cases build their requests from.
type badEnv struct {
	token  string            // an administrator's idToken
	forged map[string]string // forged or unacceptable tokens by kind
}

// badCase is one malformed or hostile request and the answer it must get.
type badCase struct {
	name string
	// req returns the request exactly as it goes on the wire.
	req    func(e *badEnv) string
	status int
	// typ is the error type of the JSON answer, badPlain for net/http's
	// own answer, "" for a success.
	typ string
	// header lists headers the answer must have; each must contain the
	// given text.
	header map[string]string
	// body, when set, must be contained in the answer's body.
	body string
}

// badReq builds a raw HTTP/1.1 request. Content-Length is added for a body
// (or a method that takes one) unless headers set it or Transfer-Encoding.
func badReq(method, target, body string, headers ...string) string {
	var b strings.Builder
	b.Grow(len(body) + 256)
	b.WriteString(method + " " + target + " HTTP/1.1\r\nHost: scorehub.test\r\n")
	framed := false
	for _, h := range headers {
		b.WriteString(h + "\r\n")
		l := strings.ToLower(h)
		framed = framed || strings.HasPrefix(l, "content-length:") || strings.HasPrefix(l, "transfer-encoding:")
	}
	if !framed && (body != "" || method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch) {
		b.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n")
	}
	b.WriteString("Connection: close\r\n\r\n")
	b.WriteString(body)
	return b.String()
}

// badScore is a scoring request for the demo endpoint with a JSON body.
func badScore(body string, headers ...string) func(*badEnv) string {
	return func(*badEnv) string {
		return badReq(http.MethodPost, harness.IrisURL, body, append([]string{"Content-Type: application/json"}, headers...)...)
	}
}

// badChunked encodes body in chunks of n bytes.
func badChunked(body string, n int) string {
	var b strings.Builder
	b.Grow(len(body) + len(body)/n*8 + 8)
	for len(body) > 0 {
		c := body[:min(n, len(body))]
		body = body[len(c):]
		fmt.Fprintf(&b, "%x\r\n%s\r\n", len(c), c)
	}
	b.WriteString("0\r\n\r\n")
	return b.String()
}

// badColumns returns a row with the demo's four columns and extra others,
// n keys in all.
func badColumns(n int) string {
	var b strings.Builder
	b.WriteString(`{"data":[{"sepal_length":5.1,"sepal_width":3.5,"petal_length":1.4,"petal_width":0.2`)
	for i := 4; i < n; i++ {
		fmt.Fprintf(&b, `,"c%d":%d`, i, i)
	}
	b.WriteString("}]}")
	return b.String()
}

// badAPI is a management request with the administrator's token.
func badAPI(method, target, contentType, body string, headers ...string) func(*badEnv) string {
	return func(e *badEnv) string {
		h := append([]string{"Authorization: Bearer " + e.token}, headers...)
		if contentType != "" {
			h = append(h, "Content-Type: "+contentType)
		}
		return badReq(method, target, body, h...)
	}
}

// badBearer is GET /api/v1/webapigroups with the forged token of kind.
func badBearer(kind string) func(*badEnv) string {
	return func(e *badEnv) string {
		return badReq(http.MethodGet, "/api/v1/webapigroups", "", "Authorization: Bearer "+e.forged[kind])
	}
}

// badBasic is GET on the token service with the given Authorization value.
func badBasic(auth string) func(*badEnv) string {
	return func(*badEnv) string {
		return badReq(http.MethodGet, "/api/rest/tokenservice", "", "Authorization: "+auth)
	}
}

func badFixed(raw string) func(*badEnv) string { return func(*badEnv) string { return raw } }

func badB64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// badRoundTrip sends raw on a new connection to addr and reads one answer.
// The request is written while the answer is read, so that a server that
// answers before reading everything (413) is seen answering.
func badRoundTrip(addr, raw string) (*http.Response, []byte, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	conn.SetDeadline(time.Now().Add(badHang))
	written := make(chan struct{})
	go func() {
		defer close(written)
		io.WriteString(conn, raw) // the server may stop reading early
	}()
	defer func() { conn.Close(); <-written }()
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return nil, nil, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	return res, body, err
}

// badCatalogue is every malformed or hostile request the server is sent.
func badCatalogue() []badCase {
	deep := func(open string, n int) string { return strings.Repeat(open, n) }
	huge := strings.Repeat("9", 400)
	longName := strings.Repeat("a", 129)
	return []badCase{
		// Numbers at and past float64's edges.
		{name: "number 1e400", req: badScore(`{"data":[{"sepal_length":1e400,"sepal_width":3.5,"petal_length":1.4,"petal_width":0.2}]}`),
			status: 400, typ: "invalid_value"},
		{name: "number -1e400", req: badScore(`{"data":[{"sepal_length":-1e400,"sepal_width":3.5,"petal_length":1.4,"petal_width":0.2}]}`),
			status: 400, typ: "invalid_value"},
		{name: "400-digit integer", req: badScore(`{"data":[{"sepal_length":` + huge + `,"sepal_width":3.5,"petal_length":1.4,"petal_width":0.2}]}`),
			status: 400, typ: "invalid_value"},
		{name: "400-digit integer as an echoed id", req: badScore(`{"data":[{"id":` + huge + `,"sepal_length":5.1,"sepal_width":3.5,"petal_length":1.4,"petal_width":0.2}]}`),
			status: 400, typ: "invalid_value"},
		{name: "negative zero", req: badScore(`{"data":[{"sepal_length":-0,"sepal_width":3.5,"petal_length":1.4,"petal_width":0.2}]}`),
			status: 200, body: `"sepal_length":-0,`},
		{name: "number 1e-400 underflows to zero", req: badScore(`{"data":[{"sepal_length":1e-400,"sepal_width":3.5,"petal_length":1.4,"petal_width":0.2}]}`),
			status: 200, body: `"sepal_length":1e-400,`},
		{name: "number with a leading zero", req: badScore(`{"data":[{"sepal_length":05.1}]}`), status: 400, typ: "malformed_json"},
		{name: "NaN", req: badScore(`{"data":[{"sepal_length":NaN}]}`), status: 400, typ: "malformed_json"},

		// Nesting.
		{name: "10,000 [ as the body", req: badScore(deep("[", 10_000)), status: 400, typ: "invalid_request"},
		{name: "10,000 [ as a value", req: badScore(`{"data":[{"sepal_length":` + deep("[", 10_000) + `}]}`), status: 400, typ: "malformed_json"},
		{name: "10,000 { under data", req: badScore(`{"data":[` + deep(`{"a":`, 10_000) + `1` + deep("}", 10_000) + `]}`), status: 400, typ: "malformed_json"},
		{name: "nested array value", req: badScore(`{"data":[{"sepal_length":[1]}]}`), status: 400, typ: "invalid_value", body: `/data/0/sepal_length`},

		// Text encoding.
		{name: "invalid UTF-8 in a key", req: badScore("{\"data\":[{\"sepal\xff\":1}]}"), status: 400, typ: "malformed_json"},
		{name: "invalid UTF-8 in a value", req: badScore("{\"data\":[{\"id\":\"a\xc0\xafb\"}]}"), status: 400, typ: "malformed_json"},
		{name: "lone high surrogate escaped in a value", req: badScore(`{"data":[{"id":"\ud800"}]}`), status: 400, typ: "malformed_json"},
		{name: "lone low surrogate escaped in a key", req: badScore(`{"data":[{"\udc00":1}]}`), status: 400, typ: "malformed_json"},
		{name: "byte order mark", req: badScore("\ufeff{\"data\":[" + badIrisRow + "]}"), status: 400, typ: "invalid_request"},

		// Shape.
		{name: `{"data":{}}`, req: badScore(`{"data":{}}`), status: 400, typ: "invalid_request"},
		{name: "[]", req: badScore(`[]`), status: 400, typ: "invalid_request"},
		{name: "null", req: badScore(`null`), status: 400, typ: "invalid_request"},
		{name: "empty body", req: badScore(``), status: 400, typ: "malformed_json"},
		{name: "trailing garbage", req: badScore(`{"data":[` + badIrisRow + `]}x`), status: 400, typ: "malformed_json"},
		{name: "a second object after the first", req: badScore(`{"data":[` + badIrisRow + `]}{"data":[]}`), status: 400, typ: "malformed_json"},
		{name: "duplicate key in a row", req: badScore(`{"data":[{"sepal_length":1,"sepal_length":2}]}`), status: 400, typ: "duplicate_key"},
		{name: "duplicate data", req: badScore(`{"data":[],"data":[` + badIrisRow + `]}`), status: 400, typ: "duplicate_key"},
		{name: "trailing comma", req: badScore(`{"data":[` + badIrisRow + `,]}`), status: 400, typ: "malformed_json"},

		// Size.
		{name: "10,000 columns (at the limit)", req: badScore(badColumns(10_000)), status: 200, body: `"c9999":9999`},
		{name: "10,001 columns", req: badScore(badColumns(10_001)), status: 413, typ: "too_many_columns", body: "10000"},
		{name: "33 MiB body with its length", req: func(*badEnv) string {
			return badReq(http.MethodPost, harness.IrisURL, `{"data":[],"pad":"`+strings.Repeat("x", 33<<20)+`"}`, "Content-Type: application/json")
		}, status: 413, typ: "body_too_large", body: "33554432"},
		{name: "33 MiB body chunked", req: func(*badEnv) string {
			return badReq(http.MethodPost, harness.IrisURL, badChunked(`{"data":[],"pad":"`+strings.Repeat("x", 33<<20)+`"}`, 1<<20),
				"Content-Type: application/json", "Transfer-Encoding: chunked")
		}, status: 413, typ: "body_too_large", body: "33554432"},
		{name: "body longer than Content-Length", req: badFixed(badReq(http.MethodPost, harness.IrisURL, `{"data":[`+badIrisRow+`]}`+"GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n",
			"Content-Type: application/json", "Content-Length: 20")), status: 400, typ: "malformed_json"},
		{name: "chunked without a length", req: badFixed(badReq(http.MethodPost, harness.IrisURL, badChunked(`{"data":[`+badIrisRow+`]}`, 7),
			"Content-Type: application/json", "Transfer-Encoding: chunked")), status: 200, body: `"prediction(species)":"setosa"`},
		// RFC 9112 §6.3: Transfer-Encoding overrides Content-Length, and
		// net/http then closes the connection, so nothing is smuggled.
		{name: "Content-Length and chunked at once", req: badFixed(badReq(http.MethodPost, harness.IrisURL, badChunked(`{"data":[`+badIrisRow+`]}`, 7),
			"Content-Type: application/json", "Content-Length: 5", "Transfer-Encoding: chunked")), status: 200, body: `"prediction(species)":"setosa"`},
		{name: "two different Content-Lengths", req: badFixed(badReq(http.MethodPost, harness.IrisURL, `{"data":[]}`,
			"Content-Type: application/json", "Content-Length: 11", "Content-Length: 12")), status: 400, typ: badPlain},

		// Content type.
		{name: "text/plain", req: badFixed(badReq(http.MethodPost, harness.IrisURL, `{"data":[]}`, "Content-Type: text/plain")), status: 415, typ: "unsupported_media_type"},
		{name: "no Content-Type", req: badFixed(badReq(http.MethodPost, harness.IrisURL, `{"data":[]}`)), status: 415, typ: "unsupported_media_type"},
		{name: "charset latin1", req: badFixed(badReq(http.MethodPost, harness.IrisURL, `{"data":[]}`, "Content-Type: application/json; charset=iso-8859-1")),
			status: 415, typ: "unsupported_media_type"},
		{name: "malformed media type", req: badFixed(badReq(http.MethodPost, harness.IrisURL, `{"data":[]}`, "Content-Type: application/json; ;;=")),
			status: 415, typ: "unsupported_media_type"},

		// Methods.
		{name: "GET on a scoring endpoint", req: badFixed(badReq(http.MethodGet, harness.IrisURL, "")), status: 405, typ: "method_not_allowed", header: map[string]string{"Allow": "POST"}},
		{name: "unknown method on a scoring endpoint", req: badFixed(badReq("BREW", harness.IrisURL, `{"data":[]}`, "Content-Type: application/json")),
			status: 405, typ: "method_not_allowed", header: map[string]string{"Allow": "POST"}},
		{name: "unknown method on a management route", req: badAPI("BREW", "/api/v1/webapigroups", "", ""),
			status: 405, typ: "method_not_allowed", header: map[string]string{"Allow": "GET, POST"}},
		{name: "POST on the token service", req: badFixed(badReq(http.MethodPost, "/api/rest/tokenservice", "")),
			status: 405, typ: "method_not_allowed", header: map[string]string{"Allow": "GET"}},
		{name: "TRACE on the root", req: badFixed(badReq(http.MethodTrace, "/", "")), status: 404, typ: "not_found"},

		// Names in scoring paths.
		{name: "scoring path with ..", req: badFixed(badReq(http.MethodPost, "/webapi/DEFAULT/api/v1/services/../../../api/v1/webapigroups", `{"data":[]}`, "Content-Type: application/json")),
			status: 404, typ: "not_found"},
		{name: "scoring path with %2e%2e", req: badFixed(badReq(http.MethodPost, "/webapi/DEFAULT/api/v1/services/%2e%2e/iris/classify", `{"data":[]}`, "Content-Type: application/json")),
			status: 404, typ: "not_found"},
		{name: "scoring path with %2F in a name", req: badFixed(badReq(http.MethodPost, "/webapi/DEFAULT/api/v1/services/iris%2Fclassify/classify", `{"data":[]}`, "Content-Type: application/json")),
			status: 404, typ: "not_found"},
		{name: "scoring path with a backslash", req: badFixed(badReq(http.MethodPost, `/webapi/DEFAULT/api/v1/services/..\iris/classify`, `{"data":[]}`, "Content-Type: application/json")),
			status: 404, typ: "not_found"},
		{name: "scoring path with %00", req: badFixed(badReq(http.MethodPost, "/webapi/DEFAULT/api/v1/services/iris%00/classify", `{"data":[]}`, "Content-Type: application/json")),
			status: 404, typ: "not_found"},
		{name: "scoring path with a raw NUL", req: badFixed(badReq(http.MethodPost, "/webapi/DEFAULT/api/v1/services/iris\x00/classify", `{"data":[]}`, "Content-Type: application/json")),
			status: 400, typ: badPlain},
		{name: "scoring path with a look-alike name", req: badFixed(badReq(http.MethodPost, "/webapi/DEFAULT/api/v1/services/%C4%B1r%C4%B1s/classify", `{"data":[]}`, "Content-Type: application/json")),
			status: 404, typ: "not_found"},
		{name: "scoring path with a fullwidth solidus", req: badFixed(badReq(http.MethodPost, "/webapi/DEFAULT/api/v1/services/iris%EF%BC%8Fclassify/classify", `{"data":[]}`, "Content-Type: application/json")),
			status: 404, typ: "not_found"},
		{name: "scoring path with a 129-byte name", req: badFixed(badReq(http.MethodPost, "/webapi/DEFAULT/api/v1/services/"+longName+"/classify", `{"data":[]}`, "Content-Type: application/json")),
			status: 404, typ: "not_found"},

		// Header tricks.
		// A folded line is joined to the header it continues: no header
		// is injected.
		{name: "CR LF in a header value (obsolete line folding)", req: badFixed(badReq(http.MethodPost, harness.IrisURL, `{"data":[`+badIrisRow+`]}`,
			"Content-Type: application/json", "X-Note: a\r\n Content-Type: text/plain")), status: 200, body: `"prediction(species)":"setosa"`},
		{name: "bare CR in a header value", req: badFixed(badReq(http.MethodPost, harness.IrisURL, `{"data":[]}`, "Content-Type: application/json", "X-Note: a\rSet-Cookie: b=c")),
			status: 400, typ: badPlain},
		{name: "bare LF line ends", req: badFixed("POST " + harness.IrisURL + " HTTP/1.1\nHost: x\nContent-Type: application/json\nContent-Length: " +
			strconv.Itoa(len(badIrisRow)+11) + "\nConnection: close\n\n{\"data\":[" + badIrisRow + "]}"), status: 200, body: `"prediction(species)":"setosa"`},
		{name: "header name with a space", req: badFixed(badReq(http.MethodGet, "/health/live", "", "Bad Name: x")), status: 400, typ: badPlain},
		{name: "2 MiB of headers", req: badFixed(badReq(http.MethodGet, "/health/live", "", "X-Big: "+strings.Repeat("a", 2<<20))),
			status: 431, typ: badPlain},
		{name: "macro name empty", req: badFixed(badReq(http.MethodPost, harness.IrisURL+"?=1", `{"data":[]}`, "Content-Type: application/json")),
			status: 400, typ: "invalid_request"},
		{name: "malformed query", req: badFixed(badReq(http.MethodPost, harness.IrisURL+"?a=%zz", `{"data":[]}`, "Content-Type: application/json")),
			status: 400, typ: "invalid_request"},

		// The token service.
		{name: "token service without credentials", req: badFixed(badReq(http.MethodGet, "/api/rest/tokenservice", "")),
			status: 401, typ: "unauthorized", header: map[string]string{"WWW-Authenticate": `Basic realm="scorehub"`}},
		{name: "Basic without a colon", req: badBasic("Basic " + badB64("adminpassword")),
			status: 401, typ: "unauthorized", header: map[string]string{"WWW-Authenticate": "Basic realm="}},
		{name: "Basic that is not base64", req: badBasic("Basic !!not*base64!!"),
			status: 401, typ: "unauthorized", header: map[string]string{"WWW-Authenticate": "Basic realm="}},
		{name: "Basic with a 10 KiB credential", req: badBasic("Basic " + badB64(strings.Repeat("u", 5<<10)+":"+strings.Repeat("p", 5<<10))),
			status: 401, typ: "unauthorized", header: map[string]string{"WWW-Authenticate": "Basic realm="}},
		{name: "Basic with an empty user", req: badBasic("Basic " + badB64(":"+harness.AdminPassword)),
			status: 401, typ: "unauthorized", header: map[string]string{"WWW-Authenticate": "Basic realm="}},
		{name: "two Authorization headers on the token service", req: badFixed(badReq(http.MethodGet, "/api/rest/tokenservice", "",
			"Authorization: Basic "+badB64("admin:"+harness.AdminPassword), "Authorization: Basic "+badB64("admin:x"))),
			status: 400, typ: "invalid_request"},
		{name: "Bearer on the token service", req: badBasic("Bearer abc.def.ghi"),
			status: 401, typ: "unauthorized", header: map[string]string{"WWW-Authenticate": "Basic realm="}},
		{name: "token exchange not configured", req: badFixed(badReq(http.MethodGet, "/api/rest/saml/tokenservice", "", "Authorization: Bearer abc.def.ghi")),
			status: 404, typ: "not_found"},

		// Bearer tokens on the management API.
		{name: "management without a token", req: badFixed(badReq(http.MethodGet, "/api/v1/webapigroups", "")),
			status: 401, typ: "unauthorized", header: map[string]string{"WWW-Authenticate": `Bearer realm="scorehub"`}},
		{name: "two Authorization headers on management", req: func(e *badEnv) string {
			return badReq(http.MethodGet, "/api/v1/webapigroups", "", "Authorization: Bearer "+e.token, "Authorization: Bearer "+e.token)
		}, status: 400, typ: "invalid_request", header: map[string]string{"WWW-Authenticate": `error="invalid_request"`}},
		// RFC 6750 §2.1: "Bearer" 1*SP b64token.
		{name: "Bearer with two spaces", req: func(e *badEnv) string {
			return badReq(http.MethodGet, "/api/v1/webapigroups", "", "Authorization: Bearer  "+e.token)
		}, status: 200, body: `"name":"DEFAULT"`},
		{name: "Bearer with a tab", req: func(e *badEnv) string {
			return badReq(http.MethodGet, "/api/v1/webapigroups", "", "Authorization: Bearer\t"+e.token)
		}, status: 400, typ: "invalid_request", header: map[string]string{"WWW-Authenticate": `error="invalid_request"`}},
		{name: "Bearer with a trailing token", req: func(e *badEnv) string {
			return badReq(http.MethodGet, "/api/v1/webapigroups", "", "Authorization: Bearer "+e.token+" extra")
		}, status: 400, typ: "invalid_request", header: map[string]string{"WWW-Authenticate": `error="invalid_request"`}},
		{name: "token in the query", req: func(e *badEnv) string {
			return badReq(http.MethodGet, "/api/v1/webapigroups?access_token="+e.token, "")
		}, status: 400, typ: "invalid_request", header: map[string]string{"WWW-Authenticate": `error="invalid_request"`}},
		{name: "JWT with alg none", req: badBearer("none"), status: 401, typ: "invalid_token", header: map[string]string{"WWW-Authenticate": `error="invalid_token"`}},
		{name: "JWT HS256 keyed with the public key", req: badBearer("hs256"), status: 401, typ: "invalid_token", header: map[string]string{"WWW-Authenticate": `error="invalid_token"`}},
		{name: "JWT with a tampered payload", req: badBearer("tampered"), status: 401, typ: "invalid_token", header: map[string]string{"WWW-Authenticate": `error="invalid_token"`}},
		{name: "JWT expired", req: badBearer("expired"), status: 401, typ: "invalid_token", header: map[string]string{"WWW-Authenticate": `error="invalid_token"`}, body: "expired"},
		{name: "JWT from another issuer", req: badBearer("issuer"), status: 401, typ: "invalid_token", header: map[string]string{"WWW-Authenticate": `error="invalid_token"`}},
		{name: "JWT for another audience", req: badBearer("audience"), status: 401, typ: "invalid_token", header: map[string]string{"WWW-Authenticate": `error="invalid_token"`}},
		{name: "JWT of 9 KiB", req: badBearer("large"), status: 401, typ: "invalid_token", header: map[string]string{"WWW-Authenticate": `error="invalid_token"`}},
		{name: "JWT with base64 padding", req: badBearer("padded"), status: 401, typ: "invalid_token", header: map[string]string{"WWW-Authenticate": `error="invalid_token"`}},

		// Management bodies.
		{name: "group with an unknown member", req: badAPI(http.MethodPost, "/api/v1/webapigroups", "application/json", `{"name":"badunknown","admin":true}`),
			status: 400, typ: "validation_failed", body: "/admin"},
		{name: "group name of the wrong type", req: badAPI(http.MethodPost, "/api/v1/webapigroups", "application/json", `{"name":5}`),
			status: 400, typ: "validation_failed", body: "/name"},
		{name: "group named ..", req: badAPI(http.MethodPost, "/api/v1/webapigroups", "application/json", `{"name":".."}`),
			status: 400, typ: "validation_failed", body: "/name"},
		{name: "group named with a slash", req: badAPI(http.MethodPost, "/api/v1/webapigroups", "application/json", `{"name":"a/../b"}`),
			status: 400, typ: "validation_failed", body: "/name"},
		{name: "group named with a NUL", req: badAPI(http.MethodPost, "/api/v1/webapigroups", "application/json", `{"name":"bad\u0000"}`),
			status: 400, typ: "validation_failed", body: "/name"},
		{name: "group named with a look-alike", req: badAPI(http.MethodPost, "/api/v1/webapigroups", "application/json", `{"name":"DEFAULТ"}`),
			status: 400, typ: "validation_failed", body: "/name"},
		{name: "group with a 129-byte name", req: badAPI(http.MethodPost, "/api/v1/webapigroups", "application/json", `{"name":"`+longName+`"}`),
			status: 400, typ: "validation_failed", body: "/name"},
		{name: "group body null", req: badAPI(http.MethodPost, "/api/v1/webapigroups", "application/json", `null`), status: 400, typ: "validation_failed"},
		{name: "group body an array", req: badAPI(http.MethodPost, "/api/v1/webapigroups", "application/json", `[]`), status: 400, typ: "validation_failed"},
		{name: "group body with a duplicate member", req: badAPI(http.MethodPost, "/api/v1/webapigroups", "application/json", `{"name":"baddup","name":"baddup2"}`),
			status: 400, typ: "malformed_json"},
		{name: "group body with invalid UTF-8", req: badAPI(http.MethodPost, "/api/v1/webapigroups", "application/json", "{\"name\":\"bad\xff\"}"),
			status: 400, typ: "malformed_json"},
		{name: "group body nested 10,000 deep", req: badAPI(http.MethodPost, "/api/v1/webapigroups", "application/json", `{"name":"baddeep","auth":`+deep("[", 10_000)+`}`),
			status: 400, typ: "malformed_json"},
		{name: "group description nested 10,000 deep", req: badAPI(http.MethodPost, "/api/v1/webapigroups", "application/json", `{"name":"baddeep","description":`+deep("[", 10_000)+`}`),
			status: 400, typ: "malformed_json"},
		{name: "group description a huge array", req: badAPI(http.MethodPost, "/api/v1/webapigroups", "application/json",
			`{"name":"badarray","description":[`+strings.Repeat("1,", 200_000)+`1]}`), status: 400, typ: "validation_failed", body: "/description"},
		{name: "group body of 2 MiB", req: badAPI(http.MethodPost, "/api/v1/webapigroups", "application/json",
			`{"name":"badbig","description":"`+strings.Repeat("x", 2<<20)+`"}`), status: 413, typ: "body_too_large", body: "1048576"},
		{name: "group body sent as text/plain", req: badAPI(http.MethodPost, "/api/v1/webapigroups", "text/plain", `{"name":"badtext"}`),
			status: 415, typ: "unsupported_media_type"},
		{name: "deployment with 1,001 endpoints", req: badAPI(http.MethodPost, "/api/v1/deployments", "application/json",
			`{"group":"DEFAULT","path":"badmany","endpoints":[`+strings.Repeat(`{"alias":"a","process":"iris"},`, 1000)+`{"alias":"a","process":"iris"}]}`),
			status: 400, typ: "validation_failed", body: "/endpoints"},
		{name: "deployment revision 1e400", req: badAPI(http.MethodPost, "/api/v1/deployments", "application/json",
			`{"group":"DEFAULT","path":"badrev","revision":1e400,"endpoints":[]}`), status: 400, typ: "validation_failed", body: "/revision"},
		{name: "deployment revision negative", req: badAPI(http.MethodPost, "/api/v1/deployments", "application/json",
			`{"group":"DEFAULT","path":"badneg","revision":-1,"endpoints":[]}`), status: 400, typ: "validation_failed", body: "/revision"},
		{name: "deployment in a group that does not exist", req: badAPI(http.MethodPost, "/api/v1/deployments", "application/json",
			`{"group":"badnogroup","path":"x","endpoints":[{"alias":"a","process":"iris"}]}`), status: 422, typ: "invalid_reference"},
		{name: "If-Match garbage", req: badAPI(http.MethodPut, "/api/v1/webapigroups/DEFAULT", "application/json", `{"name":"DEFAULT"}`, "If-Match: garbage"),
			status: 400, typ: "invalid_request"},
		{name: "If-Match empty list", req: badAPI(http.MethodPut, "/api/v1/webapigroups/DEFAULT", "application/json", `{"name":"DEFAULT"}`, "If-Match: , ,"),
			status: 400, typ: "invalid_request"},
		{name: "If-Match weak tag", req: badAPI(http.MethodPut, "/api/v1/webapigroups/DEFAULT", "application/json", `{"name":"DEFAULT"}`, `If-Match: W/"1"`),
			status: 412, typ: "precondition_failed"},
		{name: "If-Match revision past uint64", req: badAPI(http.MethodPut, "/api/v1/webapigroups/DEFAULT", "application/json", `{"name":"DEFAULT"}`, `If-Match: "`+huge+`"`),
			status: 412, typ: "precondition_failed"},
		{name: "merge patch as application/json", req: badAPI(http.MethodPatch, "/api/v1/deployments/DEFAULT/iris", "application/json", `{"enabled":false}`),
			status: 415, typ: "unsupported_media_type", header: map[string]string{"Accept-Patch": "application/merge-patch+json"}},
		{name: "merge patch nested 10,000 deep", req: badAPI(http.MethodPatch, "/api/v1/deployments/DEFAULT/iris", "application/merge-patch+json", `{"description":`+deep(`{"a":`, 10_000)+`1`+deep("}", 10_000)+`}`),
			status: 400, typ: "malformed_json"},
		{name: "merge patch with a wrong type", req: badAPI(http.MethodPatch, "/api/v1/deployments/DEFAULT/iris", "application/merge-patch+json", `{"enabled":"no"}`),
			status: 400, typ: "validation_failed", body: "/enabled"},

		// Names in management paths: no record has them (404), and one
		// cannot be created under them (PUT: the name in the URL is the
		// record's, refused as the body's /name would be).
		{name: "management path with ..", req: badAPI(http.MethodGet, "/api/v1/webapigroups/..", "", ""), status: 404, typ: "not_found"},
		{name: "management path with %2e%2e", req: badAPI(http.MethodDelete, "/api/v1/webapigroups/%2e%2e", "", ""), status: 404, typ: "not_found"},
		{name: "management path with %2F", req: badAPI(http.MethodDelete, "/api/v1/deployments/DEFAULT/iris%2F..", "", ""), status: 404, typ: "not_found"},
		{name: "management path with a backslash", req: badAPI(http.MethodGet, `/api/v1/webapigroups/..\DEFAULT`, "", ""), status: 404, typ: "not_found"},
		{name: "management path with %00", req: badAPI(http.MethodPut, "/api/v1/webapigroups/bad%00", "application/json", `{"description":"x"}`),
			status: 400, typ: "validation_failed", body: "/name"},
		{name: "management path with a look-alike", req: badAPI(http.MethodPut, "/api/v1/webapigroups/DEFAUL%D0%A2", "application/json", `{"description":"x"}`),
			status: 400, typ: "validation_failed", body: "/name"},
		{name: "management path with a 129-byte name", req: badAPI(http.MethodPut, "/api/v1/queues/"+longName, "application/json", `{"maxConcurrent":1,"maxWaiting":1}`),
			status: 400, typ: "validation_failed", body: "/name"},
		{name: "management route that does not exist", req: badAPI(http.MethodGet, "/api/v1/nothing", "", ""), status: 404, typ: "not_found"},
	}
}

// badForge makes tokens the server must refuse: unsigned, signed with the
// wrong algorithm, altered, and signed with the server's own key (read from
// its data directory) but expired, for another issuer or audience, or too
// large.
func badForge(t *testing.T, s *harness.Server, valid string) map[string]string {
	t.Helper()
	enc := base64.RawURLEncoding
	parts := strings.Split(valid, ".")
	if len(parts) != 3 {
		t.Fatalf("the idToken %q is not a compact JWS", valid)
	}
	var header map[string]any
	hb, _ := enc.DecodeString(parts[0])
	if err := json.Unmarshal(hb, &header); err != nil {
		t.Fatalf("token header: %v", err)
	}
	kid, _ := header["kid"].(string)
	segment := func(v any) string {
		b, _ := json.Marshal(v)
		return enc.EncodeToString(b)
	}
	now := time.Now().Unix()
	var payload map[string]any
	pb, _ := enc.DecodeString(parts[1])
	if err := json.Unmarshal(pb, &payload); err != nil {
		t.Fatalf("token payload: %v", err)
	}
	// The server's own issuer and audience, as its valid token names them.
	tokenIssuer, _ := payload["iss"].(string)
	tokenAudience := fmt.Sprint(payload["aud"])
	if aud, ok := payload["aud"].([]any); ok && len(aud) == 1 {
		tokenAudience = fmt.Sprint(aud[0])
	}
	claims := map[string]any{"sub": "admin", "admin": true, "grp": []string{"admin"}, "iss": tokenIssuer, "aud": tokenAudience,
		"iat": now, "exp": now + 300, "jti": "forged"}
	out := map[string]string{}

	out["none"] = segment(map[string]any{"alg": "none", "kid": kid, "typ": "JWT"}) + "." + segment(claims) + "."

	var jwks struct {
		Keys []map[string]string `json:"keys"`
	}
	if err := json.Unmarshal([]byte(s.Get(t, "/api/rest/jwks.json")), &jwks); err != nil || len(jwks.Keys) == 0 {
		t.Fatalf("JWKS: %v %v", err, jwks)
	}
	pub := jwks.Keys[0]["x"]
	if pub == "" {
		pub = jwks.Keys[0]["n"]
	}
	secret, _ := enc.DecodeString(pub)
	signing := segment(map[string]any{"alg": "HS256", "kid": kid, "typ": "JWT"}) + "." + segment(claims)
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(signing))
	out["hs256"] = signing + "." + enc.EncodeToString(mac.Sum(nil))

	payload["sub"] = "mallory"
	out["tampered"] = parts[0] + "." + segment(payload) + "." + parts[2]
	// Base64 decoders that skip padding or accept the standard alphabet
	// would verify this as the token itself.
	out["padded"] = valid + "=="

	keys, err := tokens.LoadOrCreateKeySet(filepath.Join(s.Dir, keyFile), tokens.KeySetConfig{Retention: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	issue := func(cfg tokens.IssuerConfig, p tokens.Principal) string {
		t.Helper()
		cfg.Keys = keys
		i, err := tokens.NewIssuer(cfg)
		if err != nil {
			t.Fatal(err)
		}
		raw, _, err := i.Issue(p)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	admin := tokens.Principal{Subject: "admin", Admin: true, Groups: []string{accounts.AdminGroup}}
	aud := []string{tokenAudience}
	out["expired"] = issue(tokens.IssuerConfig{Issuer: tokenIssuer, Audience: aud, Validity: time.Minute,
		Now: func() time.Time { return time.Now().Add(-3 * time.Minute) }}, admin)
	out["issuer"] = issue(tokens.IssuerConfig{Issuer: "https://evil.test", Audience: aud}, admin)
	out["audience"] = issue(tokens.IssuerConfig{Issuer: tokenIssuer, Audience: []string{"other"}}, admin)
	// The issuer refuses to sign a token this large, so this one's
	// signature does not match either: the size alone must refuse it.
	payload["sub"] = "admin"
	payload["pad"] = strings.Repeat("p", 9<<10)
	out["large"] = parts[0] + "." + segment(payload) + "." + parts[2]
	return out
}

// keyFile is where the standalone server keeps its signing keys in its data
// directory.
const keyFile = "keys.json"

// badStart runs the server with the catalogue's short timeouts, and its
// profiles on a listener of their own, where the test counts its
// goroutines.
func badStart(t *testing.T) (*harness.Server, *harness.Profiles) {
	t.Helper()
	s := harness.Start(t, harness.Options{Args: []string{
		"-read-header-timeout", badReadHeaderTimeout.String(), "-read-timeout", badReadTimeout.String(),
		"-write-timeout", badWriteTimeout.String(), "-idle-timeout", badIdleTimeout.String(), "-grace", "5s",
		"-debug-addr", "127.0.0.1:0"}})
	return s, s.Profiles(t)
}

// badState is what the management API lists: groups, deployments and
// queues, by name.
func badState(t *testing.T, s *harness.Server, token string) map[string][]string {
	t.Helper()
	state := map[string][]string{}
	for kind, path := range map[string]string{"groups": "/api/v1/webapigroups", "deployments": "/api/v1/deployments", "queues": "/api/v1/queues"} {
		req, _ := http.NewRequest(http.MethodGet, s.Base+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := s.Client(t).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var raw json.RawMessage
		err = json.NewDecoder(res.Body).Decode(&raw)
		res.Body.Close()
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("GET %s: %d %v", path, res.StatusCode, err)
		}
		items, page, err := testutil.DecodeList(raw)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		if page != nil && page.TotalElements != len(page.Content) {
			t.Fatalf("GET %s: %d of %d on the first page", path, len(page.Content), page.TotalElements)
		}
		var names []string
		for _, it := range items {
			name := fmt.Sprint(it["name"])
			if kind == "deployments" {
				name = fmt.Sprint(it["group"], "/", it["path"], " enabled=", it["enabled"], " revision=", it["revision"])
			} else {
				name += fmt.Sprint(" revision=", it["revision"])
			}
			names = append(names, name)
		}
		slices.Sort(names)
		state[kind] = names
	}
	return state
}

// badStable returns the server's goroutine count once it stops changing,
// the test's idle connections closed.
func badStable(t *testing.T, p *harness.Profiles) int {
	last := -1
	for range 50 {
		http.DefaultClient.CloseIdleConnections()
		n := p.Goroutines(t)
		if n == last {
			return n
		}
		last = n
		time.Sleep(100 * time.Millisecond)
	}
	return last
}

// badSettle waits until the server's goroutine count is back within slack
// of want.
func badSettle(t *testing.T, p *harness.Profiles, want, slack int) (int, bool) {
	deadline := time.Now().Add(20 * time.Second)
	for {
		http.DefaultClient.CloseIdleConnections()
		n := p.Goroutines(t)
		if n <= want+slack {
			return n, true
		}
		if time.Now().After(deadline) {
			return n, false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestBadInputCatalogue sends the server more than a hundred malformed or
// hostile requests across scoring, tokens and management, each of which
// must get its documented status and error type, then slow senders that
// must be cut off by the server's timeouts; and afterwards checks that the
// service is as it was: it still scores, issues tokens and writes, holds no
// more goroutines than before and kept nothing a refused request sent.
func TestBadInputCatalogue(t *testing.T) {
	s, profiles := badStart(t)
	addr := s.Addr
	token := s.AdminToken(t)
	before := badState(t, s, token)
	env := &badEnv{token: token, forged: badForge(t, s, token)}
	if status, got := s.PostJSON(t, harness.IrisURL, `{"data":[`+badIrisRow+`]}`); status != 200 {
		t.Fatalf("warm-up scoring: %d %v", status, got)
	}
	baseline := badStable(t, profiles)
	conf := s.Conformance(t)

	cases := badCatalogue()
	if len(cases) < 40 {
		t.Fatalf("the catalogue has %d cases, want at least 40", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw := c.req(env)
			res, body, err := badRoundTrip(addr, raw)
			if err != nil {
				t.Fatalf("no answer: %v", err)
			}
			badCheck(t, res, body, c)
			badConforms(t, conf, raw, res, body, c)
		})
	}

	t.Run("slow senders", func(t *testing.T) { badSlowSenders(t, addr, token) })

	// The service is not degraded.
	status, got := s.PostJSON(t, harness.IrisURL, `{"data":[`+badIrisRow+`]}`)
	if status != 200 || got["data"].([]any)[0].(map[string]any)["prediction(species)"] != "setosa" {
		t.Errorf("the demo endpoint after the catalogue: %d %v", status, got)
	}
	token = s.AdminToken(t)
	after := badState(t, s, token)
	if d := cmp.Diff(before, after); d != "" {
		t.Errorf("the catalogue left state behind (-before +after):\n%s", d)
	}
	if status, got := s.API(t, token, http.MethodPost, "/api/v1/webapigroups", "application/json", `{"name":"badafter","description":"written after the catalogue"}`); status != 201 {
		t.Errorf("a management write after the catalogue: %d %v", status, got)
	}
	if status, got := s.API(t, token, http.MethodGet, "/api/v1/webapigroups/badafter", "", ""); status != 200 || got["description"] != "written after the catalogue" {
		t.Errorf("reading the write back: %d %v", status, got)
	}
	if status, got := s.API(t, token, http.MethodDelete, "/api/v1/webapigroups/badafter", "", ""); status != 204 {
		t.Errorf("deleting it: %d %v", status, got)
	}
	n, ok := badSettle(t, profiles, baseline, 8)
	if !ok {
		t.Errorf("%d goroutines in the server after the catalogue, %d before:\n%s", n, baseline, profiles.GoroutineDump(t))
	}
	t.Logf("%d requests; goroutines: %d before, %d after", len(cases), baseline, n)
	if err := s.Stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	logged := s.Stderr()
	for _, bad := range []string{"panic", "level=ERROR"} {
		if strings.Contains(logged, bad) {
			t.Errorf("the server logged %q during the catalogue:\n%s", bad, logged)
		}
	}
}

// badCheck compares an answer with what the case expects.
func badCheck(t *testing.T, res *http.Response, body []byte, c badCase) {
	t.Helper()
	if res.StatusCode != c.status {
		t.Errorf("status %d, want %d; body: %.300s", res.StatusCode, c.status, body)
	}
	for k, v := range c.header {
		if got := res.Header.Get(k); !strings.Contains(got, v) {
			t.Errorf("%s: %q, want it to contain %q", k, got, v)
		}
	}
	if c.body != "" && !bytes.Contains(body, []byte(c.body)) {
		t.Errorf("the body does not contain %q: %.300s", c.body, body)
	}
	ct := res.Header.Get("Content-Type")
	if c.typ == badPlain {
		if !strings.HasPrefix(ct, "text/plain") {
			t.Errorf("Content-Type %q, want net/http's text/plain", ct)
		}
		return
	}
	if !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q, want JSON; body: %.300s", ct, body)
		return
	}
	if c.typ == "" {
		if !json.Valid(body) {
			t.Errorf("the answer is not JSON: %.300s", body)
		}
		return
	}
	var got struct {
		Error *struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Errorf("the answer is not JSON: %v: %.300s", err, body)
		return
	}
	switch {
	case got.Error == nil:
		t.Errorf("no error object in %.300s", body)
	case got.Error.Type != c.typ:
		t.Errorf("error type %q (%s), want %q", got.Error.Type, got.Error.Message, c.typ)
	case got.Error.Message == "" || strings.Contains(got.Error.Message, "scorehub/"):
		t.Errorf("error message %q is empty or names code", got.Error.Message)
	}
}

// badConforms checks an answer against the server's OpenAPI document,
// where the request is one the document can route (net/http reads it) and
// the answer is the server's own, not net/http's plain one.
func badConforms(t *testing.T, conf *harness.Conformance, raw string, res *http.Response, body []byte, c badCase) {
	t.Helper()
	if c.typ == badPlain {
		return
	}
	req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
	if err != nil {
		return
	}
	if _, err := conf.Check(req, res, body); err != nil {
		t.Errorf("answered %d, which the OpenAPI document does not allow: %v\nbody: %.300s", res.StatusCode, err, body)
	}
}

// badSlowSenders opens connections that send their headers, or their body,
// a byte at a time and never finish, and checks that each is cut off by
// the server's timeouts without an answer or with a 408, while the server
// keeps answering everyone else.
func badSlowSenders(t *testing.T, addr, token string) {
	const each = 6
	type outcome struct {
		kind string
		res  *http.Response
		body []byte
		err  error
	}
	starts := map[string]string{
		// Headers that never end.
		"headers": "POST " + harness.IrisURL + " HTTP/1.1\r\nHost: scorehub.test\r\nContent-Type: application/json\r\nX-Slow: ",
		// A scoring body that never arrives in full.
		"scoring body": "POST " + harness.IrisURL + " HTTP/1.1\r\nHost: scorehub.test\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"data\":[",
		// A management body that never arrives in full.
		"management body": "POST /api/v1/webapigroups HTTP/1.1\r\nHost: scorehub.test\r\nAuthorization: Bearer " + token +
			"\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"name\":\"badslow\",\"description\":\"",
		// A form body, which the Bearer check reads for an access_token.
		"form body": "POST /api/v1/webapigroups HTTP/1.1\r\nHost: scorehub.test\r\nAuthorization: Bearer " + token +
			"\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100000\r\n\r\nname=",
		// A chunked scoring body whose chunk never ends.
		"chunked body": "POST " + harness.IrisURL + " HTTP/1.1\r\nHost: scorehub.test\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n100000\r\n{\"data\":[",
	}
	results := make(chan outcome, each*len(starts))
	stopTrickle := make(chan struct{})
	var wg, started sync.WaitGroup
	for kind, start := range starts {
		for range each {
			wg.Add(1)
			started.Add(1)
			go func() {
				defer wg.Done()
				conn, err := net.Dial("tcp", addr)
				if err != nil {
					started.Done()
					results <- outcome{kind: kind, err: err}
					return
				}
				defer conn.Close()
				conn.SetDeadline(time.Now().Add(badHang))
				_, err = io.WriteString(conn, start)
				started.Done()
				if err != nil {
					results <- outcome{kind: kind, err: err}
					return
				}
				trickled := make(chan struct{})
				go func() {
					defer close(trickled)
					tick := time.NewTicker(200 * time.Millisecond)
					defer tick.Stop()
					for {
						select {
						case <-stopTrickle:
							return
						case <-tick.C:
							if _, err := conn.Write([]byte("a")); err != nil {
								return
							}
						}
					}
				}()
				res, err := http.ReadResponse(bufio.NewReader(conn), nil)
				var body []byte
				if err == nil {
					body, _ = io.ReadAll(res.Body)
					res.Body.Close()
				}
				conn.Close()
				<-trickled
				results <- outcome{kind: kind, res: res, body: body, err: err}
			}()
		}
	}
	// While every slow sender holds its connection, others are served.
	started.Wait()
	for i := range 3 {
		res, body, err := badRoundTrip(addr, badReq(http.MethodPost, harness.IrisURL, `{"data":[`+badIrisRow+`]}`, "Content-Type: application/json"))
		if err != nil || res.StatusCode != 200 {
			t.Errorf("scoring request %d beside the slow senders: %v %v %s", i, err, res, body)
		}
	}
	wg.Wait()
	close(stopTrickle)
	close(results)
	for o := range results {
		switch {
		case o.err != nil:
			var ne net.Error
			if errors.As(o.err, &ne) && ne.Timeout() {
				t.Errorf("%s: the server held the connection for %v without cutting it off", o.kind, badHang)
			}
			// Closed without an answer: what net/http does when headers
			// time out.
		case o.kind == "headers":
			t.Errorf("headers: answered %d %s, want the connection closed", o.res.StatusCode, o.body)
		default:
			var e struct {
				Error struct{ Type string } `json:"error"`
			}
			json.Unmarshal(o.body, &e)
			if o.res.StatusCode != http.StatusRequestTimeout || e.Error.Type != "request_timeout" ||
				!strings.HasPrefix(o.res.Header.Get("Content-Type"), "application/json") {
				t.Errorf("%s: answered %d %q %s, want 408 request_timeout as JSON", o.kind, o.res.StatusCode, o.res.Header.Get("Content-Type"), o.body)
			}
		}
	}
}
