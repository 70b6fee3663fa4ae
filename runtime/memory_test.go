package runtime

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
)

func TestMemoryPolicy(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, c := range []struct {
		name   string
		limit  int64
		getenv func(string) string
		want   memorySettings
	}{
		{"default", 0, env(), memorySettings{true, DefaultMemoryLimit, true, gcPercentUnderLimit}},
		{"GOMEMLIMIT wins over the default", 0, env("GOMEMLIMIT", "1GiB"), memorySettings{}},
		{"a limit given wins over GOMEMLIMIT", 32 << 20, env("GOMEMLIMIT", "1GiB"), memorySettings{true, 32 << 20, true, gcPercentUnderLimit}},
		{"GOGC is left to the user", 0, env("GOGC", "100"), memorySettings{setLimit: true, limit: DefaultMemoryLimit}},
		{"no limit, no change of pace", math.MaxInt64, env(), memorySettings{setLimit: true, limit: math.MaxInt64}},
		{"negative: hands off", -1, env(), memorySettings{}},
		{"negative: hands off, GOMEMLIMIT or not", -1, env("GOMEMLIMIT", "1GiB"), memorySettings{}},
	} {
		if got := memoryPolicy(c.limit, c.getenv); got != c.want {
			t.Errorf("%s: got %+v; want %+v", c.name, got, c.want)
		}
	}
}

// memoryNow reads the Go runtime's memory limit and GOGC without changing
// them.
func memoryNow() (limit int64, gcPercent int) {
	gcPercent = debug.SetGCPercent(-1)
	debug.SetGCPercent(gcPercent)
	return debug.SetMemoryLimit(-1), gcPercent
}

const memoryHelperEnv = "MCPRT_MEMORY_HELPER"

// TestServeMemoryLimit runs Serve in a child copy of the test binary (it
// takes the process's stdio): a tool reports the memory settings while the
// server runs, and the child prints them again after Serve returned.
func TestServeMemoryLimit(t *testing.T) {
	if mode := os.Getenv(memoryHelperEnv); mode != "" {
		memoryHelper(mode)
		return
	}
	const before = "limit=1099511627776 gogc=150" // what the helper sets first
	for _, c := range []struct {
		mode   string
		env    []string
		during string
	}{
		{"default", nil, fmt.Sprintf("limit=%d gogc=%d", DefaultMemoryLimit, gcPercentUnderLimit)},
		{"default", []string{"GOGC=150"}, fmt.Sprintf("limit=%d gogc=150", DefaultMemoryLimit)},
		{"32MiB", nil, fmt.Sprintf("limit=%d gogc=%d", 32<<20, gcPercentUnderLimit)},
		{"off", nil, before},
	} {
		t.Run(strings.Join(append([]string{c.mode}, c.env...), ","), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestServeMemoryLimit$", "-test.count=1")
			cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
				return strings.HasPrefix(kv, "GOGC=") || strings.HasPrefix(kv, "GOMEMLIMIT=")
			})
			cmd.Env = append(cmd.Env, memoryHelperEnv+"="+c.mode, "LOG_LEVEL=error", "GORACE=atexit_sleep_ms=0")
			cmd.Env = append(cmd.Env, c.env...)
			cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory","arguments":{}}}
`)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("helper: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
			}
			var during, after string
			sc := bufio.NewScanner(&stdout)
			for sc.Scan() {
				var resp struct {
					ID     int
					Result struct{ Content []struct{ Text string } }
				}
				if s, ok := strings.CutPrefix(sc.Text(), "after Serve: "); ok {
					after = s
				} else if json.Unmarshal(sc.Bytes(), &resp) == nil && resp.ID == 2 && len(resp.Result.Content) == 1 {
					during = resp.Result.Content[0].Text
				}
			}
			if during != c.during {
				t.Errorf("while serving: %q, want %q\nstdout:\n%s", during, c.during, stdout.String())
			}
			if after != before {
				t.Errorf("after Serve: %q, want %q (restored)\nstdout:\n%s", after, before, stdout.String())
			}
		})
	}
}

func memoryHelper(mode string) {
	debug.SetMemoryLimit(1 << 40)
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(150)
	}
	var o Options
	switch mode {
	case "32MiB":
		o.MemoryLimit = 32 << 20
	case "off":
		o.MemoryLimit = -1
	}
	report := func() string {
		limit, gc := memoryNow()
		return "limit=" + strconv.FormatInt(limit, 10) + " gogc=" + strconv.Itoa(gc)
	}
	srv := handlers.NewServer(mcp.Implementation{Name: "memory", Version: "0"}, "")
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "memory"}}, func(context.Context, *handlers.Request, json.RawMessage) (*mcp.CallToolResult, error) {
		return mcp.TextResult(report()), nil
	})
	if err := Serve(context.Background(), srv, o); ExitCode(err) != ExitOK {
		fmt.Fprintln(os.Stderr, "Serve:", err)
		os.Exit(1)
	}
	fmt.Println("after Serve: " + report())
	os.Exit(0)
}
