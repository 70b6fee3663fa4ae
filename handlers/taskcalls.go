package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/handlers/tasks"
	"github.com/mcprt/mcprt/handlers/trace"
)

// TasksOptions configures ServeTasks.
type TasksOptions struct {
	// Owner names whom a request's tasks belong to: only the same owner
	// finds them again. nil means the caller's Principal when there is a
	// caller, else "" (the task's unguessable id alone binds it).
	Owner func(ctx context.Context) string
	// Client names what a request's tasks count against, for the bounds
	// on tasks per client. nil means the caller's Principal, else the
	// address the request's connection came from (an IPv6 one by its /64),
	// else "" (stdio: one client).
	Client func(ctx context.Context) string
}

// taskServe is what ServeTasks set.
type taskServe struct {
	m      tasks.Manager
	owner  func(ctx context.Context) string
	client func(ctx context.Context) string
	stop   func() // ends the manager's status reports to this server
	// peers are the live 2025-11-25 tasks' peers, by task id: their
	// notifications/tasks/status go to the session that made them, and
	// to no other.
	peers sync.Map
	// routes are, by task id, the peers of the tasks/result requests
	// waiting (*route): the task's requests to the client and its
	// notifications go on that request's stream while there is one, as
	// 2025-11-25 suggests (a client that sees input_required calls
	// tasks/result), since a Streamable HTTP client may have no stream of
	// the session's open.
	routes sync.Map
	// progress is, by task id, the latest progress a running 2026-07-28
	// task's handler reported (a string), shown by tasks/get (see
	// modernTaskPeer).
	progress sync.Map
}

// route is where a 2025-11-25 task's messages go while a tasks/result
// waits for it.
type route struct {
	mu      sync.Mutex
	peer    Peer          // the waiting tasks/result's; nil: none
	changed chan struct{} // closed when peer changes
}

func (ts *taskServe) route(id string) *route {
	v, _ := ts.routes.LoadOrStore(id, &route{changed: make(chan struct{})})
	return v.(*route)
}

