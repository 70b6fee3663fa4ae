package runtime_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	mcprt "github.com/mcprt/mcprt/runtime"
	"github.com/mcprt/mcprt/runtime/streamhttp"
	"github.com/mcprt/mcprt/supervisor"
)

// failing is a part that cannot start.
type failing struct{ err error }

func (f failing) ChildSpec(*actor.Engine, *actor.PID) supervisor.ChildSpec {
	return supervisor.ChildSpec{ID: "failing", Start: supervisor.Service(
		func(func(error)) error { return f.err }, nil)}
}

// TestServePartFails: a part that cannot start ends the process's tree
// before the transport serves: Serve returns its reason (exit status 1),
// and the endpoint's listener, never served, is given back.
func TestServePartFails(t *testing.T) {
	srv := handlers.NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint, err := streamhttp.NewServer(ln, srv, streamhttp.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	broke := errors.New("the pool cannot open")
	served := make(chan error, 1)
	go func() {
		served <- mcprt.Serve(context.Background(), srv, mcprt.Options{
			Logger: slog.New(slog.DiscardHandler), Parts: []mcprt.Part{failing{broke}}, Transport: endpoint,
		})
	}()
	select {
	case err := <-served:
		if !errors.Is(err, broke) || mcprt.ExitCode(err) != mcprt.ExitFailure {
			t.Fatalf("Serve: %v (exit status %d); want the part's reason, status 1", err, mcprt.ExitCode(err))
		}
	case <-time.After(time.Minute): // a hang, not a pace
		t.Fatal("Serve did not return after its part failed")
	}
	if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		c.Close()
		t.Error("the endpoint's listener is still open")
	}
}
