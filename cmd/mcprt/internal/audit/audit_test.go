package audit

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers/trace"
)

func span(tool string, code int, isError bool) *trace.Span {
	tr := &trace.Tracer{}
	s := tr.Start(trace.SpanContext{}, false, "tools/call", trace.KindServer, time.Now())
	trace.Describe(s, "tools/call", []byte("1"), []byte(`{"name":"`+tool+`","arguments":{"a":1}}`), false)
	trace.Outcome(s, code, isError)
	s.Principal, s.ClientID = "alice", "app"
	s.Params = []byte(`{"name":"` + tool + `","arguments":{"a":1}}`)
	s.Response = []byte(`{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"t-1"}}}`)
	s.End = s.Start.Add(1500 * time.Microsecond)
	return s
}

func readLines(t *testing.T, path string) []Entry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var es []Entry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%q: %v", sc.Text(), err)
		}
		es = append(es, e)
	}
	return es
}

func TestRecordAndReopen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	l, err := Open(path, nil, Options{Endpoint: "/mcp", Backend: func(_, name string) string {
		b, _, _ := strings.Cut(name, "__")
		return b
	}})
	if err != nil {
		t.Fatal(err)
	}
	l.Start()
	l.Record(span("files__read", 0, true))
	client := span("x", 0, false)
	client.Kind = trace.KindClient
	l.Record(client) // not audited: a request this process sent
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	if err := l.Reopen(); err != nil {
		t.Fatal(err)
	}
	l.Record(span("files__write", 403, false))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	old, cur := readLines(t, path+".1"), readLines(t, path)
	if len(old) != 1 || len(cur) != 1 {
		t.Fatalf("lines: %d before rotation, %d after", len(old), len(cur))
	}
	e := old[0]
	if e.Subject != "alice" || e.ClientID != "app" || e.Endpoint != "/mcp" || e.Method != "tools/call" || e.Tool != "files__read" ||
		e.Backend != "files" || e.Outcome != "tool_error" || e.DurationMS != 1.5 || e.TaskID != "t-1" || e.Arguments != nil || e.Result != nil {
		t.Errorf("entry %+v", e)
	}
	if cur[0].Outcome != "refused" || cur[0].Code != 403 {
		t.Errorf("refused entry %+v", cur[0])
	}
}

func TestArgsAndConcurrency(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	l, err := Open(path, nil, Options{Endpoint: "stdio", Args: true})
	if err != nil {
		t.Fatal(err)
	}
	l.Start()
	const n = 2000
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			for range n / 20 {
				l.Record(span("t", 0, false))
			}
		})
	}
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	es := readLines(t, path)
	if len(es)+int(l.Dropped()) != n || l.Dropped() != 0 {
		t.Fatalf("%d lines, %d dropped, of %d", len(es), l.Dropped(), n)
	}
	if string(es[0].Arguments) != `{"a":1}` || !strings.Contains(string(es[0].Result), "t-1") {
		t.Errorf("args %s result %s", es[0].Arguments, es[0].Result)
	}
}

func TestStream(t *testing.T) {
	if _, err := Open("-", nil, Options{}); err == nil {
		t.Error("- without a stream: accepted")
	}
}

// TestCredential: a backend's line names its credential mode (the
// gateway's "auth"), a line without a backend none.
func TestCredential(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	modes := map[string]string{"gh": "user", "local": ""}
	l, err := Open(path, nil, Options{Endpoint: "/mcp",
		Backend: func(_, name string) string {
			b, _, _ := strings.Cut(name, "__")
			if b == name {
				return ""
			}
			return b
		},
		Credential: func(b string) string { return modes[b] }})
	if err != nil {
		t.Fatal(err)
	}
	l.Start()
	l.Record(span("gh__issues", 0, false))
	l.Record(span("local__echo", 0, false))
	l.Record(span("own", 0, false))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	es := readLines(t, path)
	if len(es) != 3 {
		t.Fatalf("%d lines", len(es))
	}
	if es[0].Backend != "gh" || es[0].Credential != "user" || es[0].Subject != "alice" {
		t.Errorf("remote backend's line %+v", es[0])
	}
	if es[1].Credential != "" || es[2].Credential != "" {
		t.Errorf("credential on a local backend's line or one without a backend: %+v, %+v", es[1], es[2])
	}
	raw, _ := os.ReadFile(path)
	if n := strings.Count(string(raw), `"credential"`); n != 1 {
		t.Errorf("credential in %d lines, want 1:\n%s", n, raw)
	}
}
