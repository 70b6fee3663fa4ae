package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/runtime"
	"github.com/mcprt/mcprt/runtime/fault"
	"github.com/mcprt/mcprt/session/client"
)

// The task campaign of mcprt chaos (-tasks N): tasks started, polled,
// some cancelled, and the server killed (SIGKILL) and started again in
// the middle of them, after which every task is asked for again. What it
// checks is what tasks promise: each task ends in exactly one terminal
// state (once completed, failed or cancelled, always that, and a
// completed task's result always the same bytes), a cancelled task ends
// (a 2025-11-25 server answers tasks/cancel with the task cancelled), and
// nothing hangs. A server with a durable store (its command has
// -tasks-dir, or -task-durable) must still know every task after a
// restart, those that were running ended (failed, saying why) or, for a
// resumable tool's (the reference sleep), run again to their end; any other
// server may forget them, which is counted ("lost"), not a failure.
//
// It speaks through session/client's task API, over stdio or (-http) over
// Streamable HTTP to a server the command starts, one client at a time: the plan (which task is cancelled at which poll, after which
// task the server is killed) comes from -seed.

// taskCampaign is one task campaign.
type taskCampaign struct {
	command     []string
	http        bool // command starts a Streamable HTTP server (chaos -http)
	opts        client.Options
	seed        uint64
	tasks       int     // how many to start
	concurrency int     // running at once, at most
	cancelRate  float64 // share of tasks cancelled while they run
	kills       int     // times the server is killed and started again
	durable     bool    // the server must keep its tasks across a restart
	tool        string  // "" finds one
	args        json.RawMessage
	hang        time.Duration // bound on the campaign: a hang is a failure
	out         io.Writer
	url         string      // servers someone else runs (-url): nothing killed here
	header      http.Header // -header, with url

	server *fault.HTTPServer // with http, the one running
}

// campaignTask is what the campaign knows of one task.
type campaignTask struct {
	n        int
	id       string
	cancelAt int // the poll at which it is cancelled; -1 never
	polls    int
	history  []client.TaskStatus // each status seen, in order, repeats collapsed
	terminal client.TaskStatus   // the first terminal status seen
	result   []byte              // a completed task's result, as first fetched
	lost     bool                // a restarted server no longer knew it
	plain    bool                // answered at once, without a task
	cancels  int
}

// taskReport counts what the campaign saw.
type taskReport struct {
	started, plain, lost, kills, cancelsSent int
	reconnects, resent                       int // with -url: sessions begun again, requests sent again
	ends                                     map[client.TaskStatus]int
	violations                               []string
}

func (r *taskReport) violate(format string, a ...any) {
	r.violations = append(r.violations, fmt.Sprintf(format, a...))
}

func (r *taskReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "tasks: %d started (%d answered at once), %d cancels sent, %d kills and restarts\n", r.started, r.plain, r.cancelsSent, r.kills)
	if r.reconnects+r.resent > 0 {
		fmt.Fprintf(&b, "through the servers' loss: %d requests sent again, %d new sessions\n", r.resent, r.reconnects)
	}
	fmt.Fprintf(&b, "ends: %d completed, %d failed, %d cancelled; %d lost (forgotten by a restarted server that keeps no tasks)\n",
		r.ends[client.TaskCompleted], r.ends[client.TaskFailed], r.ends[client.TaskCancelled], r.lost)
	if len(r.violations) == 0 {
		b.WriteString("PASS: every task ended in exactly one terminal state\n")
		return b.String()
	}
	fmt.Fprintf(&b, "FAIL: %d violations\n", len(r.violations))
	for _, v := range r.violations {
		fmt.Fprintf(&b, "  %s\n", v)
	}
	return b.String()
}

// taskTool is a tool a campaign calls, and the arguments of its n-th call
// (nil args: the -task-args of a named tool).
type taskTool struct {
	name string
	args func(n int, rng *rand.Rand) map[string]any
}

