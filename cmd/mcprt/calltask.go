package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/mcprt/mcprt/runtime"
	"github.com/mcprt/mcprt/session/client"
)

// cancelWait bounds the tasks/cancel that Ctrl-C sends: the user wants
// out, and a server that does not answer must not keep them.
const cancelWait = 5 * time.Second

// callTask runs `mcprt call -task`: the call is asked to run as a task,
// whose status is shown on stderr until it ends. When the user interrupts
// (cv.ctx ends), the task is cancelled before the error is returned, so
// that nothing runs on for nobody.
// started says whether the server made a task of the call.
func (cv *clientRun) callTask(tool string, args any, progress client.CallOption) (raw json.RawMessage, started bool, err error) {
	opts := []client.CallOption{progress}
	if cv.taskTTL > 0 {
		opts = append(opts, client.WithTaskTTL(cv.taskTTL))
	}
	task, raw, err := cv.c.CallToolTask(cv.ctx, tool, args, opts...)
	if err != nil {
		return nil, false, err
	}
	if task == nil {
		fmt.Fprintf(cv.stderr, "mcprt call: the server answered at once, without a task (%s)\n", whyNoTask(cv.c, tool))
		return raw, false, nil
	}
	fmt.Fprintf(cv.stderr, "mcprt call: task %s started (mcprt task result %s, with the same server, comes back to it)\n", task.ID, task.ID)
	raw, err = cv.awaitTask(task)
	if err != nil && cv.ctx.Err() != nil {
		cv.stderr.setStatus("")
		ctx, cancel := context.WithTimeout(context.Background(), cancelWait)
		defer cancel()
		if _, cerr := cv.c.CancelTask(ctx, task.ID); cerr != nil {
			fmt.Fprintf(cv.stderr, "mcprt call: cancelling task %s: %v\n", task.ID, cerr)
		} else {
			fmt.Fprintf(cv.stderr, "mcprt call: task %s cancelled\n", task.ID)
		}
		return nil, true, fmt.Errorf("task %s: %w", task.ID, context.Canceled)
	}
	return raw, true, err
}

// showTask shows one status of the task: a line each on a pipe, the
// status line on a terminal.
func (cv *clientRun) showTask(t client.Task, keep bool) {
	line := fmt.Sprintf("task %s %s", t.ID, t.Status)
	if t.StatusMessage != "" {
		line += ": " + t.StatusMessage
	}
	if cv.stderr.tty && !keep && !t.Status.Terminal() {
		cv.stderr.setStatus("mcprt " + cv.verb + ": " + line)
		return
	}
	cv.stderr.setStatus("")
	fmt.Fprintf(cv.stderr, "mcprt %s: %s\n", cv.verb, line)
}

// whyNoTask says, for the note on a call answered without a task, what
// decided it.
func whyNoTask(c *client.Client, tool string) string {
	if c.Era() == client.EraModern {
		return "a 2026-07-28 server decides per call"
	}
	tools, _ := c.CachedTools()
	for _, t := range tools {
		if t.Name == tool {
			if c.CanTask(t) {
				return "the server did not make one"
			}
			if _, ok := c.Capabilities()["tasks"]; !ok {
				return "the server does not declare tasks"
			}
			return fmt.Sprintf("the tool's taskSupport is %s", t.TaskSupport())
		}
	}
	return "the server does not list the tool"
}

