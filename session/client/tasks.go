package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/mcp"
)

// Tasks: a tools/call that the server runs in the background while the
// client polls for it. The two eras shape them differently, and the
// methods here hide which one the session speaks:
//
//   - 2025-11-25 (core, experimental): the client asks, with params.task,
//     and only for a tool whose execution.taskSupport allows it on a
//     server whose capabilities list tasks.requests.tools.call; the
//     answer is {task: Task}; tasks/get polls, tasks/result blocks for the
//     result (and is the stream on which the server asks its related-task
//     questions), tasks/cancel answers the cancelled Task, tasks/list
//     lists. Progress keeps its token for the task's whole life.
//   - 2026-07-28 (extension io.modelcontextprotocol/tasks): the client
//     declares the extension on the request and the server decides; the
//     answer is a flat Task with resultType "task", or the plain result;
//     tasks/get answers a DetailedTask (inputRequests, then result or
//     error), questions are answered with tasks/update, tasks/cancel is an
//     empty acknowledgement; there is no tasks/result and no tasks/list.
//     Over HTTP, Mcp-Name carries the task id.

// TaskStatus is a task's state.
type TaskStatus string

// The task statuses of both eras.
const (
	TaskWorking       TaskStatus = "working"
	TaskInputRequired TaskStatus = "input_required"
	TaskCompleted     TaskStatus = "completed"
	TaskFailed        TaskStatus = "failed"
	TaskCancelled     TaskStatus = "cancelled"
)

// Terminal reports whether s is a state a task never leaves.
func (s TaskStatus) Terminal() bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// Task is a task as the server last described it, in either era's shape.
type Task struct {
	ID            string
	Status        TaskStatus
	StatusMessage string
	// CreatedAt and LastUpdatedAt are the server's ISO 8601 timestamps,
	// as sent.
	CreatedAt, LastUpdatedAt string
	// TTL is how long after its creation the server keeps the task: 0
	// when it did not say, negative when it said unlimited (null).
	TTL time.Duration
	// PollInterval is the server's suggested time between polls; 0 when
	// it suggested none.
	PollInterval time.Duration
	// In 2026-07-28 tasks/get carries more: the questions the task waits
	// on (input_required, by key), its result (completed) or its
	// JSON-RPC error (failed).
	InputRequests map[string]json.RawMessage
	Result        json.RawMessage
	Error         *jsonrpc.Error
}

// wireTask reads a Task of either era.
type wireTask struct {
	TaskID         string                     `json:"taskId"`
	Status         TaskStatus                 `json:"status"`
	StatusMessage  string                     `json:"statusMessage"`
	CreatedAt      string                     `json:"createdAt"`
	LastUpdatedAt  string                     `json:"lastUpdatedAt"`
	TTL            json.RawMessage            `json:"ttl"`
	TTLMs          json.RawMessage            `json:"ttlMs"`
	PollInterval   *float64                   `json:"pollInterval"`
	PollIntervalMs *float64                   `json:"pollIntervalMs"`
	InputRequests  map[string]json.RawMessage `json:"inputRequests"`
	Result         json.RawMessage            `json:"result"`
	Error          *jsonrpc.Error             `json:"error"`
}

func (w *wireTask) task() (*Task, error) {
	if w.TaskID == "" || w.Status == "" {
		return nil, errors.New("not a task: no taskId or status")
	}
	t := &Task{ID: w.TaskID, Status: w.Status, StatusMessage: w.StatusMessage,
		CreatedAt: w.CreatedAt, LastUpdatedAt: w.LastUpdatedAt,
		InputRequests: w.InputRequests, Error: w.Error}
	if len(w.Result) > 0 && string(w.Result) != "null" {
		t.Result = w.Result
	}
	for _, raw := range []json.RawMessage{w.TTL, w.TTLMs} {
		switch {
		case len(raw) == 0:
		case string(raw) == "null":
			t.TTL = -1
		default:
			var ms float64
			if json.Unmarshal(raw, &ms) == nil && ms > 0 {
				t.TTL = millis(ms)
			}
		}
	}
	for _, p := range []*float64{w.PollInterval, w.PollIntervalMs} {
		if p != nil && *p > 0 {
			t.PollInterval = millis(*p)
		}
	}
	return t, nil
}