// set makes p (nil: none) the route, and tells an Ask in flight to ask
// again there.
func (r *route) set(p Peer) {
	r.mu.Lock()
	r.peer = p
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

func (r *route) current() (Peer, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.peer, r.changed
}

// taskStatus tells of a task's new status: a 2025-11-25 task's session
// with notifications/tasks/status; a 2026-07-28 task's listen streams
// that follow it with notifications/tasks (through Watch).
func (s *Server) taskStatus(ts *taskServe, t tasks.Task) {
	if t.Modern {
		raw, _ := json.Marshal(modernTask(t, ts.m.PollInterval(), "", true))
		s.changed(Change{Kind: TaskStatus, TaskID: t.ID, Task: string(raw)})
		return
	}
	p, ok := ts.peers.Load(t.ID)
	if t.Status.Terminal() {
		ts.peers.Delete(t.ID)
		ts.routes.Delete(t.ID)
	}
	if ok {
		p.(Peer).Notify("notifications/tasks/status", legacyTask(t, ts.m.PollInterval()))
	}
}

// ServeTasks makes the server run tool calls as tasks of m where the
// protocol has the client and the tool agree to it:
//
//   - 2025-11-25: a tools/call with params.task, of a tool whose
//     execution.taskSupport is "optional" or "required", becomes a task
//     (CreateTaskResult); tasks/get, tasks/result, tasks/list and
//     tasks/cancel serve it, and the capability tasks is advertised.
//   - 2026-07-28 (the extension io.modelcontextprotocol/tasks, which is
//     advertised): a tools/call of such a tool from a client that declared
//     the extension in the request becomes a task (the flat
//     CreateTaskResult); tasks/get, tasks/update and tasks/cancel serve it.
//     The extension has no progress notification on tasks: the progress
//     the handler reports (when the call asked for it) is the working
//     task's statusMessage in tasks/get, after the message it has.
//
// A tool with taskSupport "required" called otherwise gets the error its
// revision names (-32601 in 2025-11-25; -32021, naming the extension, in
// 2026-07-28). Tools without taskSupport never become tasks.
//
// Several servers may serve one manager (a gateway's virtual endpoints
// serve its tasks beside it); the first one resumes the tasks a previous
// process left. ServeTasks(nil, …) ends the manager's reports to a
// server that is done with (an endpoint a reload removed): its task
// methods then answer that tasks are off.
func (s *Server) ServeTasks(m tasks.Manager, opts TasksOptions) {
	if m == nil {
		if old := s.tasks.Swap(nil); old != nil {
			old.stop()
		}
		return
	}
	owner := opts.Owner
	if owner == nil {
		owner = taskOwner
	}
	client := opts.Client
	if client == nil {
		client = taskClient
	}
	ts := &taskServe{m: m, owner: owner, client: client}
	ts.stop = m.OnStatus(func(t tasks.Task) { s.taskStatus(ts, t) })
	if old := s.tasks.Swap(ts); old != nil {
		old.stop()
	}
	s.SetExtension(mcp.TasksExtension, nil)
	for _, name := range []string{"tasks/get", "tasks/list", "tasks/cancel", "tasks/update"} {
		s.AddMethod(name, s.taskMethod, false)
	}
	// tasks/result blocks until its task ends: a client may wait so for
	// each of its many tasks without taking the slots its plain calls
	// need (Method.Waits).
	s.addWaitingMethod("tasks/result", s.taskMethod)
	if r, ok := m.(tasks.Resumer); ok {
		r.Resume(s.rework)
	}
}

// rework is the work that runs a task of a resumable tool again from its
// record (Tool.Resumable), after a restart: nil when the tool is gone or
// no longer resumable, or the record does not decode.
func (s *Server) rework(t tasks.Task) tasks.Work {
	s.mu.RLock()
	tl, _ := s.tools.get(t.Tool)
	s.mu.RUnlock()
	if tl == nil || !tl.Resumable || t.Rerun == nil {
		return nil
	}
	rr := t.Rerun
	args := rr.Args
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	params, err := json.Marshal(map[string]json.RawMessage{"name": mustJSON(t.Tool), "arguments": args})
	if err != nil {
		return nil
	}
	var caller *Caller
	if len(rr.Caller) > 0 {
		caller = new(Caller)
		if json.Unmarshal(rr.Caller, caller) != nil {
			return nil
		}
	}
	base := &Request{Method: "tools/call", Params: params, Version: rr.Version, Modern: t.Modern,
		ClientCapabilities: rr.ClientCapabilities, InputResponses: rr.InputResponses, Caller: caller}
	vals := context.Background()
	if caller != nil {
		vals = WithCaller(vals, caller)
	}
	return func(tctx context.Context, answers map[string]json.RawMessage) tasks.Outcome {
		return s.runTask(valuesFrom{tctx, vals}, tl, base, args, answers)
	}
}

func mustJSON(v any) json.RawMessage {
	raw, _ := json.Marshal(v)
	return raw
}

// taskSupport reads a tool's execution.taskSupport ("" when absent).
func taskSupport(execution json.RawMessage) string {
	var e struct {
		TaskSupport string `json:"taskSupport"`
	}
	if len(execution) > 0 {
		_ = json.Unmarshal(execution, &e)
	}
	return e.TaskSupport
}

// errAnswered is what Ask returns, in the round that holds every answer,
// to a handler of an AskBeforeTask tool running on its request: the call
// becomes a task there, and the task runs the handler again from the start.
var errAnswered = errors.New("handlers: every question answered; the call goes on as a task")

// missingTasksExtension is 2026-07-28's answer to a client that did not
// declare the extension a request needs.
func missingTasksExtension(what string) *jsonrpc.Error {
	return &jsonrpc.Error{
		Code:    jsonrpc.CodeMissingClientCapability,
		Message: "Missing required client capability: the " + mcp.TasksExtension + " extension (" + what + ")",
		Data:    map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{mcp.TasksExtension: map[string]any{}}}},
	}
}

