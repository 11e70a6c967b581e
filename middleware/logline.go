package middleware

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"
)

// lineWriter writes access records to an io.Writer as slog.TextHandler
// writes them with default options, without going through a handler: the
// record's own fields are appended straight to a pooled buffer, what never
// changes (message, levels, cfg.Attrs) is rendered once, and a text value
// it cannot tell to be plain is rendered by a TextHandler of its own
// (textRenderer), so that every line is the one slog would have written.
type lineWriter struct {
	out   io.Writer
	msg   []byte // " msg=…", rendered
	level []byte // the level's text, rendered
	fault []byte // the level of a 5xx answer in an audit log, rendered
	extra []byte // " k=v…" of cfg.Attrs, rendered, or empty
	text  *textRenderer
	bufs  sync.Pool // *[]byte
}

// maxKeptLine is the largest line buffer kept for reuse.
const maxKeptLine = 4 << 10

func newLineWriter(out io.Writer, level, faultLevel slog.Level, msg string, extra []slog.Attr) *lineWriter {
	t := newTextRenderer()
	return &lineWriter{
		out:   out,
		msg:   t.appendValue([]byte(" msg="), slog.StringValue(msg)),
		level: t.appendValue(nil, slog.AnyValue(level)),
		fault: t.appendValue(nil, slog.AnyValue(faultLevel)),
		extra: t.appendAttrs(nil, extra),
		text:  t,
	}
}

// accessRecord is what one request's record says beyond the fixed
// parts, whether a lineWriter writes it or a slog.Handler.
type accessRecord struct {
	end       time.Time
	fault     bool // logged at the fault level
	method    string
	path      string
	status    int
	bytes     int64
	duration  time.Duration
	requestID string // logged unless empty
	subject   string
	client    string
	// Whether subject and client are logged, even empty.
	withSubject, withClient bool
}

// attrs appends the record's attributes, in the order a line has them.
func (rec *accessRecord) attrs(a []slog.Attr) []slog.Attr {
	a = append(a,
		slog.String("method", rec.method),
		slog.String("path", rec.path),
		slog.Int("status", rec.status),
		slog.Int64("bytes", rec.bytes),
		slog.Duration("duration", rec.duration),
	)
	if rec.requestID != "" {
		a = append(a, slog.String("request_id", rec.requestID))
	}
	if rec.withSubject {
		a = append(a, slog.String("subject", rec.subject))
	}
	if rec.withClient {
		a = append(a, slog.String("client", rec.client))
	}
	return a
}

// write writes rec as one line in one Write, as slog.TextHandler does.
func (l *lineWriter) write(rec *accessRecord) {
	bp, _ := l.bufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	b := (*bp)[:0]
	if !rec.end.IsZero() { // slog leaves out a zero time
		b = append(b, "time="...)
		b = appendLogTime(b, rec.end)
		b = append(b, ' ')
	}
	b = append(b, "level="...)
	if rec.fault {
		b = append(b, l.fault...)
	} else {
		b = append(b, l.level...)
	}
	b = append(b, l.msg...)
	b = append(b, " method="...)
	b = l.appendString(b, rec.method)
	b = append(b, " path="...)
	b = l.appendString(b, rec.path)
	b = append(b, " status="...)
	b = strconv.AppendInt(b, int64(rec.status), 10)
	b = append(b, " bytes="...)
	b = strconv.AppendInt(b, rec.bytes, 10)
	b = append(b, " duration="...)
	b = append(b, rec.duration.String()...)
	if rec.requestID != "" {
		b = append(b, " request_id="...)
		b = l.appendString(b, rec.requestID)
	}
	if rec.withSubject {
		b = append(b, " subject="...)
		b = l.appendString(b, rec.subject)
	}
	if rec.withClient {
		b = append(b, " client="...)
		b = l.appendString(b, rec.client)
	}
	b = append(b, l.extra...)
	b = append(b, '\n')
	_, _ = l.out.Write(b) // as Logger.LogAttrs, which has nowhere to report it either
	if cap(b) <= maxKeptLine {
		*bp = b
		l.bufs.Put(bp)
	}
}