func millis(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

func decodeTask(raw json.RawMessage) (*Task, error) {
	var w wireTask
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, err
	}
	return w.task()
}

// TaskOf reads the answer to a tools/call as a CreateTaskResult of either
// era ({"task":{…}} in 2025-11-25, a flat task with resultType "task" in
// 2026-07-28); false when it is a plain result. For a caller that sends
// tools/call itself (Call, Go), such as a gateway passing tasks through.
func taskOf(raw json.RawMessage) (*Task, bool) {
	var top struct {
		ResultType string          `json:"resultType"`
		Task       json.RawMessage `json:"task"`
	}
	if json.Unmarshal(raw, &top) != nil {
		return nil, false
	}
	body := raw
	switch {
	case top.ResultType == "task":
	case len(top.Task) > 0 && top.Task[0] == '{':
		body = top.Task
	default:
		return nil, false
	}
	t, err := decodeTask(body)
	return t, err == nil
}

// serverTasksToolCall reports whether a 2025-11-25 server declared
// tasks.requests.tools.call.
func (c *Client) serverTasksToolCall() bool {
	var caps struct {
		Requests struct {
			Tools struct {
				Call json.RawMessage `json:"call"`
			} `json:"tools"`
		} `json:"requests"`
	}
	raw, ok := c.caps["tasks"]
	return ok && json.Unmarshal(raw, &caps) == nil && len(caps.Requests.Tools.Call) > 0 && string(caps.Requests.Tools.Call) != "null"
}

// serverTasks reports whether a 2025-11-25 server declared tasks.<op>
// (list, cancel).
func (c *Client) serverTasks(op string) bool {
	var caps map[string]json.RawMessage
	raw, ok := c.caps["tasks"]
	if !ok || json.Unmarshal(raw, &caps) != nil {
		return false
	}
	v, ok := caps[op]
	return ok && string(v) != "null"
}

// serverDeclaresTasksExtension reports whether a 2026-07-28 server lists
// the tasks extension in its capabilities.
func (c *Client) serverDeclaresTasksExtension() bool {
	var ext map[string]json.RawMessage
	raw, ok := c.caps["extensions"]
	if !ok || json.Unmarshal(raw, &ext) != nil {
		return false
	}
	_, ok = ext[mcp.TasksExtension]
	return ok
}

// WithTaskTTL asks a 2025-11-25 server to keep the task CallToolTask
// creates for d after its creation (params.task.ttl; the server may keep
// it for less or more). 2026-07-28 has no such request: the server sets
// ttlMs.
func WithTaskTTL(d time.Duration) CallOption {
	return func(o *callOptions) { o.taskTTL = d }
}

// CanTask reports whether a tools/call of tool may be answered with a
// task in this session: in 2025-11-25 when the server declares
// tasks.requests.tools.call and the tool's taskSupport is optional or
// required; in 2026-07-28 when the server declares the tasks extension
// (it still decides per call).
func (c *Client) CanTask(tool mcp.Tool) bool {
	if c.era == EraModern {
		return c.serverDeclaresTasksExtension()
	}
	s := tool.TaskSupport()
	return c.serverTasksToolCall() && (s == "optional" || s == "required")
}

