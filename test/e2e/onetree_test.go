package e2e

import (
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/session/client"
)

// TestGatewayHTTPTasksShutdownOrder: `mcprt gateway -http -tasks` is one
// tree (issue 34, item 1). Its root starts the backends, then the tasks,
// then the HTTP endpoint; on SIGTERM, with a plain call and a task in
// flight, the call gets its answer, and the tree stops the endpoint
// (drained), then the tasks, then the backends, with no order written by
// hand. The order is read from the root's supervision events, which
// LOG_LEVEL=debug logs.
func TestGatewayHTTPTasksShutdownOrder(t *testing.T) {
	t.Parallel()
	f := newGateway(t)
	config := f.config(map[string]any{"rs": f.serve("rs", map[string]any{"args": []string{"serve", "-tasks"}})})
	f.t.Cleanup(func() {
		for _, pid := range append(f.guards(""), f.procs("")...) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	gw := startHTTPEnv(t, []string{"LOG_LEVEL=debug"}, binPath, "gateway", "-config", config, "-http", "127.0.0.1:0", "-tasks")
	ctx := testCtx(t)
	c := connectHTTP(t, gw.url, client.Options{Era: client.EraLegacy})

	task, _, err := c.CallToolTask(ctx, "rs__sleep", map[string]any{"ms": 600000})
	if err != nil || task == nil {
		t.Fatalf("CallToolTask: task %v, err %v", task, err)
	}
	// A plain call in flight: its first progress says it reached the
	// backend.
	inFlight := make(chan struct{})
	var once sync.Once
	type answer struct {
		r   *mcp.CallToolResult
		err error
	}
	answered := make(chan answer, 1)
	go func() {
		r, err := c.CallTool(ctx, "rs__sleep", map[string]any{"ms": 2000},
			client.WithProgress(func(client.Progress) { once.Do(func() { close(inFlight) }) }))
		answered <- answer{r, err}
	}()
	select {
	case <-inFlight:
	case a := <-answered:
		t.Fatalf("the call ended before it was seen in flight: %v, %v", a.r, a.err)
	case <-time.After(callTimeout):
		t.Fatalf("no progress from the call:\n%s", tail(gw.stderr.String(), 3000))
	}
	if code := gw.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("exit status %d after SIGTERM, want 0:\n%s", code, tail(gw.stderr.String(), 3000))
	}
	select {
	case a := <-answered:
		if a.err != nil || a.r == nil || a.r.IsError || len(a.r.Content) == 0 || a.r.Content[0].Text != "slept" {
			t.Errorf("the call in flight at SIGTERM: %+v, %v; want its answer, slept", a.r, a.err)
		}
	case <-time.After(callTimeout):
		t.Errorf("the call in flight at SIGTERM was never answered")
	}

	log := gw.stderr.String()
	root := regexp.MustCompile(`msg="child (started|exited)" supervisor=(mcprt-\d+) child=(\w+)`)
	var started, exited []string
	for _, m := range root.FindAllStringSubmatch(log, -1) {
		if m[1] == "started" {
			started = append(started, m[3])
		} else {
			exited = append(exited, m[3])
		}
	}
	t.Logf("the root started %v and stopped %v", started, exited)
	// The root's children only: the other supervisors are named after
	// their place ("mcprt-1/…", "gateway/…", "tasks/…").
	// endpoints: the gateway's virtual endpoints (<path>/NAME), which
	// drain beside http and are stopped before the backends close.
	if got := strings.Join(started, ","); got != "gateway,endpoints,tasks,http" {
		t.Errorf("the root started %q, want gateway,endpoints,tasks,http:\n%s", got, tail(log, 4000))
	}
	if got := strings.Join(exited, ","); got != "http,tasks,endpoints,gateway" {
		t.Errorf("the root stopped %q, want http,tasks,endpoints,gateway (reverse start order):\n%s", got, tail(log, 4000))
	}
	// The endpoint drained before its tree went on.
	if d, h := strings.Index(log, "streamhttp: drained"), strings.Index(log, `child=http reason=`); d < 0 || h < 0 || d > h {
		t.Errorf("the endpoint's drain (at %d) does not come before its exit (at %d)", d, h)
	}
}
