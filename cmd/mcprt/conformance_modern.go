package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
)

// The tools and the prompt of the suite's 2026-07-28 scenarios
// (server-stateless, input-required-result-*, http-custom-header-server-
// validation). What they check is the runtime's own work: the
// input_required rounds and their signed requestState, the capability
// checks, the header checks, the per-request log level, the listen
// streams. The handlers only ask, log or change the registry, as any
// server's would.

// Schemas of the questions the input-required scenarios expect, by key.
const (
	confNameSchema    = `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`
	confOKSchema      = `{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`
	confColorSchema   = `{"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}`
	confContextSchema = `{"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}`
	confValueSchema   = `{"type":"object","properties":{"value":{"type":"string"}},"required":["value"]}`
)

func confElicit(message, schema string) handlers.InputRequest {
	return handlers.InputRequest{Method: "elicitation/create", Params: map[string]any{
		"message": message, "requestedSchema": json.RawMessage(schema),
	}}
}

func confSample(text string, maxTokens int) handlers.InputRequest {
	return handlers.InputRequest{Method: "sampling/createMessage", Params: map[string]any{
		"messages":  []handlers.SamplingMessage{{Role: "user", Content: handlers.TextContent(text)}},
		"maxTokens": maxTokens,
	}}
}

var confRoots = handlers.InputRequest{Method: "roots/list", Params: map[string]any{}}

// elicited is the field of an accepted elicitation's content, as text.
func elicited(raw json.RawMessage, field string) string {
	var e handlers.ElicitResult
	if json.Unmarshal(raw, &e) != nil || e.Action != "accept" {
		return ""
	}
	return fmt.Sprint(e.Content[field])
}

// sampled is the text of a sampled message.
func sampled(raw json.RawMessage) string {
	var m handlers.CreateMessageResult
	_ = json.Unmarshal(raw, &m)
	return m.Content.Text
}

// rootURIs lists the URIs of a roots/list result.
func rootURIs(raw json.RawMessage) string {
	var r struct{ Roots []mcp.Root }
	_ = json.Unmarshal(raw, &r)
	uris := make([]string, len(r.Roots))
	for i, root := range r.Roots {
		uris[i] = root.URI
	}
	return strings.Join(uris, ", ")
}

// askTool is a tool without arguments whose handler asks the client.
func askTool(s *handlers.Server, name, description string, h func(ctx context.Context, req *handlers.Request) (string, error)) {
	s.AddTool(handlers.Tool{Name: name, Description: description},
		func(ctx context.Context, req *handlers.Request, _ json.RawMessage) (*handlers.CallToolResult, error) {
			text, err := h(ctx, req)
			if err != nil {
				return nil, err
			}
			return handlers.TextResult(text), nil
		})
}