// CallToolTask calls a tool as a task where the session allows one, and
// returns either the task (to poll with GetTask or AwaitTask) or, when
// there is none, the plain result: in 2025-11-25 a task is asked for
// (params.task) only when CanTask says the tool may run as one, which
// needs the tool list (fetched once when not cached); in 2026-07-28 the
// tasks extension is declared on the request and the server decides.
// WithProgress's func keeps receiving the task's progress (2025-11-25:
// the token stays valid for the task's life) until AwaitTask returns, or
// ForgetTask is called.
func (c *Client) CallToolTask(ctx context.Context, name string, args any, opts ...CallOption) (*Task, json.RawMessage, error) {
	opts = slices.Clip(opts) // appended to below: not into the caller's array
	o := collect(opts)
	params := map[string]any{"name": name}
	if !isNil(args) {
		params["arguments"] = args
	}
	if c.era == EraModern {
		opts = append(opts, c.withTasksExtension(o.extensions))
	} else {
		tools, ok := c.CachedTools()
		if !ok {
			var err error
			if tools, err = c.ListTools(ctx); err != nil {
				return nil, nil, fmt.Errorf("client: tools/call %s: listing tools for their taskSupport: %w", name, err)
			}
		}
		i := slices.IndexFunc(tools, func(t mcp.Tool) bool { return t.Name == name })
		if i >= 0 && c.CanTask(tools[i]) {
			task := map[string]any{}
			if o.taskTTL > 0 {
				task["ttl"] = max(o.taskTTL.Milliseconds(), 1)
			}
			params["task"] = task
		}
	}
	// A legacy task's progress keeps the tools/call's token: response
	// registers the func before the answer is delivered (progress may
	// follow it at once) and says under which id.
	var kept int64
	if o.progress != nil && c.era != EraModern {
		opts = append(opts, func(co *callOptions) { co.kept = &kept })
	}
	var raw json.RawMessage
	err := c.Call(ctx, "tools/call", params, &raw, opts...)
	t, isTask := taskOf(raw)
	if err != nil || !isTask {
		c.forgetProgress(kept)
		if err != nil {
			return nil, nil, err
		}
		return nil, raw, nil
	}
	if kept != 0 {
		ts := c.tasks()
		ts.mu.Lock()
		ts.kept[t.ID] = kept
		ts.mu.Unlock()
	}
	return t, nil, nil
}

// collect applies opts to fresh callOptions.
func collect(opts []CallOption) callOptions {
	var o callOptions
	for _, f := range opts {
		f(&o)
	}
	return o
}

// withTasksExtension declares the tasks extension on a 2026-07-28
// request, beside the extensions the request declares already (ext, from
// WithExtensions) or, without those, the Options'.
func (c *Client) withTasksExtension(ext json.RawMessage) CallOption {
	all := map[string]json.RawMessage{}
	if len(ext) > 0 && ext[0] == '{' {
		_ = json.Unmarshal(ext, &all)
	} else {
		maps.Copy(all, c.extensionsObject())
	}
	if _, ok := all[mcp.TasksExtension]; !ok {
		all[mcp.TasksExtension] = json.RawMessage("{}")
	}
	return WithExtensions(mustMarshal(all))
}

// taskCall sends one of the tasks/* requests, with the extension declared
// in 2026-07-28.
func (c *Client) taskCall(ctx context.Context, method, id string, extra map[string]any, result any, opts []CallOption) error {
	params := map[string]any{"taskId": id}
	maps.Copy(params, extra)
	if c.era == EraModern {
		opts = append(slices.Clip(opts), c.withTasksExtension(collect(opts).extensions))
	}
	return c.Call(ctx, method, params, result, opts...)
}

// GetTask asks the server for a task's state (tasks/get).
func (c *Client) GetTask(ctx context.Context, id string, opts ...CallOption) (*Task, error) {
	var raw json.RawMessage
	if err := c.taskCall(ctx, "tasks/get", id, nil, &raw, opts); err != nil {
		return nil, err
	}
	t, err := decodeTask(raw)
	if err != nil {
		return nil, fmt.Errorf("client: tasks/get: %w", err)
	}
	return t, nil
}

// TaskResult waits for a 2025-11-25 task to end and returns what its
// tools/call would have (tasks/result): the result, or the *RPCError. The
// server answers only once the task is over, so the request is bounded by
// ctx alone unless WithTimeout says otherwise; the server asks its
// related-task questions (elicitation, sampling) while it waits, and the
// Options handlers answer them. 2026-07-28 has no tasks/result: the
// result comes with tasks/get (Task.Result).
func (c *Client) TaskResult(ctx context.Context, id string, opts ...CallOption) (json.RawMessage, error) {
	if c.era == EraModern {
		return nil, errors.New("client: tasks/result does not exist in 2026-07-28: tasks/get carries the result")
	}
	opts = append([]CallOption{WithTimeout(-1)}, opts...)
	var raw json.RawMessage
	if err := c.taskCall(ctx, "tasks/result", id, nil, &raw, opts); err != nil {
		return nil, err
	}
	return raw, nil
}

