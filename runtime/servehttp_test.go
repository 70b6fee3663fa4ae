package runtime_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	mcprt "github.com/mcprt/mcprt/runtime"
)

// urlCatcher is a slog handler that hands on the url attribute of the
// "serving" record, the way a user reads where the server listens.
type urlCatcher struct {
	once sync.Once
	url  chan string
}

func (c *urlCatcher) Enabled(context.Context, slog.Level) bool { return true }
func (c *urlCatcher) WithAttrs([]slog.Attr) slog.Handler       { return c }
func (c *urlCatcher) WithGroup(string) slog.Handler            { return c }
func (c *urlCatcher) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "url" {
			c.once.Do(func() { c.url <- a.Value.String() })
		}
		return true
	})
	return nil
}

func modernCall(t *testing.T, url, name, args string) (int, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `,` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", name)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestServeHTTP: Options.HTTP serves the same server over Streamable HTTP,
// and a stop (ctx here, SIGTERM in a process) still answers the call in
// flight before Serve returns.
func TestServeHTTP(t *testing.T) {
	srv := handlers.NewServer(mcp.Implementation{Name: "greeter", Version: "1.0.0"}, "")
	handlers.AddTool(srv, mcp.Tool{Name: "greet", Description: "Greets someone by name."},
		func(_ context.Context, _ *handlers.Request, in GreetIn) (GreetOut, error) {
			return GreetOut{Greeting: "Hello, " + in.Name + "!"}, nil
		})
	started := make(chan struct{})
	handlers.AddTool(srv, mcp.Tool{Name: "slow", Description: "Answers after a while."},
		func(ctx context.Context, _ *handlers.Request, _ struct{}) (GreetOut, error) {
			close(started)
			select {
			case <-time.After(300 * time.Millisecond):
			case <-ctx.Done():
				return GreetOut{}, ctx.Err()
			}
			return GreetOut{Greeting: "done"}, nil
		})
	catcher := &urlCatcher{url: make(chan string, 1)}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	served := make(chan error, 1)
	go func() {
		served <- mcprt.Serve(ctx, srv, mcprt.Options{HTTP: "127.0.0.1:0", Logger: slog.New(catcher), Tasks: &mcprt.TasksOptions{}})
	}()
	var url string
	select {
	case url = <-catcher.url:
	case err := <-served:
		t.Fatalf("Serve returned before serving: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("Serve never said where it serves")
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/mcp") {
		t.Fatalf("serving at %q, want http://127.0.0.1:PORT/mcp", url)
	}
	if code, body := modernCall(t, url, "greet", `{"name":"Ada"}`); code != 200 || !strings.Contains(body, `"greeting":"Hello, Ada!"`) {
		t.Fatalf("greet: %d %s", code, body)
	}

	slow := make(chan string, 1)
	go func() {
		code, body := modernCall(t, url, "slow", `{}`)
		if code != 200 {
			body = "status " + http.StatusText(code) + ": " + body
		}
		slow <- body
	}()
	<-started
	stop()
	select {
	case err := <-served:
		if mcprt.ExitCode(err) != mcprt.ExitOK {
			t.Errorf("Serve after ctx ended: %v (exit %d), want a clean stop", err, mcprt.ExitCode(err))
		}
	case <-time.After(time.Minute):
		t.Fatal("Serve did not return after ctx ended")
	}
	if body := <-slow; !strings.Contains(body, `"greeting":"done"`) {
		t.Errorf("the call in flight at the stop got %s, want its answer", body)
	}
}
