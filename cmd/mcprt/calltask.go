package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

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
	// The first status is a line of its own, also on a terminal: it has
	// the task's id.
	first := true
	raw, err = cv.c.AwaitTask(cv.ctx, task, func(t client.Task) {
		cv.showTask(t, first)
		first = false
	})
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
		cv.stderr.setStatus("mcprt call: " + line)
		return
	}
	cv.stderr.setStatus("")
	fmt.Fprintf(cv.stderr, "mcprt call: %s\n", line)
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