// CancelTask asks the server to cancel a task (tasks/cancel). A
// 2025-11-25 server answers the task as it now is (cancelled); a
// 2026-07-28 one only acknowledges, and the task is nil: cancelling there
// is cooperative, and the task may still end otherwise.
func (c *Client) CancelTask(ctx context.Context, id string, opts ...CallOption) (*Task, error) {
	var raw json.RawMessage
	if err := c.taskCall(ctx, "tasks/cancel", id, nil, &raw, opts); err != nil {
		return nil, err
	}
	if c.era == EraModern {
		return nil, nil
	}
	t, err := decodeTask(raw)
	if err != nil {
		return nil, fmt.Errorf("client: tasks/cancel: %w", err)
	}
	return t, nil
}

// UpdateTask answers the inputRequests of a 2026-07-28 task
// (tasks/update), by key. AwaitTask does this itself with the Options
// handlers.
func (c *Client) UpdateTask(ctx context.Context, id string, inputResponses map[string]json.RawMessage, opts ...CallOption) error {
	if c.era != EraModern {
		return errors.New("client: tasks/update is a 2026-07-28 method: a 2025-11-25 task asks its questions as requests")
	}
	return c.taskCall(ctx, "tasks/update", id, map[string]any{"inputResponses": inputResponses}, nil, opts)
}

