//go:build unix

package client_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/session/client"
)

// TestLegacyTaskProgressAndRelated: a 2025-11-25 task's progress, sent
// with its tools/call's token after the CreateTaskResult, still reaches
// the caller's WithProgress func; the elicitation the task sends while
// tasks/result waits is answered by the Options' Elicitation, and the
// answer carries the related-task _meta back; a tool without taskSupport
// is called plainly; and the progress func is let go once AwaitTask
// returns.
func TestLegacyTaskProgressAndRelated(t *testing.T) {
	t.Parallel()
	cmd, log := fakeCmd(t, "legacy-tasks")
	c := connect(t, cmd, opts(client.Options{Era: client.EraLegacy, Elicitation: func(context.Context, json.RawMessage) (any, error) {
		return map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}, nil
	}}))
	var mu sync.Mutex
	var progress []string
	task, raw, err := c.CallToolTask(ctx(t), "ttask", nil, client.WithTaskTTL(60000_000_000), client.WithProgress(func(p client.Progress) {
		mu.Lock()
		progress = append(progress, p.Message)
		mu.Unlock()
	}))
	if err != nil || task == nil {
		t.Fatalf("CallToolTask: %+v %s %v", task, raw, err)
	}
	raw, err = c.AwaitTask(ctx(t), task, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `\"name\":\"Ada\"`) {
		t.Errorf("result %s", raw)
	}
	eventually(t, "three progress notifications", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(progress) == 3
	})
	if strings.Join(progress, ",") != "step 1,step 2,step 3" {
		t.Errorf("progress %q", progress)
	}
	var call, answer fakeMsg
	for _, m := range sent(t, log) {
		switch {
		case m.Method == "tools/call":
			call = m
		case m.Method == "" && strings.HasPrefix(string(m.ID), `"s`):
			answer = m
		}
	}
	if !strings.Contains(string(call.Params), `"task":{"ttl":60000}`) {
		t.Errorf("tools/call params %s, want task.ttl 60000", call.Params)
	}
	if !strings.Contains(string(answer.Result), `"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"`+task.ID+`"}}`) {
		t.Errorf("the elicitation's answer lacks the related-task _meta: %s", answer.Result)
	}

	task, raw, err = c.CallToolTask(ctx(t), "echo", map[string]string{"text": "plain"})
	if err != nil || task != nil || !strings.Contains(string(raw), "plain") {
		t.Fatalf("echo: %+v %s %v", task, raw, err)
	}
}

// TestLegacyTaskStatusNotification: a task whose server suggests polling
// once an hour is seen to end by its notifications/tasks/status, which
// wakes AwaitTask's wait.
func TestLegacyTaskStatusNotification(t *testing.T) {
	t.Parallel()
	cmd, _ := fakeCmd(t, "legacy-tasks")
	c := connect(t, cmd, opts(client.Options{Era: client.EraLegacy}))
	task, _, err := c.CallToolTask(ctx(t), "tnotify", nil)
	if err != nil || task == nil {
		t.Fatal(task, err)
	}
	if task.PollInterval != time.Hour {
		t.Errorf("pollInterval %v", task.PollInterval)
	}
	raw, err := c.AwaitTask(ctx(t), task, nil)
	if err != nil || !strings.Contains(string(raw), "notified") {
		t.Fatalf("AwaitTask: %s %v", raw, err)
	}
}
