package redact

import (
	"context"
	"log/slog"
)

// Handler returns a slog.Handler that passes every record to h with its
// message and each text value (in groups too, and the attributes given to
// WithAttrs) put through [Secrets], as are errors' texts. A record
// without secrets reaches h unchanged. It is as safe for concurrent use as
// h.
func Handler(h slog.Handler) slog.Handler {
	if _, ok := h.(handler); ok {
		return h
	}
	return handler{h}
}

type handler struct{ next slog.Handler }

func (h handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h handler) Handle(ctx context.Context, r slog.Record) error {
	dirty := suspect(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		dirty = dirty || mayHold(a.Value)
		return !dirty
	})
	if !dirty {
		return h.next.Handle(ctx, r)
	}
	out := slog.NewRecord(r.Time, r.Level, Secrets(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

// mayHold reports whether v may hold a secret Secrets would replace.
func mayHold(v slog.Value) bool {
	v = v.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return suspect(v.String())
	case slog.KindGroup:
		for _, a := range v.Group() {
			if mayHold(a.Value) {
				return true
			}
		}
	case slog.KindAny:
		err, ok := v.Any().(error)
		return ok && err != nil && suspect(err.Error())
	}
	return false
}

func (h handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i] = attr(a)
	}
	return handler{h.next.WithAttrs(clean)}
}

func (h handler) WithGroup(name string) slog.Handler { return handler{h.next.WithGroup(name)} }

// attr returns a with its text put through Secrets.
func attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, Secrets(v.String()))
	case slog.KindGroup:
		g := v.Group()
		clean := make([]slog.Attr, len(g))
		for i, m := range g {
			clean[i] = attr(m)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(clean...)}
	case slog.KindAny:
		if err, ok := v.Any().(error); ok && err != nil {
			if s := err.Error(); suspect(s) {
				return slog.String(a.Key, Secrets(s))
			}
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