// ListTasks lists the session's tasks (tasks/list, every page), on a
// 2025-11-25 server that declares tasks.list. 2026-07-28 has no
// tasks/list.
func (c *Client) ListTasks(ctx context.Context, opts ...CallOption) ([]Task, error) {
	if c.era == EraModern {
		return nil, errors.New("client: tasks/list does not exist in 2026-07-28")
	}
	var all []Task
	seen := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		if page == maxPages {
			return nil, fmt.Errorf("client: tasks/list: more than %d pages", maxPages)
		}
		var params map[string]string
		if cursor != "" {
			params = map[string]string{"cursor": cursor}
		}
		var res struct {
			Tasks      []json.RawMessage `json:"tasks"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := c.Call(ctx, "tasks/list", params, &res, opts...); err != nil {
			return nil, err
		}
		for _, raw := range res.Tasks {
			t, err := decodeTask(raw)
			if err != nil {
				return nil, fmt.Errorf("client: tasks/list: %w", err)
			}
			all = append(all, *t)
		}
		if res.NextCursor == "" {
			return all, nil
		}
		if seen[res.NextCursor] {
			return nil, fmt.Errorf("client: tasks/list: the server repeated cursor %q", res.NextCursor)
		}
		seen[res.NextCursor] = true
		cursor = res.NextCursor
	}
}

// ErrTaskCancelled is the error of AwaitTask for a task that ended
// cancelled.
var ErrTaskCancelled = errors.New("task cancelled")

// Poll intervals of AwaitTask: the one used when the server suggests none,
// and the bounds a suggestion is kept within (a server asking for polls
// every hour would leave a finished task unnoticed; one asking for none
// would be polled in a busy loop).
const (
	DefaultTaskPoll = time.Second
	minTaskPoll     = 10 * time.Millisecond
	maxTaskPoll     = time.Minute
)

// AwaitTask polls task until it ends, honouring the server's pollInterval
// (and waking early on a status notification), and returns what its
// tools/call would have returned: the result, or an *RPCError for a task
// that failed with a JSON-RPC error, or an error wrapping
// ErrTaskCancelled. onStatus (optional) is called with each state that
// differs from the last in status or message, the first included. While
// the task waits for input the Options handlers answer its questions: in
// 2025-11-25 through tasks/result, on whose stream the server sends them
// (its related-task requests); in 2026-07-28 through tasks/update, each
// inputRequests key once. Each poll is one request bounded as any other
// (Options.Timeout, WithTimeout); the whole wait only by ctx. When ctx
// ends the task is left running: CancelTask cancels it.
func (c *Client) AwaitTask(ctx context.Context, task *Task, onStatus func(Task), opts ...CallOption) (json.RawMessage, error) {
	defer c.ForgetTask(task)
	wake := c.watchTask(task.ID)
	defer c.unwatchTask(task.ID, wake)

	// A legacy task's result, from tasks/result once asked for.
	type outcome struct {
		raw json.RawMessage
		err error
	}
	var resultCh chan outcome
	taken := false // resultCh's one value was received
	rctx, stopResult := context.WithCancel(ctx)
	defer func() {
		// The tasks/result goroutine is ours: stopped and waited for.
		stopResult()
		if resultCh != nil && !taken {
			<-resultCh
		}
	}()
	askResult := func() {
		if resultCh != nil {
			return
		}
		resultCh = make(chan outcome, 1)
		go func() {
			// Bounded by the wait alone: the polls' timeout (opts)
			// would cut a task that asks a human.
			raw, err := c.TaskResult(rctx, task.ID, append(slices.Clip(opts), WithTimeout(-1))...)
			resultCh <- outcome{raw, err}
		}()
	}
	answered := map[string]bool{} // 2026-07-28 inputRequests keys
	var last Task
	cur := *task
	for first := true; ; first = false {
		if first || cur.Status != last.Status || cur.StatusMessage != last.StatusMessage {
			if onStatus != nil {
				onStatus(cur)
			}
			last = cur
		}
		switch cur.Status {
		case TaskCancelled:
			msg := ""
			if cur.StatusMessage != "" {
				msg = ": " + cur.StatusMessage
			}
			return nil, fmt.Errorf("client: task %s: %w%s", cur.ID, ErrTaskCancelled, msg)
		case TaskCompleted, TaskFailed:
			if c.era != EraModern {
				askResult()
				r := <-resultCh
				taken = true
				return r.raw, r.err
			}
			if cur.Status == TaskFailed {
				e := cur.Error
				if e == nil {
					e = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: cmpOr(cur.StatusMessage, "task failed")}
				}
				return nil, fmt.Errorf("client: %w", &RPCError{Method: "tools/call", Err: e})
			}
			if cur.Result == nil {
				return nil, fmt.Errorf("client: task %s completed without a result", cur.ID)
			}
			return cur.Result, nil
		case TaskInputRequired:
			if c.era != EraModern {
				// The server sends its questions on tasks/result's stream.
				askResult()
			} else if err := c.answerTask(ctx, &cur, answered, opts); err != nil {
				return nil, err
			}
		}
		wait := cur.PollInterval
		if wait <= 0 {
			wait = DefaultTaskPoll
		}
		wait = min(max(wait, minTaskPoll), maxTaskPoll)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("client: task %s: %w", task.ID, context.Cause(ctx))
		case r := <-resultCh: // nil until asked: never ready
			t.Stop()
			taken = true
			return r.raw, r.err
		case <-wake:
		case <-t.C:
		}
		t.Stop()
		next, err := c.GetTask(ctx, task.ID, opts...)
		if err != nil {
			return nil, err
		}
		cur = *next
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// answerTask answers, with the Options handlers, the inputRequests of a
// 2026-07-28 task that were not answered before, and sends the answers
// with tasks/update.
func (c *Client) answerTask(ctx context.Context, t *Task, answered map[string]bool, opts []CallOption) error {
	fresh := map[string]json.RawMessage{}
	for k, v := range t.InputRequests {
		if !answered[k] {
			fresh[k] = v
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	extra, err := c.fulfil(ctx, fresh, nil)
	if err != nil {
		return fmt.Errorf("client: task %s: %w", t.ID, err)
	}
	var responses map[string]json.RawMessage
	_ = json.Unmarshal(extra["inputResponses"], &responses)
	if err := c.UpdateTask(ctx, t.ID, responses, opts...); err != nil {
		return err
	}
	for k := range fresh {
		answered[k] = true
	}
	return nil
}

// Task bookkeeping on the Client: the progress funcs of legacy tasks (by
// the token, the tools/call's id), and the pollers to wake on a status
// notification (by task id).
type taskState struct {
	mu       sync.Mutex
	progress map[int64]func(Progress)
	kept     map[string]int64 // task id -> progress token
	watch    map[string]chan struct{}
}

// tasks is the Client's task bookkeeping, made on first use: most
// sessions never see a task.
func (c *Client) tasks() *taskState {
	if ts := c.taskSt.Load(); ts != nil {
		return ts
	}
	c.taskSt.CompareAndSwap(nil, &taskState{progress: map[int64]func(Progress){}, kept: map[string]int64{}, watch: map[string]chan struct{}{}})
	return c.taskSt.Load()
}

// keepProgress is called by response, for a tools/call that asked to keep
// its progress func past its answer (CallToolTask).
func (c *Client) keepProgress(id int64, fn func(Progress)) {
	ts := c.tasks()
	ts.mu.Lock()
	ts.progress[id] = fn
	ts.mu.Unlock()
}

func (c *Client) forgetProgress(id int64) {
	if id == 0 {
		return
	}
	ts := c.tasks()
	ts.mu.Lock()
	delete(ts.progress, id)
	ts.mu.Unlock()
}

// taskProgress is the kept progress func for token id, if any.
func (c *Client) taskProgress(id int64) func(Progress) {
	ts := c.taskSt.Load()
	if ts == nil {
		return nil
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.progress[id]
}

// ForgetTask stops reporting the progress of a task CallToolTask created
// with WithProgress; AwaitTask calls it when it returns.
func (c *Client) ForgetTask(t *Task) {
	if t == nil {
		return
	}
	ts := c.tasks()
	ts.mu.Lock()
	if id, ok := ts.kept[t.ID]; ok {
		delete(ts.progress, id)
		delete(ts.kept, t.ID)
	}
	ts.mu.Unlock()
}

func (c *Client) watchTask(id string) chan struct{} {
	ts := c.tasks()
	ch := make(chan struct{}, 1)
	ts.mu.Lock()
	ts.watch[id] = ch
	ts.mu.Unlock()
	return ch
}

func (c *Client) unwatchTask(id string, ch chan struct{}) {
	ts := c.tasks()
	ts.mu.Lock()
	if ts.watch[id] == ch {
		delete(ts.watch, id)
	}
	ts.mu.Unlock()
}

// taskNotified wakes the poller of the task a status notification
// (notifications/tasks/status, notifications/tasks) is about.
func (c *Client) taskNotified(params json.RawMessage) {
	ts := c.taskSt.Load()
	if ts == nil {
		return
	}
	var p struct {
		TaskID string `json:"taskId"`
	}
	if json.Unmarshal(params, &p) != nil || p.TaskID == "" {
		return
	}
	ts.mu.Lock()
	ch := ts.watch[p.TaskID]
	ts.mu.Unlock()
	if ch != nil {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// relatedTask returns the related-task _meta member of a server request's
// params, if it has one: the answer carries it back (2025-11-25: every
// message related to a task carries it).
func relatedTask(params json.RawMessage) (json.RawMessage, bool) {
	meta, ok := jsonrpc.Member(params, "_meta")
	if !ok {
		return nil, false
	}
	rt, ok := jsonrpc.Member(meta, mcp.MetaRelatedTask)
	if !ok || len(rt) == 0 || rt[0] != '{' {
		return nil, false
	}
	return rt, true
}

// JSON encodes t in era's wire shape, as a server would send it: for
// EraLegacy a 2025-11-25 Task (ttl, pollInterval); for EraModern a
// 2026-07-28 DetailedTask (ttlMs, pollIntervalMs, and inputRequests,
// result or error when set), without resultType, which the message it
// goes into decides ("task" for a CreateTaskResult, "complete" for
// tasks/get). For a gateway bridging one era's client to the other's
// server. A TTL that was not given is sent as null (unlimited), the
// field being required.
func (t Task) JSON(era Era) json.RawMessage {
	ttl := any(nil)
	if t.TTL > 0 {
		ttl = t.TTL.Milliseconds()
	}
	m := map[string]any{"taskId": t.ID, "status": t.Status, "createdAt": t.CreatedAt, "lastUpdatedAt": t.LastUpdatedAt}
	if t.StatusMessage != "" {
		m["statusMessage"] = t.StatusMessage
	}
	ttlKey, pollKey := "ttl", "pollInterval"
	if era == EraModern {
		ttlKey, pollKey = "ttlMs", "pollIntervalMs"
		if len(t.InputRequests) > 0 {
			m["inputRequests"] = t.InputRequests
		}
		if t.Result != nil {
			m["result"] = t.Result
		}
		if t.Error != nil {
			m["error"] = t.Error
		}
	}
	m[ttlKey] = ttl
	if t.PollInterval > 0 {
		m[pollKey] = max(t.PollInterval.Milliseconds(), 1)
	}
	return mustMarshal(m)
}