// taskCall decides whether a tools/call of t becomes a task, and if so
// makes it: handled reports that res, err answer the call.
func (s *Server) taskCall(ctx context.Context, ts *taskServe, t *tool, req *Request, args json.RawMessage) (res any, err error, handled bool) {
	support := t.support
	runsAsTask := support == "optional" || support == "required"
	var ttl time.Duration
	if req.Modern {
		if _, declared := req.ClientExtension(mcp.TasksExtension); !declared {
			if support == "required" {
				return nil, missingTasksExtension(fmt.Sprintf("the tool %q runs only as a task", t.Name)), true
			}
			return nil, nil, false
		}
		if !runsAsTask {
			return nil, nil, false // a legacy params.task is ignored, as the extension says
		}
		if t.AskBeforeTask {
			// Ask in the request's own rounds until every question has
			// its answer; the call becomes a task in that round.
			probe := req.shallow()
			probe.probe = true
			out, err := t.handler(ctx, probe, args)
			if !errors.Is(err, errAnswered) {
				res, err := t.answer(probe, out, err)
				if errors.Is(err, mcp.ErrInputRequired) {
					req.adoptInputs(probe)
				}
				return res, err, true
			}
		}
	} else {
		if !since(req, mcp.Version20251125) {
			return nil, nil, false
		}
		raw, asked := jsonrpc.Member(req.Params, "task")
		asked = asked && string(raw) != "null"
		switch {
		case support == "required" && !asked:
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("Method not found: the tool %q must be called as a task (params.task)", t.Name)}, true
		case asked && !runsAsTask:
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("Method not found: the tool %q cannot be called as a task", t.Name)}, true
		case !asked:
			return nil, nil, false
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return nil, invalidParams("task must be an object"), true
		}
		if rawTTL, ok := obj["ttl"]; ok && string(rawTTL) != "null" {
			var ms float64
			if json.Unmarshal(rawTTL, &ms) != nil {
				return nil, invalidParams("task.ttl must be a number of milliseconds"), true
			}
			ttl = ttlMillis(ms)
		}
	}
	base := req.shallow()
	if d, ok := req.Peer.(detacher); ok && !req.Modern {
		// 2025-11-25: progress, logs and requests to the client go on
		// through the task's life, on the session's stream, each tied to
		// the task by its related-task _meta.
		base.Peer = &taskPeer{inner: d.Detach(), ts: ts}
	}
	vals := context.WithoutCancel(ctx) // the caller and other request values, for the handler
	work := func(tctx context.Context, answers map[string]json.RawMessage) tasks.Outcome {
		var wctx context.Context = valuesFrom{tctx, vals}
		// Traced: the work is a span of its own, linked to the call that
		// made the task, and the parent of what the work sends on.
		sp := trace.StartLinked(vals, "tools/call "+t.Name+" (task)", time.Now())
		if sp == nil {
			return s.runTask(wctx, t, base, args, answers)
		}
		sp.Attrs = append(sp.Attrs, trace.String(trace.AttrMethod, "tools/call"), trace.String(trace.AttrToolName, t.Name), trace.String("mcp.task.id", tasks.IDFrom(tctx)))
		out := s.runTask(trace.WithContext(wctx, sp.Context), t, base, args, answers)
		code := 0
		if out.Error != nil {
			code = out.Error.Code
		}
		trace.Outcome(sp, code, out.Failed)
		sp.Finish(time.Now())
		return out
	}
	var tk tasks.Task
	who := tasks.Requestor{Owner: ts.owner(ctx), Session: sessionFrom(ctx), Client: ts.client(ctx)}
	if r, ok := ts.m.(tasks.Resumer); ok && t.Resumable {
		tk, err = r.CreateResumable(who, t.Name, req.Modern, ttl, rerunOf(req, args), work)
	} else {
		tk, err = ts.m.Create(who, t.Name, req.Modern, ttl, work)
	}
	if err != nil {
		return nil, taskError(err), true
	}
	if req.Modern {
		return modernTask(tk, ts.m.PollInterval(), "task", false), nil, true
	}
	if tp, ok := base.Peer.(*taskPeer); ok {
		if cur, err := ts.m.Get(tk.Owner, tk.ID); err == nil && !cur.Status.Terminal() {
			ts.peers.Store(tk.ID, tp.inner) // its status notifications need no related-task _meta
			if cur, err := ts.m.Get(tk.Owner, tk.ID); err != nil || cur.Status.Terminal() {
				ts.peers.Delete(tk.ID) // it ended meanwhile
			}
		}
	}
	return struct {
		Task legacyTaskBody `json:"task"`
	}{legacyTask(tk, ts.m.PollInterval())}, nil, true
}

// rerunOf is what a task of a resumable tool keeps to run req again.
func rerunOf(req *Request, args json.RawMessage) *tasks.Rerun {
	rr := &tasks.Rerun{Args: args, Version: req.Version, ClientCapabilities: req.ClientCapabilities,
		InputResponses: req.InputResponses}
	if req.Caller != nil {
		rr.Caller, _ = json.Marshal(req.Caller)
	}
	return rr
}

// valuesFrom is the task's context (its life: cancel, shutdown) with the
// values of the request that made it (the caller).
type valuesFrom struct {
	context.Context
	vals context.Context
}

