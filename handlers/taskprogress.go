package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcprt/mcprt/handlers/tasks"
)

// The 2026-07-28 tasks extension carries no notification of a task's
// progress: the client polls tasks/get. So the progress a task's handler
// reports (Request.Progress, when the tools/call asked for it) is shown
// there, as the working task's statusMessage, for the client to show.
// It is kept in memory only, the latest per task: it says how far the
// work is, not what became of it, and is worth no journal write.

// modernTaskPeer is the Peer of a 2026-07-28 task's handler: progress
// becomes the task's statusMessage; logs and other notifications go
// nowhere, as the extension has none on tasks.
type modernTaskPeer struct {
	ts *taskServe
	id string
}

func (p modernTaskPeer) Notify(method string, params any) bool {
	if method != "notifications/progress" || p.id == "" {
		return false
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return false
	}
	var pr struct {
		Progress float64 `json:"progress"`
		Total    float64 `json:"total"`
		Message  string  `json:"message"`
	}
	if json.Unmarshal(raw, &pr) != nil {
		return false
	}
	msg := pr.Message
	if msg == "" {
		msg = fmt.Sprintf("progress %g", pr.Progress)
		if pr.Total > 0 {
			msg += fmt.Sprintf(" of %g", pr.Total)
		}
	}
	p.ts.progress.Store(p.id, msg)
	return true
}

func (modernTaskPeer) SetTimeout(time.Duration) {} // a task has its ttl

func (modernTaskPeer) Ask(context.Context, string, any) (json.RawMessage, error) {
	return nil, errors.New("handlers: a 2026-07-28 task asks its client with input_required, not Ask")
}

// withProgress is t with the latest progress of its handler in its
// statusMessage (after the message it has, if any) while it works.
func (ts *taskServe) withProgress(t tasks.Task) tasks.Task {
	if t.Status != tasks.Working {
		return t
	}
	v, ok := ts.progress.Load(t.ID)
	if !ok {
		return t
	}
	if t.Message == "" {
		t.Message = v.(string)
	} else {
		t.Message += "; " + v.(string)
	}
	return t
}