func addConformanceModernTools(s *handlers.Server) {
	// input-required-result-basic-elicitation, -result-type,
	// -missing-input-response, -ignore-extra-params, -validate-input
	askTool(s, "test_input_required_result_elicitation", "Asks the user's name (elicitation, key user_name) and greets them (scenario input-required-result-basic-elicitation, SEP-2322).",
		func(ctx context.Context, req *handlers.Request) (string, error) {
			raw, err := req.AskAs(ctx, "user_name", "elicitation/create", confElicit("What is your name?", confNameSchema).Params)
			if err != nil {
				return "", err
			}
			return "Hello, " + elicited(raw, "name") + "!", nil
		})
	// input-required-result-basic-sampling
	askTool(s, "test_input_required_result_sampling", "Asks the client's model the capital of France (sampling, key capital_question) and returns its answer (scenario input-required-result-basic-sampling).",
		func(ctx context.Context, req *handlers.Request) (string, error) {
			q := confSample("What is the capital of France?", 100)
			raw, err := req.AskAs(ctx, "capital_question", q.Method, q.Params)
			if err != nil {
				return "", err
			}
			return "The model said: " + sampled(raw), nil
		})
	// input-required-result-basic-list-roots
	askTool(s, "test_input_required_result_list_roots", "Asks the client's roots (roots/list, key client_roots) and lists them (scenario input-required-result-basic-list-roots).",
		func(ctx context.Context, req *handlers.Request) (string, error) {
			raw, err := req.AskAs(ctx, "client_roots", confRoots.Method, confRoots.Params)
			if err != nil {
				return "", err
			}
			return "Roots: " + rootURIs(raw), nil
		})
	// input-required-result-request-state: the runtime signs the
	// requestState and refuses one it did not issue for this call, so a
	// handler that runs with the answer has had its state checked.
	askTool(s, "test_input_required_result_request_state", "Asks for a confirmation (key confirm); the retry's requestState is checked by the runtime, so an answer means state-ok (scenario input-required-result-request-state).",
		func(ctx context.Context, req *handlers.Request) (string, error) {
			raw, err := req.AskAs(ctx, "confirm", "elicitation/create", confElicit("Please confirm", confOKSchema).Params)
			if err != nil {
				return "", err
			}
			return "state-ok: confirmed=" + elicited(raw, "ok"), nil
		})
	// input-required-result-tampered-state
	askTool(s, "test_input_required_result_tampered_state", "Asks for a confirmation (key confirm); a retry whose requestState was altered is refused by the runtime with -32602 (scenario input-required-result-tampered-state).",
		func(ctx context.Context, req *handlers.Request) (string, error) {
			raw, err := req.AskAs(ctx, "confirm", "elicitation/create", confElicit("Please confirm", confOKSchema).Params)
			if err != nil {
				return "", err
			}
			return "confirmed=" + elicited(raw, "ok"), nil
		})
	// input-required-result-multiple-input-requests
	askTool(s, "test_input_required_result_multiple_inputs", "Asks a name, a sampled greeting and the roots in one round (keys user_name, greeting, client_roots) (scenario input-required-result-multiple-input-requests).",
		func(ctx context.Context, req *handlers.Request) (string, error) {
			answers, err := req.AskAll(ctx, map[string]handlers.InputRequest{
				"user_name":    confElicit("What is your name?", confNameSchema),
				"greeting":     confSample("Generate a greeting", 50),
				"client_roots": confRoots,
			})
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("name=%s greeting=%s roots=%s", elicited(answers["user_name"], "name"),
				sampled(answers["greeting"]), rootURIs(answers["client_roots"])), nil
		})
	// input-required-result-multi-round: the second question is asked
	// only once the first is answered; the first answer travels in the
	// requestState of the second round.
	askTool(s, "test_input_required_result_multi_round", "Asks a name (key step1), then a favourite colour (key step2), one round each (scenario input-required-result-multi-round).",
		func(ctx context.Context, req *handlers.Request) (string, error) {
			name, err := req.AskAs(ctx, "step1", "elicitation/create", confElicit("Step 1: What is your name?", confNameSchema).Params)
			if err != nil {
				return "", err
			}
			color, err := req.AskAs(ctx, "step2", "elicitation/create", confElicit("Step 2: What is your favorite color?", confColorSchema).Params)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("name=%s color=%s", elicited(name, "name"), elicited(color, "color")), nil
		})
	// input-required-result-capability-check: asks only what the client
	// can answer; Ask itself refuses a question whose capability the
	// request did not declare.
	askTool(s, "test_input_required_result_capabilities", "Asks for a value by elicitation and by sampling, each only if the client declared that capability (scenario input-required-result-capability-check).",
		func(ctx context.Context, req *handlers.Request) (string, error) {
			qs := map[string]handlers.InputRequest{}
			if req.HasClientCapability("elicitation") {
				qs["elicit_input"] = confElicit("Elicitation input", confValueSchema)
			}
			if req.HasClientCapability("sampling") {
				qs["sample_input"] = confSample("Sample request", 50)
			}
			if len(qs) == 0 {
				return "No supported capabilities declared", nil
			}
			answers, err := req.AskAll(ctx, qs)
			if err != nil {
				return "", err
			}
			keys := make([]string, 0, len(answers))
			for k := range answers {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			return "capabilities-ok: received " + strings.Join(keys, ","), nil
		})
	// server-stateless: a tool that needs sampling, which the probe does
	// not declare: the runtime answers -32021 (HTTP 400).
	askTool(s, "test_missing_capability", "Needs the client's sampling capability: asks its model (scenario server-stateless, -32021 without it).",
		func(ctx context.Context, req *handlers.Request) (string, error) {
			res, err := req.CreateMessage(ctx, []handlers.SamplingMessage{{Role: "user", Content: handlers.TextContent("Say something")}}, 20)
			if err != nil {
				return "", err
			}
			return "Success: " + res.Content.Text, nil
		})
	// server-stateless: a question on a 2026-07-28 request comes back as
	// an input_required result, never as a request on its stream.
	askTool(s, "test_streaming_elicitation", "Elicits a confirmation while it runs (scenario server-stateless: on a 2026-07-28 request the question is an input_required result, not a request on the response stream).",
		func(ctx context.Context, req *handlers.Request) (string, error) {
			req.Progress(50, 100, "halfway")
			res, err := req.Elicit(ctx, "Continue?", json.RawMessage(confOKSchema))
			if err != nil {
				return "", err
			}
			return "Streaming complete: " + res.Action, nil
		})
	// server-stateless: logs at info while it runs; the runtime sends the
	// records only to a request that set a log level.
	askTool(s, "test_logging_tool", "Logs one info message while it runs (scenario server-stateless: no notifications/message for a request without _meta logLevel).",
		func(_ context.Context, req *handlers.Request) (string, error) {
			req.Log("info", "conformance", "Diagnostic trace logging activated")
			return "Logging evaluated", nil
		})
	// server-stateless: the tool and prompt lists change (the item is
	// registered again, in place), and listen streams that asked are told.
	askTool(s, "test_trigger_tool_change", "Registers test_simple_text again, which changes the tool list: listen streams that asked hear notifications/tools/list_changed (scenario server-stateless).",
		func(context.Context, *handlers.Request) (string, error) {
			addSimpleText(s)
			return "Mutation triggered", nil
		})
	askTool(s, "test_trigger_prompt_change", "Registers test_simple_prompt again, which changes the prompt list: listen streams that asked hear notifications/prompts/list_changed (scenario server-stateless).",
		func(context.Context, *handlers.Request) (string, error) {
			addSimplePrompt(s)
			return "Mutation triggered", nil
		})
	// http-custom-header-server-validation: an argument mirrored in an
	// Mcp-Param-Region header, which the transport checks against the body.
	s.AddTool(handlers.Tool{
		Name:        "test_custom_header",
		Description: "Echoes region, an argument a 2026-07-28 HTTP client also sends as the Mcp-Param-Region header (scenario http-custom-header-server-validation, SEP-2243).",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","description":"A region name","x-mcp-header":"Region"}},"required":["region"]}`),
	}, func(_ context.Context, _ *handlers.Request, args json.RawMessage) (*handlers.CallToolResult, error) {
		region, _ := handlers.StringArg(args, "region")
		return handlers.TextResult("region=" + region), nil
	})
}

func addConformanceModernPrompts(s *handlers.Server) {
	// input-required-result-non-tool-request
	s.AddPrompt(handlers.Prompt{
		Name: "test_input_required_result_prompt", Title: "Prompt Asking For Context",
		Description: "Asks the user for context (elicitation, key user_context) before it is built (scenario input-required-result-non-tool-request).",
	}, func(ctx context.Context, req *handlers.Request, _ map[string]string) (*handlers.GetPromptResult, error) {
		raw, err := req.AskAs(ctx, "user_context", "elicitation/create", confElicit("What context should the prompt use?", confContextSchema).Params)
		if err != nil {
			return nil, err
		}
		return &handlers.GetPromptResult{Messages: []handlers.PromptMessage{
			{Role: "user", Content: handlers.TextContent("Context: " + elicited(raw, "context"))},
		}}, nil
	})
}
