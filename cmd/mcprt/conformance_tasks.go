package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcprt/mcprt/handlers"
)

// Execution objects of the fixture's task tools.
var (
	taskOptional = json.RawMessage(`{"taskSupport":"optional"}`)
	taskRequired = json.RawMessage(`{"taskSupport":"required"}`)
)

// addConformanceTaskTools registers the tools the suite's tasks-*
// scenarios call (the 2026-07-28 tasks extension, SEP-2663), with the
// behaviour each scenario's description asks of them.
func addConformanceTaskTools(s *handlers.Server) {
	// tasks-lifecycle, -request-headers, -dispatch-and-envelope: a tool
	// that never runs as a task.
	s.AddTool(handlers.Tool{Name: "greet", Description: "Greets name (sync only; scenarios tasks-*).",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)},
		func(_ context.Context, _ *handlers.Request, args json.RawMessage) (*handlers.CallToolResult, error) {
			var a struct{ Name string }
			json.Unmarshal(args, &a)
			return handlers.TextResult("Hello, " + a.Name + "!"), nil
		})
	// slow_compute: sleeps seconds, then answers; cancelled while it
	// sleeps, it ends cancelled (the task's status says so already).
	s.AddTool(handlers.Tool{Name: "slow_compute", Description: "Sleeps `seconds`, then returns `label` (task-supporting; scenarios tasks-*).",
		Execution:   taskOptional,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"seconds":{"type":"number","minimum":0},"label":{"type":"string"}}}`)},
		func(ctx context.Context, _ *handlers.Request, args json.RawMessage) (*handlers.CallToolResult, error) {
			var a struct {
				Seconds float64
				Label   string
			}
			json.Unmarshal(args, &a)
			if err := pause(ctx, time.Duration(a.Seconds*float64(time.Second))); err != nil {
				return nil, err
			}
			return handlers.TextResult(fmt.Sprintf("computed %q after %gs", a.Label, a.Seconds)), nil
		})
	// failing_job: a tool error after about a second; required, so that a
	// client without the extension gets -32021 (tasks-required-task-error).
	s.AddTool(handlers.Tool{Name: "failing_job", Description: "Fails as a tool (isError) after about a second (task required; scenarios tasks-*).",
		Execution: taskRequired},
		func(ctx context.Context, _ *handlers.Request, _ json.RawMessage) (*handlers.CallToolResult, error) {
			if err := pause(ctx, time.Second); err != nil {
				return nil, err
			}
			return nil, errors.New("the job failed, as this tool always does")
		})
	// protocol_error_job: its handler panics, a protocol-level failure.
	s.AddTool(handlers.Tool{Name: "protocol_error_job", Description: "Panics: a protocol error, so its task fails (task-supporting; scenario tasks-lifecycle).",
		Execution: taskOptional},
		func(context.Context, *handlers.Request, json.RawMessage) (*handlers.CallToolResult, error) {
			panic("protocol_error_job fails on purpose")
		})
	// confirm_delete: asks for a confirmation (elicitation) and then
	// "deletes" filename.
	s.AddTool(handlers.Tool{Name: "confirm_delete", Description: "Asks to confirm, then deletes filename (nothing is deleted; task-supporting; scenarios tasks-mrtr-input, tasks-dispatch-and-envelope).",
		Execution:   taskOptional,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"filename":{"type":"string"}}}`)},
		func(ctx context.Context, req *handlers.Request, args json.RawMessage) (*handlers.CallToolResult, error) {
			var a struct{ Filename string }
			json.Unmarshal(args, &a)
			raw, err := req.AskAs(ctx, "confirm", "elicitation/create", confElicit("Delete "+a.Filename+"?",
				`{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`).Params)
			if err != nil {
				return nil, err
			}
			var ans struct {
				Action  string
				Content struct{ Confirm bool }
			}
			json.Unmarshal(raw, &ans)
			if ans.Action != "accept" || !ans.Content.Confirm {
				return handlers.TextResult("kept " + a.Filename), nil
			}
			return handlers.TextResult("deleted " + a.Filename), nil
		})
	// multi_input: two questions at once (tasks-mrtr-input's partial
	// fulfilment).
	s.AddTool(handlers.Tool{Name: "multi_input", Description: "Asks two questions at once, then echoes both answers (task-supporting; scenario tasks-mrtr-input).",
		Execution: taskOptional},
		func(ctx context.Context, req *handlers.Request, _ json.RawMessage) (*handlers.CallToolResult, error) {
			answers, err := req.AskAll(ctx, map[string]handlers.InputRequest{
				"first":  confElicit("Your name?", confNameSchema),
				"second": confElicit("Confirm?", `{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`),
			})
			if err != nil {
				return nil, err
			}
			return handlers.TextResult("got " + elicited(answers["first"], "name") + " and " + string(answers["second"])), nil
		})
	// test_tool_with_task: asks the user's name in the request's own
	// rounds (input_required), then becomes a task that greets them
	// (tasks-mrtr-composition).
	s.AddTool(handlers.Tool{Name: "test_tool_with_task", Description: "Asks the user's name (key user_name), then runs as a task that greets them (task required; scenario tasks-mrtr-composition).",
		Execution: taskRequired, AskBeforeTask: true},
		func(ctx context.Context, req *handlers.Request, _ json.RawMessage) (*handlers.CallToolResult, error) {
			raw, err := req.AskAs(ctx, "user_name", "elicitation/create", confElicit("What is your name?", confNameSchema).Params)
			if err != nil {
				return nil, err
			}
			return handlers.TextResult("Hello, " + elicited(raw, "name") + "!"), nil
		})
}
