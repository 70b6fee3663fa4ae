package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/tasks"
	"github.com/mcprt/mcprt/session/client"
	"github.com/mcprt/mcprt/session/jsonrpc"
)

// Tasks through the gateway are the gateway's own: its server serves them
// (handlers.Server.ServeTasks, with a manager the gateway's runner
// starts), and a task's Work is the tool's handler, which, seeing it runs
// in a task, asks the backend for a task of its own and awaits it
// (taskCall). The client only ever sees the gateway's task ids (bound to
// the client's session or caller, as every server's are), never a
// backend's: no id is mapped, so none can be guessed or shown to another
// client, and each side speaks its own revision, which bridges the eras
// (a 2026-07-28 client polling a task a 2025-11-25 backend runs, and the
// reverse).

// taskCall runs a tools/call the gateway's server made a task of: as a
// task at the backend when the backend's session lets the tool run as one
// (client.CallToolTask; else a plain call, which the gateway's task waits
// for without the backend's Timeout), awaited to its end. Cancelling
// the gateway's task cancels the backend's. The backend's progress goes on
// to the client where its revision allows (2025-11-25 tasks).
func (b *backend) taskCall(ctx context.Context, req *handlers.Request, name string, args json.RawMessage) (*handlers.CallToolResult, error) {
	w := &startWait{parent: ctx, d: b.cfg.Timeout}
	cl, err := b.acquire(w)
	w.stop()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return toolError(err)
	}
	c := &call{req: req, ctx: ctx, cancel: func() {}}
	defer b.track(c)()
	// The call itself is bounded by the task's life, not the backend's
	// Timeout: a backend that makes no task of it answers when done.
	// Each poll of a backend's task is bounded as any request.
	callOpts := []client.CallOption{noTimeout}
	pollOpts := []client.CallOption{client.WithTimeout(b.cfg.Timeout)}
	if fn := b.progress(req); fn != nil {
		callOpts = append(callOpts, client.WithProgress(fn))
	}
	var params any
	if len(args) > 0 {
		params = args
	}
	// The gateway's task may be cancelled while the backend makes its
	// own: the call is let finish (for up to the backend's Timeout) so
	// that the backend's task, once its id is known, is cancelled too,
	// rather than left running for no one.
	callCtx, stopCall := context.WithCancel(context.WithoutCancel(ctx))
	defer stopCall()
	var grace *time.Timer
	var graceMu sync.Mutex
	defer context.AfterFunc(ctx, func() {
		graceMu.Lock()
		grace = time.AfterFunc(b.cfg.Timeout, stopCall)
		graceMu.Unlock()
	})()
	defer func() {
		graceMu.Lock()
		if grace != nil {
			grace.Stop()
		}
		graceMu.Unlock()
	}()
	task, raw, err := cl.CallToolTask(&callContext{callCtx, c}, name, params, callOpts...)
	switch {
	case task != nil && ctx.Err() != nil:
		b.cancelTask(ctx, cl, task.ID)
		return nil, ctx.Err()
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case err == nil && task == nil:
		return b.toolAnswer(raw) // the backend made no task: its answer
	case err != nil:
		return toolError(b.forwardError("tools/call", err, ctx, nil, cl, c))
	}
	raw, err = cl.AwaitTask(&callContext{ctx, c}, task, nil, pollOpts...)
	var re *client.RPCError
	switch {
	case err == nil:
		return b.toolAnswer(raw)
	case ctx.Err() != nil:
		// The gateway's task was cancelled, or the gateway is stopping:
		// the backend's ends too, rather than run on for no one.
		b.cancelTask(ctx, cl, task.ID)
		return nil, ctx.Err()
	case errors.Is(err, client.ErrTaskCancelled):
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: fmt.Sprintf("backend %q cancelled its task for the call", b.name)}
	case errors.As(err, &re):
		return nil, re.Err // the backend's task failed with this error
	}
	return toolError(b.forwardError("tools/call", err, ctx, nil, cl, c))
}

// cancelTask cancels the backend's task id, for the gateway's task whose
// context ctx has ended.
func (b *backend) cancelTask(ctx context.Context, cl *client.Client, id string) {
	cancelCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.cfg.Timeout)
	defer cancel()
	if _, err := cl.CancelTask(cancelCtx, id); err != nil {
		b.g.log.Debug("gateway: cancelling a backend's task", "backend", b.name, "task", id, "err", err)
	}
}

// inTask reports whether ctx is a task's Work (the gateway's server made
// a task of the call).
func inTask(ctx context.Context) bool { return tasks.IDFrom(ctx) != "" }

// anyTask is a tool's execution with taskSupport "optional" unless it is
// "required" already (Options.TaskAnyTool); the rest of it is kept.
func anyTask(execution json.RawMessage) json.RawMessage {
	e := map[string]json.RawMessage{}
	if len(execution) > 0 && json.Unmarshal(execution, &e) != nil {
		return execution // not an object: left as the backend gave it
	}
	if e == nil {
		e = map[string]json.RawMessage{}
	}
	switch string(e["taskSupport"]) {
	case `"optional"`, `"required"`:
		return execution
	}
	e["taskSupport"] = json.RawMessage(`"optional"`)
	out, err := json.Marshal(e)
	if err != nil {
		return execution
	}
	return out
}
