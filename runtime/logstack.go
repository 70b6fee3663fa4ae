package runtime

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
)

// stackKey is the attribute that carries a goroutine stack (a panicking
// handler's, in the supervisors' records). The text log writes it below
// its record, one frame a line, rather than as one quoted line of \n and
// \t escapes that nobody can read.
const stackKey = "stack"

// stackText is the text handler, with the stack of a record written below
// it (see stackKey). Records without one go to the inner handler as they
// are; one with a stack is written whole, with one Write, so that other
// records cannot come between its lines.
type stackText struct {
	inner slog.Handler
	w     io.Writer
	ho    *slog.HandlerOptions
	// ops are the WithAttrs and WithGroup calls that made this handler,
	// replayed on the handler that writes a record with a stack.
	ops []func(slog.Handler) slog.Handler
}

func newStackText(w io.Writer, ho *slog.HandlerOptions) *stackText {
	return &stackText{inner: slog.NewTextHandler(w, ho), w: w, ho: ho}
}

func (h *stackText) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

func (h *stackText) Handle(ctx context.Context, r slog.Record) error {
	var stack string
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == stackKey && a.Value.Kind() == slog.KindString {
			stack = a.Value.String()
			return false
		}
		return true
	})
	if stack == "" {
		return h.inner.Handle(ctx, r)
	}
	bare := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == stackKey {
			a = slog.String(stackKey, "(below, one frame a line)")
		}
		bare.AddAttrs(a)
		return true
	})
	var buf bytes.Buffer
	var th slog.Handler = slog.NewTextHandler(&buf, h.ho)
	for _, op := range h.ops {
		th = op(th)
	}
	if err := th.Handle(ctx, bare); err != nil {
		return err
	}
	for _, l := range stackLines(stack) {
		buf.WriteString("    ")
		buf.WriteString(l)
		buf.WriteByte('\n')
	}
	_, err := h.w.Write(buf.Bytes())
	return err
}

func (h *stackText) with(op func(slog.Handler) slog.Handler) *stackText {
	return &stackText{inner: op(h.inner), w: h.w, ho: h.ho, ops: append(h.ops[:len(h.ops):len(h.ops)], op)}
}

func (h *stackText) WithAttrs(as []slog.Attr) slog.Handler {
	return h.with(func(x slog.Handler) slog.Handler { return x.WithAttrs(as) })
}

func (h *stackText) WithGroup(name string) slog.Handler {
	return h.with(func(x slog.Handler) slog.Handler { return x.WithGroup(name) })
}

// stackLines is a goroutine stack as debug.Stack writes it, one frame a
// line: "pkg.Func at /path/file.go:42", without the arguments' words and
// the program counter offsets, which say nothing to a reader. Lines it
// does not recognise (the goroutine header, "created by") are kept.
func stackLines(stack string) []string {
	lines := strings.Split(strings.TrimRight(stack, "\n"), "\n")
	out := make([]string, 0, len(lines)/2+1)
	for i := 0; i < len(lines); i++ {
		fn := lines[i]
		if strings.HasPrefix(fn, "\t") || i+1 == len(lines) || !strings.HasPrefix(lines[i+1], "\t") {
			out = append(out, strings.TrimSpace(fn))
			continue
		}
		if !strings.HasPrefix(fn, "created by ") && strings.HasSuffix(fn, ")") {
			if j := strings.LastIndexByte(fn, '('); j > 0 {
				fn = fn[:j]
			}
		}
		loc := strings.TrimSpace(lines[i+1])
		if j := strings.LastIndex(loc, " +0x"); j > 0 {
			loc = loc[:j]
		}
		out = append(out, fn+" at "+loc)
		i++
	}
	return out
}