func (c valuesFrom) Value(key any) any {
	if v := c.Context.Value(key); v != nil {
		return v // the task's own (its id)
	}
	return c.vals.Value(key)
}

// shallow copies what a handler reads of a request into a fresh Request.
func (r *Request) shallow() *Request {
	return &Request{Method: r.Method, Params: r.Params, Version: r.Version, Modern: r.Modern,
		ClientCapabilities: r.ClientCapabilities, ProgressToken: r.ProgressToken, LogLevel: r.LogLevel,
		Peer: r.Peer, InputResponses: r.InputResponses, Caller: r.Caller, LocalLog: r.LocalLog}
}

// adoptInputs takes the questions another Request (a probe of this one) asked.
func (r *Request) adoptInputs(o *Request) {
	in := o.PendingInputs()
	r.mu.Lock()
	r.extra().inputRequests = in
	r.mu.Unlock()
}

// runTask runs one round of a task's tool call.
func (s *Server) runTask(ctx context.Context, t *tool, base *Request, args json.RawMessage, answers map[string]json.RawMessage) tasks.Outcome {
	r := base.shallow()
	if r.Modern {
		// The extension has no progress or logs on tasks: progress is
		// shown in tasks/get's statusMessage instead.
		r.Peer = nil
		if ts := s.tasks.Load(); ts != nil {
			id := tasks.IDFrom(ctx)
			r.Peer = modernTaskPeer{ts: ts, id: id}
			defer ts.progress.Delete(id)
		}
	} else if tp, ok := r.Peer.(*taskPeer); ok {
		r.Peer = &taskPeer{inner: tp.inner, ts: tp.ts, id: tasks.IDFrom(ctx)}
	}
	if len(answers) > 0 {
		merged := make(map[string]json.RawMessage, len(answers)+len(r.InputResponses))
		for k, v := range r.InputResponses {
			merged[k] = v
		}
		for k, v := range answers {
			merged[k] = v
		}
		r.InputResponses = merged
	}
	hctx := ctx
	if t.Timeout > 0 {
		var cancel context.CancelFunc
		hctx, cancel = context.WithTimeout(ctx, t.Timeout)
		defer cancel()
	}
	out, err := t.handler(hctx, r, args)
	if t.Timeout > 0 && ctx.Err() == nil && errors.Is(hctx.Err(), context.DeadlineExceeded) {
		// As a plain call is answered at its deadline, whatever the
		// handler says afterwards is dropped.
		return tasks.Outcome{Error: &tasks.Error{Code: jsonrpc.CodeInternalError,
			Message: "Internal error: the tool timed out after " + t.Timeout.String()}}
	}
	res, err := t.answer(r, out, err)
	if err != nil {
		var je *jsonrpc.Error
		var ce *CapabilityError
		switch {
		case errors.Is(err, mcp.ErrInputRequired):
			input := map[string]json.RawMessage{}
			for k, q := range r.PendingInputs() {
				raw, _ := json.Marshal(q)
				input[k] = raw
			}
			return tasks.Outcome{Input: input}
		case errors.As(err, &ce):
			je = ce.RPCError()
		case errors.As(err, &je):
		default:
			je = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error"}
		}
		data, _ := json.Marshal(je.Data)
		if je.Data == nil {
			data = nil
		}
		return tasks.Outcome{Error: &tasks.Error{Code: je.Code, Message: je.Message, Data: data}}
	}
	var raw []byte
	failed := false
	if cr, ok := res.(*mcp.CallToolResult); ok {
		raw, err = cr.AppendJSON(nil)
		failed = cr.IsError && !r.Modern // 2025-11-25: isError is failed; 2026-07-28: completed
	} else {
		raw, err = json.Marshal(res)
	}
	if err != nil {
		return tasks.Outcome{Error: &tasks.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the result does not encode"}}
	}
	return tasks.Outcome{Result: raw, Failed: failed}
}

// maxTTLMillis is the longest ttl a time.Duration holds, in milliseconds.
const maxTTLMillis = float64(math.MaxInt64 / int64(time.Millisecond))

// ttlMillis is a client's ttl in milliseconds as a Duration: 0 (none) for
// one not above 0, and capped where a Duration ends before converting, so
// that a huge one is the longest allowed (the manager's cap), not a
// product that wrapped round to microseconds.
func ttlMillis(ms float64) time.Duration {
	if !(ms > 0) {
		return 0
	}
	return time.Duration(min(ms, maxTTLMillis) * float64(time.Millisecond))
}

// taskError is the JSON-RPC error for a Manager's error.
func taskError(err error) *jsonrpc.Error {
	var le *tasks.LimitError
	switch {
	case errors.As(err, &le):
		return &jsonrpc.Error{Code: jsonrpc.CodeServerBusy, Message: "Server busy: " + le.Error(),
			Data: map[string]any{"limit": le.Limit, "perClient": le.PerOwner}}
	case errors.Is(err, tasks.ErrNotFound):
		return invalidParams("unknown task (it may have expired)")
	case errors.Is(err, tasks.ErrTerminal):
		return invalidParams("the task has already ended")
	case errors.Is(err, tasks.ErrUnavailable):
		// A shared store (etcd) down or cut off from this server: the
		// client may try again; what is down is named, not where.
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the task store is unreachable; try again later"}
	case errors.Is(err, tasks.ErrStopped):
		return &jsonrpc.Error{Code: jsonrpc.CodeServerBusy, Message: "Server busy: shutting down"}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the task store failed"}
}

// stamp writes a time as the protocol's ISO 8601.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// legacyTaskBody is a Task as 2025-11-25 writes it.
type legacyTaskBody struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           *int64 `json:"ttl"`
	PollInterval  int64  `json:"pollInterval,omitempty"`
}

func legacyTask(t tasks.Task, poll time.Duration) legacyTaskBody {
	b := legacyTaskBody{TaskID: t.ID, Status: string(t.Status), StatusMessage: t.Message,
		CreatedAt: stamp(t.Created), LastUpdatedAt: stamp(t.Updated)}
	if t.TTL > 0 {
		ms := t.TTL.Milliseconds()
		b.TTL = &ms
	}
	if !t.Status.Terminal() {
		b.PollInterval = poll.Milliseconds()
	}
	return b
}

// modernTaskBody is a Task (and a DetailedTask, with detail) as the
// 2026-07-28 extension writes it.
type modernTaskBody struct {
	ResultType     string          `json:"resultType,omitempty"`
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	StatusMessage  string          `json:"statusMessage,omitempty"`
	CreatedAt      string          `json:"createdAt"`
	LastUpdatedAt  string          `json:"lastUpdatedAt"`
	TTLMs          *int64          `json:"ttlMs"`
	PollIntervalMs int64           `json:"pollIntervalMs,omitempty"`
	InputRequests  json.RawMessage `json:"inputRequests,omitempty"`
	Result         json.RawMessage `json:"result,omitempty"`
	Error          *tasks.Error    `json:"error,omitempty"`
}

func modernTask(t tasks.Task, poll time.Duration, resultType string, detail bool) modernTaskBody {
	b := modernTaskBody{ResultType: resultType, TaskID: t.ID, Status: string(t.Status), StatusMessage: t.Message,
		CreatedAt: stamp(t.Created), LastUpdatedAt: stamp(t.Updated)}
	if t.TTL > 0 {
		ms := t.TTL.Milliseconds()
		b.TTLMs = &ms
	}
	if !t.Status.Terminal() {
		b.PollIntervalMs = poll.Milliseconds()
	}
	if detail {
		switch t.Status {
		case tasks.InputRequired:
			b.InputRequests = t.Input
		case tasks.Completed:
			b.Result = t.Result
		case tasks.Failed:
			b.Error = t.Error
		}
	}
	return b
}

// taskMethod serves tasks/get, tasks/result, tasks/list, tasks/cancel and
// tasks/update, each as the request's revision defines it.
func (s *Server) taskMethod(ctx context.Context, req *Request) (any, error) {
	ts := s.tasks.Load()
	notFound := &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("Method not found: %q", req.Method)}
	if ts == nil {
		return nil, notFound
	}
	if req.Modern {
		switch req.Method {
		case "tasks/result", "tasks/list":
			return nil, notFound // removed by the extension
		}
		if _, ok := req.ClientExtension(mcp.TasksExtension); !ok {
			return nil, missingTasksExtension(req.Method + " is one of its methods")
		}
	} else if !since(req, mcp.Version20251125) || req.Method == "tasks/update" {
		return nil, notFound
	}
	owner := ts.owner(ctx)
	var p struct {
		TaskID         *string                    `json:"taskId"`
		Cursor         string                     `json:"cursor"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil {
		return nil, invalidParams(req.Method + ": " + err.Error())
	}
	if req.Method == "tasks/list" {
		return s.listTasks(ts, owner, sessionFrom(ctx), p.Cursor)
	}
	if p.TaskID == nil {
		return nil, invalidParams(req.Method + " needs a taskId (a string)")
	}
	id, poll := *p.TaskID, ts.m.PollInterval()
	switch req.Method {
	case "tasks/get":
		t, err := ts.m.Get(owner, id)
		if err != nil {
			return nil, taskError(err)
		}
		if req.Modern {
			return modernTask(ts.withProgress(t), poll, "", true), nil
		}
		return legacyTask(t, poll), nil
	case "tasks/cancel":
		t, err := ts.m.Cancel(owner, id)
		if req.Modern {
			if err != nil && !errors.Is(err, tasks.ErrTerminal) {
				return nil, taskError(err)
			}
			return struct{}{}, nil // an ack; cancelling what ended is no error here
		}
		if err != nil {
			return nil, taskError(err)
		}
		return legacyTask(t, poll), nil
	case "tasks/update":
		if p.InputResponses == nil {
			return nil, invalidParams("tasks/update needs inputResponses (an object)")
		}
		if err := ts.m.Answer(owner, id, p.InputResponses); err != nil {
			return nil, taskError(err)
		}
		return struct{}{}, nil
	case "tasks/result":
		if t, err := ts.m.Get(owner, id); err == nil && req.Peer != nil && t.TTL > 0 {
			// It waits for the task's end, which its ttl bounds, not
			// the request timeout that a call's answer has.
			req.Peer.SetTimeout(time.Until(t.Created.Add(t.TTL)) + time.Second)
		}
		if req.Peer != nil {
			rt := ts.route(id)
			rt.set(req.Peer)
			defer rt.set(nil)
		}
		t, err := ts.m.Wait(ctx, owner, id)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, taskError(err)
		}
		meta := map[string]any{mcp.MetaRelatedTask: map[string]string{"taskId": t.ID}}
		switch {
		case t.Status == tasks.Cancelled:
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the task was cancelled", Data: map[string]any{"_meta": meta}}
		case t.Error != nil:
			data := map[string]any{"_meta": meta}
			if len(t.Error.Data) > 0 {
				data["data"] = t.Error.Data
			}
			return nil, &jsonrpc.Error{Code: t.Error.Code, Message: t.Error.Message, Data: data}
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(t.Result, &obj) != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the task's result is damaged"}
		}
		var m map[string]json.RawMessage
		_ = json.Unmarshal(obj["_meta"], &m)
		if m == nil {
			m = map[string]json.RawMessage{}
		}
		m[mcp.MetaRelatedTask], _ = json.Marshal(map[string]string{"taskId": t.ID})
		obj["_meta"], _ = json.Marshal(m)
		return obj, nil
	}
	return nil, notFound
}

// listTasks is tasks/list (2025-11-25): the owner's tasks, newest first,
// a page at a time; without an owner, those made in the session (see
// tasks.Manager.List).
func (s *Server) listTasks(ts *taskServe, owner, session, cursor string) (any, error) {
	all, err := ts.m.List(owner, session)
	if err != nil {
		return nil, taskError(err)
	}
	s.mu.RLock()
	size := s.pageSize
	s.mu.RUnlock()
	start := 0
	if cursor != "" {
		start = -1
		for i, t := range all {
			if t.ID == cursor {
				start = i
				break
			}
		}
		if start < 0 {
			return nil, invalidParams("unknown cursor")
		}
	}
	end := min(start+size, len(all))
	page := make([]legacyTaskBody, 0, end-start)
	for _, t := range all[start:end] {
		page = append(page, legacyTask(t, ts.m.PollInterval()))
	}
	next := ""
	if end < len(all) {
		next = all[end].ID
	}
	return struct {
		Tasks      []legacyTaskBody `json:"tasks"`
		NextCursor string           `json:"nextCursor,omitempty"`
	}{page, next}, nil
}

// tasksOn reports whether ServeTasks was called, for Capabilities.
func (s *Server) tasksOn() bool { return s.tasks.Load() != nil }

// detacher is implemented by a Peer that can outlive its request: Detach
// returns one whose messages go on the session's own stream. A task made
// in 2025-11-25 keeps talking to its client through it.
type detacher interface {
	Detach() Peer
}

// taskPeer is a 2025-11-25 task's Peer: every message carries the
// related-task _meta, and the task is input_required while it waits for
// an answer from the client.
type taskPeer struct {
	inner Peer // the session's
	ts    *taskServe
	id    string
}

// to is where the task's messages go: a waiting tasks/result's stream,
// else the session's; changed is closed when that changes.
func (p *taskPeer) to() (to Peer, changed <-chan struct{}) {
	to, changed = p.ts.route(p.id).current()
	if to == nil {
		to = p.inner
	}
	return to, changed
}

func (p *taskPeer) Notify(method string, params any) bool {
	to, _ := p.to()
	return to.Notify(method, p.related(params))
}

func (p *taskPeer) SetTimeout(time.Duration) {} // a task has its ttl, not a request's deadline

func (p *taskPeer) Ask(ctx context.Context, method string, params any) (json.RawMessage, error) {
	p.ts.m.Waiting(p.id, true)
	defer p.ts.m.Waiting(p.id, false)
	params = p.related(params)
	type answer struct {
		raw json.RawMessage
		err error
	}
	for {
		// Asked on one stream, the question is asked again (and the first
		// request cancelled) when a tasks/result opens another: the
		// client may never have seen it where it went first.
		to, changed := p.to()
		actx, cancel := context.WithCancel(ctx)
		done := make(chan answer, 1)
		go func() {
			raw, err := to.Ask(actx, method, params)
			done <- answer{raw, err}
		}()
		select {
		case a := <-done:
			cancel()
			return a.raw, a.err
		case <-changed:
			cancel()
			if a := <-done; a.err == nil || ctx.Err() != nil {
				return a.raw, a.err // answered meanwhile, or over
			}
		}
	}
}

// related adds the related-task _meta to params (a JSON object).
func (p *taskPeer) related(params any) any {
	raw, err := json.Marshal(params)
	if err != nil {
		return params
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		obj = map[string]json.RawMessage{}
	}
	var meta map[string]json.RawMessage
	_ = json.Unmarshal(obj["_meta"], &meta)
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	meta[mcp.MetaRelatedTask], _ = json.Marshal(map[string]string{"taskId": p.id})
	obj["_meta"], _ = json.Marshal(meta)
	return obj
}

// taskOwner is the default owner of a request's tasks: the caller when its
// transport vouched for one (CallerFrom: the same tasks from any session,
// on any replica, after any restart), else "": the task's unguessable id
// alone binds it, in every revision and transport. A 2025-11-25 task made
// in a Streamable HTTP session is not bound to the session, which ends
// (DELETE, idle, the server's restart) while its client still holds the
// id and wants the result; see tasks.Requestor for why, and the MCP
// specification it cites.
func taskOwner(ctx context.Context) string {
	if c := CallerFrom(ctx); c != nil {
		return c.Principal()
	}
	return ""
}

// taskClient is the default of what a request's tasks count against, for
// the bounds per client: the caller when there is one, else the address
// the request's connection came from (clientOfAddr: an IPv6 one by
// its /64), else "" (stdio: one client). Anonymous clients share the
// owner "", but not a budget: one of them cannot use up the others'.
func taskClient(ctx context.Context) string {
	if c := CallerFrom(ctx); c != nil {
		return c.Principal()
	}
	return clientOfAddr(remoteFrom(ctx))
}

// EndSession cancels the running tasks made in the legacy HTTP session
// id, which its client ended (DELETE): see tasks.Manager.EndSession.
// Nothing without tasks.
func (s *Server) EndSession(id string) {
	if ts := s.tasks.Load(); ts != nil {
		ts.m.EndSession(id)
	}
}

// MayFollowTask reports whether the request whose values ctx carries may
// be told of task id's status changes (a 2026-07-28 subscriptions/listen
// naming it in notifications.taskIds): only when the task exists, is not
// expired and belongs to the request's owner, the same binding tasks/get
// checks. The unguessable id alone is not the guard: an id seen in a log
// or a proxy's access line must not let another caller follow the task
// (the extension binds tasks to their authorization context). An unknown
// id and another owner's are the same false, so the answer tells nothing
// of which ids exist.
func (s *Server) MayFollowTask(ctx context.Context, id string) bool {
	ts := s.tasks.Load()
	if ts == nil {
		return false
	}
	_, err := ts.m.Get(ts.owner(ctx), id)
	return err == nil
}