// appendString appends s as slog.TextHandler writes a text value: as it
// is when every byte is printable ASCII that needs no quoting, which
// methods, paths, addresses and IDs almost always are, and otherwise as
// the renderer writes it.
func (l *lineWriter) appendString(b []byte, s string) []byte {
	if plainText(s) {
		return append(b, s...)
	}
	return l.text.appendValue(b, slog.StringValue(s))
}

// plainText reports whether s is text slog.TextHandler writes unquoted
// for certain: not empty, and only printable ASCII other than space,
// '=', '"' and '\'. It may say no to text slog would not quote either;
// such text takes the renderer.
func plainText(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || c == '=' || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// appendLogTime appends t as slog.TextHandler writes a record's time:
// RFC 3339 with the milliseconds, truncated, always three digits. Years
// of four digits and zones of whole minutes, all there are in practice,
// are written here. The rest are written as slog writes them: with
// time.RFC3339Nano, which parses its layout every time, from the time
// truncated to the millisecond plus a tenth of one, so that there are
// four digits after the point, the fourth then dropped; the byte dropped
// is the 24th, which is the wrong one when the year is not four digits
// long, and is the one dropped here too.
func appendLogTime(b []byte, t time.Time) []byte {
	year, month, day := t.Date()
	_, offset := t.Zone()
	if year < 0 || year > 9999 || offset%60 != 0 || offset <= -100*3600 || offset >= 100*3600 {
		const fourth = len("2006-01-02T15:04:05.000")
		n := len(b)
		b = t.Truncate(time.Millisecond).Add(time.Millisecond/10).AppendFormat(b, time.RFC3339Nano)
		return append(b[:n+fourth], b[n+fourth+1:]...)
	}
	hour, minute, sec := t.Clock()
	b = append(b, byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-')
	b = append2(b, int(month), '-')
	b = append2(b, day, 'T')
	b = append2(b, hour, ':')
	b = append2(b, minute, ':')
	b = append2(b, sec, '.')
	ms := t.Nanosecond() / 1e6
	b = append(b, byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10))
	if offset == 0 {
		return append(b, 'Z')
	}
	sign := byte('+')
	if offset < 0 {
		sign, offset = '-', -offset
	}
	b = append(b, sign)
	b = append2(b, offset/3600, ':')
	m := offset / 60 % 60
	return append(b, byte('0'+m/10), byte('0'+m%10))
}

// append2 appends n, below 100, as two digits, then sep.
func append2(b []byte, n int, sep byte) []byte {
	return append(b, byte('0'+n/10), byte('0'+n%10), sep)
}

// textRenderer renders attributes and values with a slog.TextHandler, for
// what lineWriter does not write itself: the parts of a line that never
// change, rendered once, and the rare text value that may need quoting.
type textRenderer struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	h      slog.Handler
	prefix int // the length of what the handler writes for a record without attributes, "level=INFO msg=\"\""
}

func newTextRenderer() *textRenderer {
	t := &textRenderer{}
	t.h = slog.NewTextHandler(&t.buf, nil)
	t.prefix = len(t.render(nil))
	return t
}

// render returns the line the handler writes for a record with attrs, a
// zero time (which it leaves out) and an empty message, without its
// newline. It is only valid until the next call; t.mu must be held.
func (t *textRenderer) render(attrs []slog.Attr) []byte {
	t.buf.Reset()
	var r slog.Record
	r.AddAttrs(attrs...)
	_ = t.h.Handle(context.Background(), r) // a bytes.Buffer does not fail
	return bytes.TrimSuffix(t.buf.Bytes(), []byte{'\n'})
}

// appendAttrs appends attrs as the handler writes them after a record's
// message: each with a space before it.
func (t *textRenderer) appendAttrs(b []byte, attrs []slog.Attr) []byte {
	if len(attrs) == 0 {
		return b
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return append(b, t.render(attrs)[t.prefix:]...)
}

// appendValue appends v as the handler writes it after a key's '='.
func (t *textRenderer) appendValue(b []byte, v slog.Value) []byte {
	const key = "k"
	t.mu.Lock()
	defer t.mu.Unlock()
	line := t.render([]slog.Attr{{Key: key, Value: v}})
	return append(b, line[t.prefix+len(" "+key+"="):]...)
}
