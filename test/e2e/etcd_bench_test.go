//go:build linux

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcprt/mcprt/session/client"
	"github.com/mcprt/mcprt/test/etcdtest"
)

// BenchmarkTaskThroughput is tasks (a 1 ms sleep made as a task and its
// result awaited, 2025-11-25: tasks/result wakes when it ends) and plain
// calls (echo) per second, and the mean wait for one (create to
// completed for a task), over Streamable HTTP, 16 clients each with its
// own legacy session in a closed loop, against one `mcprt serve -http`
// with no store, with the journal (-tasks-dir) and with etcd (one
// member), and against three etcd replicas behind nginx (sessions spread
// over them by their tag). Every process shares this machine's cores, so
// three replicas measure what the store and the proxy cost, not what
// three machines would add. Run:
//
//	go test -run '^$' -bench TaskThroughput -benchtime 5s ./test/e2e
func BenchmarkTaskThroughput(b *testing.B) {
	nginxPath(b)
	cl := etcdtest.Start(b, 1)
	key := nginxKeyFile(b, "bench")
	etcdArgs := func(tag string) []string {
		return []string{"-http-session-tag", tag, "-http-state-key-file", key,
			"-tasks-etcd", strings.Join(cl.Endpoints(), ","), "-tasks-etcd-prefix", "bench-" + tag + "/"}
	}
	setups := []struct {
		name string
		url  func(b *testing.B) string
	}{
		{"memory/1", func(b *testing.B) string {
			return "http://" + nginxStartReplica(b, "m", "-tasks").addr + "/mcp"
		}},
		{"journal/1", func(b *testing.B) string {
			return "http://" + nginxStartReplica(b, "j", "-tasks-dir", b.TempDir()).addr + "/mcp"
		}},
		{"etcd/1", func(b *testing.B) string {
			return "http://" + nginxStartReplica(b, "a", etcdArgs("one")...).addr + "/mcp"
		}},
		{"etcd/3", func(b *testing.B) string {
			var rs []*nginxReplica
			for _, tag := range []string{"a", "b", "c"} {
				args := etcdArgs(tag)
				args[len(args)-1] = "bench-three/" // one store shared by the three
				rs = append(rs, nginxStartReplica(b, tag, args...))
			}
			return nginxStart(b, "nginx-etcd.conf", rs...).url
		}},
	}
	for _, s := range setups {
		b.Run(s.name, func(b *testing.B) {
			url := s.url(b)
			store := ""
			if strings.HasPrefix(s.name, "etcd") {
				store = cl.Endpoints()[0]
			}
			for _, kind := range []string{"task", "plain"} {
				b.Run(kind, func(b *testing.B) { benchClosedLoop(b, url, kind == "task", store) })
			}
		})
	}
}

// benchClosedLoop runs b.N calls over 16 legacy sessions (8 per core on
// this 2-core machine), each waiting for its answer before the next. With
// etcd (store: a member's client URL) it also reports what a call cost
// the store, from etcd's own counters: writes (transactions), reads
// (ranges) and watch events sent (one per change per replica watching).
func benchClosedLoop(b *testing.B, url string, asTask bool, store string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var before map[string]float64
	if store != "" {
		before = etcdCounters(b, store)
	}
	var waited atomic.Int64 // each call's wait, summed: the mean latency
	b.SetParallelism(8)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		c, err := client.ConnectURL(ctx, url, &client.Options{Era: client.EraLegacy, Version: "2025-11-25"})
		if err != nil {
			b.Error(err)
			return
		}
		defer c.Close()
		for pb.Next() {
			t0 := time.Now()
			if err := benchCall(ctx, c, asTask); err != nil {
				b.Error(err)
				return
			}
			waited.Add(int64(time.Since(t0)))
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
	b.ReportMetric(float64(waited.Load())/float64(b.N)/1e6, "ms/call")
	if store != "" {
		after := etcdCounters(b, store)
		for _, c := range etcdCounted {
			b.ReportMetric((after[c.metric]-before[c.metric])/float64(b.N), c.unit)
		}
	}
}

// etcdCounted are the etcd counters a call's cost is read from.
var etcdCounted = []struct{ metric, unit string }{
	{"etcd_mvcc_txn_total", "txn/op"},
	{"etcd_mvcc_range_total", "range/op"},
	{"etcd_debugging_mvcc_events_total", "events/op"},
}

// etcdCounters reads etcd's Prometheus counters at a member's /metrics.
func etcdCounters(b *testing.B, member string) map[string]float64 {
	resp, err := http.Get(member + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	m := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if v, err := strconv.ParseFloat(value, 64); ok && err == nil {
			m[name] = v
		}
	}
	return m
}

func benchCall(ctx context.Context, c *client.Client, asTask bool) error {
	if !asTask {
		res, err := c.CallTool(ctx, "echo", map[string]any{"text": "hi"})
		if err != nil || res.IsError {
			return fmt.Errorf("echo: %v %v", res, err)
		}
		return nil
	}
	task, _, err := c.CallToolTask(ctx, "sleep", map[string]any{"ms": 1})
	if err != nil || task == nil {
		return fmt.Errorf("sleep as a task: %v %v", task, err)
	}
	if _, err := c.TaskResult(ctx, task.ID); err != nil {
		return fmt.Errorf("tasks/result %s: %w", task.ID, err)
	}
	return nil
}
