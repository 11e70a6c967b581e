package standalone

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/testutil"
)

// TestUnreadAnswerIsClosed replays, against the whole server with its
// default -write-timeout 0, a client that sends a scoring request with a
// large answer over a raw socket and never reads it: with
// -write-progress-timeout the request ends (its access log line appears),
// which it never would while the answer waits for the client.
func TestUnreadAnswerIsClosed(t *testing.T) {
	var logs testutil.LockedBuffer
	base, stop := startInProcess(t, &logs, "-write-progress-timeout", "200ms")
	defer stop()

	var b strings.Builder
	b.WriteString(`{"data":[`)
	for i := range 60_000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"sepal_length":5.%d,"sepal_width":3.5,"petal_length":1.4,"petal_width":0.2}`, i%10)
	}
	b.WriteString(`]}`)
	body := b.String()

	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.(*net.TCPConn).SetReadBuffer(4 << 10); err != nil {
		t.Fatal(err)
	}
	const path = "/webapi/DEFAULT/api/v1/services/iris/classify"
	if _, err := fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", path, len(body), body); err != nil {
		t.Fatal(err)
	}
	if !testutil.Poll(20*time.Second, func() bool { return logLine(logs.String(), "http request", "path="+path) != "" }) {
		t.Fatalf("the unread answer still holds its request; log:\n%s", logs.String())
	}
}