// awaitTask waits for task to end, showing its statuses, and returns what
// its tools/call would have. A server that goes away meanwhile (killed,
// restarted: the task may well outlive it, kept in its -tasks-dir) is
// not the task's end: the session is opened again, with backoff, until
// the bound of -task-reconnect, and the task polled by its id on the new
// one.
func (cv *clientRun) awaitTask(task *client.Task) (json.RawMessage, error) {
	created := time.Now()
	// The first status is a line of its own, also on a terminal: it has
	// the task's id.
	first := true
	show := func(t client.Task) {
		cv.showTask(t, first)
		first = false
	}
	for {
		raw, err := cv.c.AwaitTask(cv.ctx, task, show)
		if err == nil || cv.ctx.Err() != nil || !lostServer(err, cv.c.PID() == 0) {
			return raw, err
		}
		until, ok := cv.reconnectUntil(task, created)
		if !ok {
			return nil, fmt.Errorf("task %s: %w (-task-reconnect is negative: not connecting again)", task.ID, err)
		}
		cv.stderr.setStatus("")
		fmt.Fprintf(cv.stderr, "mcprt %s: lost the server while task %s runs (%v); connecting again for %v (until %s, the task's ttl)\n",
			cv.verb, task.ID, err, time.Until(until).Round(time.Second), until.Format("15:04:05 MST"))
		for {
			if rerr := cv.reconnect(until); rerr != nil {
				return nil, fmt.Errorf("task %s: the server did not come back by %s: %w", task.ID, until.Format("15:04:05 MST"), rerr)
			}
			t, gerr := cv.c.GetTask(cv.ctx, task.ID)
			if gerr == nil {
				fmt.Fprintf(cv.stderr, "mcprt %s: connected again; polling task %s\n", cv.verb, task.ID)
				task = t
				// The new session's first status is shown as a
				// line, whatever it is: the reader wants to know
				// what became of the task.
				first = true
				break
			}
			var re *client.RPCError
			if errors.As(gerr, &re) && cv.c.Era() != client.EraModern && cv.c.PID() == 0 {
				// Over HTTP a 2025-11-25 task belongs to the session
				// that made it, and a restarted server knows none.
				return nil, fmt.Errorf("%w (a 2025-11-25 task over HTTP belongs to the session that made it, which the restarted server does not know: -era modern follows a task across restarts)", gerr)
			}
			if cv.ctx.Err() != nil || !lostServer(gerr, cv.c.PID() == 0) {
				return nil, gerr
			}
		}
	}
}

// reconnectUntil is when a poller that lost its server gives up: after
// -task-reconnect, or else when the task's ttl (from its creation, as
// this client saw it) ends, or 10 minutes for a task without one. false
// when -task-reconnect says not to connect again.
func (cv *clientRun) reconnectUntil(task *client.Task, created time.Time) (time.Time, bool) {
	switch {
	case cv.reconnectFor < 0:
		return time.Time{}, false
	case cv.reconnectFor > 0:
		return time.Now().Add(cv.reconnectFor), true
	case task.TTL > 0:
		return created.Add(task.TTL), true
	}
	return time.Now().Add(defaultReconnect), true
}

// defaultReconnect bounds the reconnecting of a poller whose task has no
// ttl: long enough for a server to be restarted by hand or by a
// supervisor, short enough that a server gone for good is given up.
const defaultReconnect = 10 * time.Minute

// Reconnect backoff: the first retry comes soon (a supervised server is
// back within a second), later ones every few seconds.
const (
	reconnectFirst = 100 * time.Millisecond
	reconnectMax   = 3 * time.Second
)

// reconnect closes the session that failed and opens another with the same
// server (over stdio: starting its command again), retrying with backoff
// until it succeeds or until passes.
func (cv *clientRun) reconnect(until time.Time) error {
	_ = cv.c.Close() // its process has exited, or its session is void
	wait := reconnectFirst
	for {
		ctx, cancel := context.WithDeadline(cv.ctx, until)
		c, err := cv.connect(ctx)
		cancel()
		if err == nil {
			cv.setup(c)
			cv.c = c
			return nil
		}
		if cv.ctx.Err() != nil {
			return context.Cause(cv.ctx)
		}
		if !lostServer(err, true) {
			// The server answers, and refuses: no retry mends that.
			return err
		}
		if time.Now().Add(wait).After(until) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-cv.ctx.Done():
			t.Stop()
			return context.Cause(cv.ctx)
		case <-t.C:
		}
		wait = min(wait*2, reconnectMax)
	}
}

// lostServer tells an error of the connection from an answer: the server
// process exited, its HTTP endpoint refused or dropped the connection, its
// session is gone (it restarted), a proxy before it answered 502-504, or,
// over HTTP, a poll went unanswered. A JSON-RPC error is the server's
// answer, and is not; nor is a stdio server's slow poll: connecting again
// would kill the process that runs the task.
func lostServer(err error, overHTTP bool) bool {
	var ee *client.ExitError
	var he *client.HTTPError
	var ne net.Error
	var re *client.RPCError
	switch {
	case errors.As(err, &re):
		return false
	case errors.As(err, &ee), errors.Is(err, client.ErrSessionEnded):
		return true
	case errors.As(err, &ne), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, context.DeadlineExceeded):
		return overHTTP
	case errors.As(err, &he):
		return he.Status == 502 || he.Status == 503 || he.Status == 504
	}
	return false
}

