package client

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestTaskOf reads both eras' CreateTaskResult and refuses plain results.
func TestTaskOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw  string
		id   string
		ttl  time.Duration
		poll time.Duration
	}{
		{`{"task":{"taskId":"a","status":"working","createdAt":"x","lastUpdatedAt":"x","ttl":60000,"pollInterval":1000}}`, "a", time.Minute, time.Second},
		{`{"task":{"taskId":"b","status":"working","createdAt":"x","lastUpdatedAt":"x","ttl":null}}`, "b", -1, 0},
		{`{"resultType":"task","taskId":"c","status":"working","createdAt":"x","lastUpdatedAt":"x","ttlMs":5000,"pollIntervalMs":250}`, "c", 5 * time.Second, 250 * time.Millisecond},
		{`{"content":[]}`, "", 0, 0},
		{`{"resultType":"complete","content":[]}`, "", 0, 0},
		{`{"resultType":"task"}`, "", 0, 0},
	} {
		task, ok := taskOf(json.RawMessage(tc.raw))
		if ok != (tc.id != "") {
			t.Errorf("%s: ok %v", tc.raw, ok)
			continue
		}
		if ok && (task.ID != tc.id || task.TTL != tc.ttl || task.PollInterval != tc.poll || task.Status != TaskWorking) {
			t.Errorf("%s: %+v", tc.raw, task)
		}
	}
}

// TestTaskJSON: a task encoded in either era's shape reads back the same,
// and carries only that era's field names.
func TestTaskJSON(t *testing.T) {
	t.Parallel()
	task := Task{ID: "t1", Status: TaskCompleted, StatusMessage: "done", CreatedAt: "2026-11-27T00:00:00Z",
		LastUpdatedAt: "2026-11-27T00:00:05Z", TTL: time.Minute, PollInterval: 500 * time.Millisecond,
		Result: json.RawMessage(`{"content":[]}`)}
	legacy := string(task.JSON(EraLegacy))
	modern := string(task.JSON(EraModern))
	if !strings.Contains(legacy, `"ttl":60000`) || !strings.Contains(legacy, `"pollInterval":500`) || strings.Contains(legacy, "Ms") || strings.Contains(legacy, "result") {
		t.Errorf("legacy %s", legacy)
	}
	if !strings.Contains(modern, `"ttlMs":60000`) || !strings.Contains(modern, `"pollIntervalMs":500`) || !strings.Contains(modern, `"result":{"content":[]}`) {
		t.Errorf("modern %s", modern)
	}
	back, ok := taskOf(json.RawMessage(`{"resultType":"task",` + modern[1:]))
	if !ok || back.ID != task.ID || back.TTL != task.TTL || back.PollInterval != task.PollInterval || string(back.Result) != string(task.Result) || back.StatusMessage != "done" {
		t.Errorf("modern round trip: %+v", back)
	}
	back, ok = taskOf(json.RawMessage(`{"task":` + legacy + `}`))
	if !ok || back.ID != task.ID || back.TTL != task.TTL || back.Status != TaskCompleted {
		t.Errorf("legacy round trip: %+v", back)
	}
	if s := string(Task{ID: "x", Status: TaskWorking}.JSON(EraModern)); !strings.Contains(s, `"ttlMs":null`) {
		t.Errorf("no TTL: %s", s)
	}
}