// taskTools are the tools a campaign uses when none is named, with their
// arguments: the conformance fixture's slow_compute, the reference
// server's sleep (mcprt serve), then server-everything's
// simulate-research-query.
var taskTools = []taskTool{
	{"slow_compute", func(n int, rng *rand.Rand) map[string]any {
		return map[string]any{"seconds": 1 + rng.IntN(2), "label": fmt.Sprintf("chaos-%d", n)}
	}},
	{"sleep", func(_ int, rng *rand.Rand) map[string]any {
		return map[string]any{"ms": 1000 + rng.IntN(1000)}
	}},
	{"simulate-research-query", func(n int, _ *rand.Rand) map[string]any {
		return map[string]any{"topic": fmt.Sprintf("chaos %d", n)}
	}},
}

func (tc *taskCampaign) run(ctx context.Context) (*taskReport, error) {
	ctx, cancel := context.WithTimeout(ctx, tc.hang)
	defer cancel()
	rng := rand.New(rand.NewPCG(tc.seed, tc.seed^0x7461736b73))
	rep := &taskReport{ends: map[client.TaskStatus]int{}}

	// The plan: each task's cancel point, and after which started task
	// each kill comes (spread over the campaign, never before the first).
	all := make([]*campaignTask, tc.tasks)
	for i := range all {
		all[i] = &campaignTask{n: i + 1, cancelAt: -1}
		if rng.Float64() < tc.cancelRate {
			all[i].cancelAt = rng.IntN(2)
		}
	}
	var killAfter []int
	for k := range tc.kills {
		killAfter = append(killAfter, 1+(k+1)*tc.tasks/(tc.kills+1)+rng.IntN(2))
	}

	c, err := tc.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer func() {
		c.Close()
		if tc.server != nil {
			tc.server.Stop(5 * time.Second)
		}
	}()
	tool, args, err := tc.pickTool(ctx, c)
	if err != nil {
		return nil, err
	}

	next := 0         // the next task to start
	endedAtStart := 0 // tasks ended when the server was last started
	for {
		if err := ctx.Err(); err != nil {
			rep.violate("the campaign did not finish within %v: %v", tc.hang, err)
			break
		}
		// Start tasks up to the concurrency bound.
		running := 0
		for _, t := range all[:next] {
			if t.id != "" && t.terminal == "" && !t.lost {
				running++
			}
		}
		for running < tc.concurrency && next < len(all) {
			t := all[next]
			next++
			rep.started++
			var a any = args
			if args == nil {
				a = tool.args(t.n, rng)
			}
			var task *client.Task
			err := tc.send(ctx, rep, &c, func(c *client.Client) (err error) {
				task, _, err = c.CallToolTask(ctx, tool.name, a)
				return err
			})
			if err != nil {
				return rep, fmt.Errorf("starting task %d: %w", t.n, err)
			}
			if task == nil {
				t.plain = true
				rep.plain++
				continue
			}
			t.id = task.ID
			t.observe(rep, task)
			running++
		}
		// A kill planned for now: the server dies with tasks running
		// and, since the last start, some ended (a restart must keep
		// both kinds apart), and a new one is started on the same
		// command.
		ended := 0
		for _, t := range all[:next] {
			if t.terminal != "" {
				ended++
			}
		}
		if len(killAfter) > 0 && next >= killAfter[0] && running > 0 && ended > endedAtStart {
			killAfter = killAfter[1:]
			endedAtStart = ended
			rep.kills++
			if c, err = tc.restart(ctx, c); err != nil {
				return rep, err
			}
			tc.recheck(ctx, &c, all[:next], rep)
			continue
		}
		if running == 0 && next == len(all) {
			break
		}
		// One poll of each running task.
		wait := client.DefaultTaskPoll
		for _, t := range all[:next] {
			if t.id == "" || t.terminal != "" || t.lost {
				continue
			}
			if t.polls == t.cancelAt {
				tc.cancel(ctx, &c, t, rep)
			}
			t.polls++
			var task *client.Task
			err := tc.send(ctx, rep, &c, func(c *client.Client) (err error) {
				task, err = c.GetTask(ctx, t.id)
				return err
			})
			if err != nil {
				return rep, fmt.Errorf("polling task %d (%s): %w", t.n, t.id, err)
			}
			t.observe(rep, task)
			if task.PollInterval > 0 {
				wait = min(wait, task.PollInterval)
			}
			if t.terminal == client.TaskCompleted && t.result == nil {
				t.result = tc.result(ctx, &c, t, task, rep)
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
	}
	// Everything is asked for once more: a terminal task stays as it was.
	tc.recheck(ctx, &c, all[:next], rep)
	for _, t := range all[:next] {
		switch {
		case t.plain:
		case t.terminal != "": // also when a restart forgot it since
			rep.ends[t.terminal]++
		case t.lost:
			rep.lost++
		default:
			rep.violate("task %d (%s) never ended: %v", t.n, t.id, t.history)
		}
	}
	return rep, nil
}

// observe records one state of t, checking it against what came before.
func (t *campaignTask) observe(rep *taskReport, task *client.Task) {
	if task.ID != t.id {
		rep.violate("task %d: asked for %s, the server answered %s", t.n, t.id, task.ID)
	}
	if n := len(t.history); n == 0 || t.history[n-1] != task.Status {
		t.history = append(t.history, task.Status)
	}
	switch {
	case t.terminal != "" && task.Status != t.terminal:
		rep.violate("task %d (%s) ended %s, then was %s: %v", t.n, t.id, t.terminal, task.Status, t.history)
	case t.terminal == "" && task.Status.Terminal():
		t.terminal = task.Status
	}
	if t.terminal == client.TaskCompleted && task.Result != nil && t.result != nil && !bytes.Equal(canonical(task.Result), t.result) {
		rep.violate("task %d (%s): its result changed: %s, then %s", t.n, t.id, t.result, task.Result)
	}
}

// canonical is raw re-encoded, so that results compare by value (key
// order and spacing may differ after a restart).
func canonical(raw json.RawMessage) []byte {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return raw
	}
	b, _ := json.Marshal(v)
	return b
}

// result fetches a completed task's result: inlined in 2026-07-28, from
// tasks/result in 2025-11-25.
func (tc *taskCampaign) result(ctx context.Context, c **client.Client, t *campaignTask, task *client.Task, rep *taskReport) []byte {
	if (*c).Era() == client.EraModern {
		if task.Result == nil {
			rep.violate("task %d (%s) completed without a result", t.n, t.id)
		}
		return canonical(task.Result)
	}
	var raw json.RawMessage
	err := tc.send(ctx, rep, c, func(c *client.Client) (err error) {
		raw, err = c.TaskResult(ctx, t.id)
		return err
	})
	if err != nil {
		rep.violate("task %d (%s) completed, but tasks/result failed: %v", t.n, t.id, err)
		return nil
	}
	return canonical(withoutMeta(raw))
}

// withoutMeta drops a result's _meta (the related-task key, which a
// restarted server may word differently) before results are compared.
func withoutMeta(raw json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	delete(m, "_meta")
	b, _ := json.Marshal(m)
	return b
}

// cancel sends tasks/cancel for t; a 2025-11-25 server must answer the
// task cancelled (or refuse one that had already ended).
func (tc *taskCampaign) cancel(ctx context.Context, c **client.Client, t *campaignTask, rep *taskReport) {
	rep.cancelsSent++
	t.cancels++
	var task *client.Task
	err := tc.send(ctx, rep, c, func(c *client.Client) (err error) {
		task, err = c.CancelTask(ctx, t.id)
		return err
	})
	var re *client.RPCError
	switch {
	case err != nil && errors.As(err, &re) && re.Err.Code == -32602:
		// Already terminal (2025-11-25 refuses those): the next poll
		// says how it ended.
	case err != nil:
		rep.violate("task %d (%s): tasks/cancel: %v", t.n, t.id, err)
	case task != nil:
		if task.Status != client.TaskCancelled {
			rep.violate("task %d (%s): tasks/cancel answered status %s, want cancelled", t.n, t.id, task.Status)
		}
		t.observe(rep, task)
	}
}

// recheck asks for every task again (after a restart, and at the end).
func (tc *taskCampaign) recheck(ctx context.Context, c **client.Client, ts []*campaignTask, rep *taskReport) {
	for _, t := range ts {
		if t.id == "" || t.lost {
			continue
		}
		var task *client.Task
		err := tc.send(ctx, rep, c, func(c *client.Client) (err error) {
			task, err = c.GetTask(ctx, t.id)
			return err
		})
		var re *client.RPCError
		switch {
		case err != nil && errors.As(err, &re) && re.Err.Code == -32602 && !tc.durable:
			t.lost = true
		case err != nil:
			rep.violate("task %d (%s): tasks/get after %v: %v", t.n, t.id, t.history, err)
		default:
			t.observe(rep, task)
			if t.terminal == client.TaskCompleted {
				if r := tc.result(ctx, c, t, task, rep); t.result == nil {
					t.result = r
				} else if r != nil && !bytes.Equal(r, t.result) {
					rep.violate("task %d (%s): its result changed: %s, then %s", t.n, t.id, t.result, r)
				}
			}
		}
	}
}

func (tc *taskCampaign) connect(ctx context.Context) (*client.Client, error) {
	o := tc.opts
	if tc.url != "" {
		o.Header = tc.header
		return client.ConnectURL(ctx, tc.url, &o)
	}
	if !tc.http {
		return client.Connect(ctx, client.Command{Path: tc.command[0], Args: tc.command[1:]}, &o)
	}
	s, err := fault.StartHTTPServer(tc.command, nil, time.Minute)
	if err != nil {
		return nil, err
	}
	tc.server = s
	c, err := client.ConnectURL(ctx, s.URL, &o)
	if err != nil {
		s.Stop(5 * time.Second)
		tc.server = nil
		return nil, fmt.Errorf("%w; server output:\n%s", err, s.Output())
	}
	return c, nil
}

// send runs one request on *c. With -url, where servers are lost and
// come back while the campaign runs, a request that got no JSON-RPC
// answer (the session ended with its replica: 404; a proxy's 502; a
// refused connection) is sent again, on a new session when the old one
// ended, for up to a minute; a JSON-RPC error is an answer and is
// returned as it is. Sending a tasks/get or tasks/cancel again is
// harmless; a tools/call sent again may leave the first attempt's task
// behind, unknown to the campaign, which is the client's loss and not a
// server's fault.
func (tc *taskCampaign) send(ctx context.Context, rep *taskReport, c **client.Client, fn func(*client.Client) error) error {
	deadline := time.Now().Add(time.Minute)
	for {
		err := fn(*c)
		var re *client.RPCError
		if err == nil || tc.url == "" || errors.As(err, &re) || ctx.Err() != nil || time.Now().After(deadline) {
			return err
		}
		rep.resent++
		select {
		case <-ctx.Done():
			return err
		case <-time.After(250 * time.Millisecond):
		}
		if (*c).Err() == nil {
			continue
		}
		// The session is gone: begin another (which may fail too while
		// the servers are down; then the next round tries again).
		nc, cerr := tc.connect(ctx)
		if cerr != nil {
			continue
		}
		(*c).Close()
		*c = nc
		rep.reconnects++
	}
}

// restart kills the server (SIGKILL: no chance to save anything) and
// connects to a new one started by the same command.
func (tc *taskCampaign) restart(ctx context.Context, c *client.Client) (*client.Client, error) {
	if tc.server != nil {
		// Over HTTP the client learns of the death at its next
		// request; the process is reaped here.
		tc.server.Kill()
		tc.server = nil
		c.Close()
		fmt.Fprintln(tc.out, "mcprt chaos: killed the server; starting it again")
		return tc.connect(ctx)
	}
	if p, err := os.FindProcess(c.PID()); err == nil {
		_ = p.Kill()
	}
	<-c.Done()
	c.Close()
	fmt.Fprintf(tc.out, "mcprt chaos: killed the server (pid %d); starting it again\n", c.PID())
	return tc.connect(ctx)
}

// pickTool is the tool the campaign calls: -task-tool, or the first of
// taskTools the server lists.
func (tc *taskCampaign) pickTool(ctx context.Context, c *client.Client) (taskTool, json.RawMessage, error) {
	type tool = taskTool
	tools, err := c.ListTools(ctx)
	if err != nil {
		return tool{}, nil, err
	}
	listed := func(name string) bool {
		return slices.ContainsFunc(tools, func(t mcp.Tool) bool { return t.Name == name })
	}
	// Behind a gateway a tool is listed with its backend's prefix.
	listedAs := func(name string) (string, bool) {
		for _, t := range tools {
			if t.Name == name || strings.HasSuffix(t.Name, "__"+name) {
				return t.Name, true
			}
		}
		return "", false
	}
	if tc.tool != "" {
		if !listed(tc.tool) {
			return tool{}, nil, fmt.Errorf("the server lists no tool %q", tc.tool)
		}
		args := tc.args
		if args == nil {
			args = json.RawMessage("{}")
		}
		return tool{name: tc.tool}, args, nil
	}
	for _, t := range taskTools {
		if name, ok := listedAs(t.name); ok {
			t.name = name
			return t, nil, nil
		}
	}
	return tool{}, nil, errors.New("the server lists none of the task tools a campaign knows (slow_compute, sleep, simulate-research-query): name one with -task-tool")
}

// quietLogger keeps the client's diagnostics (a killed server's broken
// pipe) out of the report.
var quietLogger = slog.New(slog.DiscardHandler)

// chaosTasks runs `mcprt chaos -tasks N`: the flags are parsed, the
// command after --.
func chaosTasks(tc *taskCampaign, fs *flag.FlagSet, pf *protocolFlags, seed uint64, overHTTP, behind bool, taskArgs string, stderr io.Writer) int {
	tc.http = overHTTP
	if fs.NArg() == 0 && tc.url == "" {
		fmt.Fprintln(stderr, "mcprt chaos: -tasks needs a server command (over stdio, or with -http over HTTP) after --, or -url URL")
		return runtime.ExitUsage
	}
	if tc.concurrency <= 0 || tc.kills < 0 || tc.cancelRate < 0 || tc.cancelRate > 1 {
		fmt.Fprintln(stderr, "mcprt chaos: -task-concurrency must be positive, -task-kills not negative, -task-cancel within 0..1")
		return runtime.ExitUsage
	}
	if tc.tool != "" {
		if !json.Valid([]byte(taskArgs)) || !strings.HasPrefix(strings.TrimSpace(taskArgs), "{") {
			fmt.Fprintf(stderr, "mcprt chaos: -task-args %q is not a JSON object\n", taskArgs)
			return runtime.ExitUsage
		}
		tc.args = json.RawMessage(taskArgs)
	}
	tc.command = fs.Args()
	for _, a := range tc.command[min(1, len(tc.command)):] {
		// A journal or etcd (-tasks-etcd): the tasks outlive a restart.
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && (name == "tasks-dir" || name == "tasks-etcd") {
			tc.durable = true
		}
	}
	if behind {
		gw, dir, cleanup, err := behindGateway(tc.command, overHTTP)
		if err != nil {
			fmt.Fprintf(stderr, "mcprt chaos: -behind-gateway: %v\n", err)
			return runtime.ExitFailure
		}
		defer cleanup()
		if tc.durable {
			// The gateway's own tasks (which await CMD's) must outlive
			// its restarts as CMD's do.
			gw = append(gw, "-tasks-dir", filepath.Join(dir, "gateway-tasks"))
		}
		tc.command = gw
	}
	tc.seed = seed
	era, pin, err := pf.settle()
	if err != nil {
		fmt.Fprintf(stderr, "mcprt chaos: %v\n", err)
		return runtime.ExitUsage
	}
	tc.opts = client.Options{Era: era, Version: pin, Logger: quietLogger, OnStderr: func(string) {}}
	tc.hang = 10 * time.Minute
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := tc.run(ctx)
	if rep != nil {
		against := fmt.Sprintf("%q", tc.command)
		if tc.url != "" {
			against = tc.url
		}
		fmt.Fprintf(stderr, "mcprt chaos: task campaign against %s\n%s", against, rep)
	}
	if err != nil {
		fmt.Fprintf(stderr, "mcprt chaos: %v\n", err)
		return runtime.ExitFailure
	}
	if len(rep.violations) > 0 {
		return runtime.ExitFailure
	}
	return runtime.ExitOK
}