// taskOps are the operations of mcprt task, and whether each takes an id.
var taskOps = map[string]bool{"get": true, "result": true, "cancel": true, "list": false}

func checkTask(args []string) string {
	withID, ok := taskOps[args[0]]
	switch {
	case !ok:
		return fmt.Sprintf("unknown operation %q: want get ID, result ID, cancel ID or list", args[0])
	case withID && len(args) != 2:
		return fmt.Sprintf("%s wants the task's id (mcprt call -task prints it)", args[0])
	case !withID && len(args) != 1:
		return fmt.Sprintf("%s takes no argument, got %q", args[0], args[1:])
	}
	return ""
}

// taskJSON is a task as -json prints it, in the names of the wire.
func taskJSON(t client.Task) map[string]any {
	m := map[string]any{"taskId": t.ID, "status": t.Status}
	if t.StatusMessage != "" {
		m["statusMessage"] = t.StatusMessage
	}
	if t.CreatedAt != "" {
		m["createdAt"] = t.CreatedAt
	}
	if t.LastUpdatedAt != "" {
		m["lastUpdatedAt"] = t.LastUpdatedAt
	}
	switch {
	case t.TTL > 0:
		m["ttlMs"] = t.TTL.Milliseconds()
	case t.TTL < 0:
		m["ttlMs"] = nil
	}
	if t.Result != nil {
		m["result"] = t.Result
	}
	if t.Error != nil {
		m["error"] = t.Error
	}
	return m
}

// taskLine is a task in one line: id, status, message.
func taskLine(t client.Task) string {
	line := fmt.Sprintf("%s %s", t.ID, t.Status)
	if t.StatusMessage != "" {
		line += ": " + t.StatusMessage
	}
	return line
}

func clientTask(cv *clientRun, args []string) int {
	switch args[0] {
	case "get":
		t, err := cv.c.GetTask(cv.ctx, args[1])
		if err != nil {
			return cv.fail(err)
		}
		if cv.json {
			return cv.printJSON(taskJSON(*t))
		}
		fmt.Fprintln(cv.stdout, taskLine(*t))
	case "result":
		t, err := cv.c.GetTask(cv.ctx, args[1])
		if err != nil {
			return cv.fail(err)
		}
		raw, err := cv.awaitTask(t)
		cv.stderr.setStatus("")
		if err != nil {
			return cv.fail(err)
		}
		return cv.printCallResult("task "+t.ID, raw)
	case "cancel":
		t, err := cv.c.CancelTask(cv.ctx, args[1])
		if err != nil {
			return cv.fail(err)
		}
		if t == nil {
			// 2026-07-28 acknowledges only: the task may still end
			// otherwise.
			fmt.Fprintf(cv.stdout, "%s cancel requested\n", args[1])
			return runtime.ExitOK
		}
		if cv.json {
			return cv.printJSON(taskJSON(*t))
		}
		fmt.Fprintln(cv.stdout, taskLine(*t))
	case "list":
		if cv.c.Era() == client.EraModern {
			return cv.fail(errors.New("the server speaks 2026-07-28, which has no tasks/list: -era legacy asks a server that speaks both for its 2025-11-25 list"))
		}
		ts, err := cv.c.ListTasks(cv.ctx)
		if err != nil {
			return cv.fail(err)
		}
		if cv.json {
			out := make([]map[string]any, 0, len(ts))
			for _, t := range ts {
				out = append(out, taskJSON(t))
			}
			return cv.printJSON(map[string]any{"tasks": out})
		}
		for _, t := range ts {
			fmt.Fprintln(cv.stdout, taskLine(t))
		}
		if len(ts) == 0 {
			fmt.Fprintln(cv.stderr, "mcprt task: the server lists no tasks")
		}
	}
	return runtime.ExitOK
}
