// Command client is the client the official MCP conformance suite drives
// in its client scenarios: `conformance client --command BIN`, where BIN
// is this program built (go build -o BIN ./test/conformance/client). The
// suite runs it as `BIN URL` against a mock server of the scenario, with
// MCP_CONFORMANCE_SCENARIO naming the scenario, MCP_CONFORMANCE_CONTEXT
// holding its JSON context, and MCP_CONFORMANCE_PROTOCOL_VERSION the
// revision to speak when the run pins one.
//
// It is built on session/client alone: everything a scenario judges (the
// handshake or the per-request _meta, the HTTP headers, SSE resumption,
// input_required rounds, schemas kept as given) is the client package's
// own behaviour, which the gateway and the mcprt verbs share. What this
// program adds is only what a host application would: which tool to call,
// and how its user answers a question (a form's defaults, a sampled text,
// a root).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/session/client"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: client URL (with MCP_CONFORMANCE_SCENARIO set)")
		os.Exit(2)
	}
	url := os.Args[len(os.Args)-1]
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := run(ctx, scenario, url); err != nil {
		fmt.Fprintf(os.Stderr, "client: %s: %v\n", scenario, err)
		os.Exit(1)
	}
}

// scenarioContext is MCP_CONFORMANCE_CONTEXT, the part of it a host
// acts on: the tool calls a scenario asks for, by name and arguments.
type scenarioContext struct {
	ToolCalls []struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"toolCalls"`
}

// run plays the host in one scenario.
func run(ctx context.Context, scenario, url string) error {
	var sc scenarioContext
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &sc); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	play, ok := scenarios[scenario]
	if len(sc.ToolCalls) > 0 {
		play, ok = callListed(sc), true
	}
	opts := options()
	if strings.HasPrefix(scenario, "auth/") {
		// Every OAuth scenario is the same host: it lists the tools and
		// calls the first; what differs is the client's configuration.
		play, ok = listAndCallFirst, true
		a, err := authorizer(url, scenario)
		if err != nil {
			return err
		}
		opts.HTTPClient = a.Client()
	}
	if !ok {
		return fmt.Errorf("unknown scenario %q", scenario)
	}
	c, err := client.ConnectURL(ctx, url, opts)
	if err != nil {
		return err
	}
	defer c.Close()
	return play(ctx, c)
}

// options are the host's: it declares and answers what a user at a
// keyboard would, and speaks the revision the run pins, if any.
func options() *client.Options {
	o := &client.Options{
		ClientInfo:  mcp.Implementation{Name: "mcprt-conformance-client", Version: "1.0.0"},
		Logger:      slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Elicitation: acceptDefaults,
		Sampling:    sample,
		Roots: func(context.Context) ([]mcp.Root, error) {
			return []mcp.Root{{URI: "file:///conformance", Name: "conformance"}}, nil
		},
	}
	if v := os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION"); v != "" {
		o.Version = v
	}
	return o
}

// acceptDefaults answers an elicitation as a user who submits the form as
// it was shown: every field at its default (SEP-1034).
func acceptDefaults(_ context.Context, params json.RawMessage) (any, error) {
	var p struct {
		RequestedSchema struct {
			Properties map[string]struct {
				Default json.RawMessage `json:"default"`
			} `json:"properties"`
		} `json:"requestedSchema"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	content := map[string]json.RawMessage{}
	for name, prop := range p.RequestedSchema.Properties {
		if prop.Default != nil {
			content[name] = prop.Default
		}
	}
	return map[string]any{"action": "accept", "content": content}, nil
}

// sample answers a sampling request as a model would.
func sample(context.Context, json.RawMessage) (any, error) {
	return map[string]any{
		"role": "assistant", "model": "conformance-model", "stopReason": "endTurn",
		"content": map[string]any{"type": "text", "text": "A sampled answer."},
	}, nil
}

// scenarios are the hosts' parts, by scenario.
var scenarios = map[string]func(context.Context, *client.Client) error{
	"initialize":                          listAndCallFirst,
	"tools_call":                          listAndCallFirst,
	"elicitation-sep1034-client-defaults": callTool("test_client_elicitation_defaults", nil),
	"sse-retry":                           callTool("test_reconnection", nil),
	"request-metadata":                    listOnly,
	"sep-2322-client-request-state":       callAll,
	"http-standard-headers":               callAll,
	"http-custom-headers":                 callAll,
	"http-invalid-tool-headers":           callAll,
	"json-schema-ref-no-deref":            listOnly,
	"json-schema-2020-12-preservation":    echoSchema,
	"sep-2640-client-no-prefetch":         listSkills,
	"sep-2640-client-verify-digest":       loadFirstSkill,
	"sep-2640-client-verify-size":         loadFirstSkill,
	"sep-2640-client-verify-frontmatter":  loadFirstSkill,
}

// listSkills lists the server's skills, and loads none: a host reads a
// skill's files when it uses the skill, not before.
func listSkills(ctx context.Context, c *client.Client) error {
	_, err := c.ListSkills(ctx)
	return err
}

// loadFirstSkill loads the first skill listed, as a host about to use it:
// session/client checks each file against the entry and stops at the
// first that fails; a refusal is the host doing its job, not an error of
// this program.
func loadFirstSkill(ctx context.Context, c *client.Client) error {
	list, err := c.ListSkills(ctx)
	if err != nil || len(list) == 0 {
		return err
	}
	if _, err := c.LoadSkill(ctx, &list[0]); err != nil {
		fmt.Fprintf(os.Stderr, "client: skill refused: %v\n", err)
	}
	return nil
}

// listOnly lists the tools.
func listOnly(ctx context.Context, c *client.Client) error {
	_, err := c.ListTools(ctx)
	return err
}

// listAndCallFirst lists the tools and calls the first with two numbers,
// as the scenarios' add tool takes.
func listAndCallFirst(ctx context.Context, c *client.Client) error {
	tools, err := c.ListTools(ctx)
	if err != nil || len(tools) == 0 {
		return err
	}
	_, err = c.CallTool(ctx, tools[0].Name, map[string]any{"a": 2, "b": 3})
	return err
}

// callTool calls one tool.
func callTool(name string, args map[string]any) func(context.Context, *client.Client) error {
	return func(ctx context.Context, c *client.Client) error {
		if _, err := c.ListTools(ctx); err != nil {
			return err
		}
		_, err := c.CallTool(ctx, name, args)
		return err
	}
}

// callListed makes the tool calls the scenario's context asks for, once
// the tools are listed (the client reads their x-mcp-header annotations
// from the listing).
func callListed(sc scenarioContext) func(context.Context, *client.Client) error {
	return func(ctx context.Context, c *client.Client) error {
		if _, err := c.ListTools(ctx); err != nil {
			return err
		}
		for _, tc := range sc.ToolCalls {
			var args any
			if len(tc.Arguments) > 0 {
				args = tc.Arguments
			}
			if _, err := c.CallTool(ctx, tc.Name, args); err != nil {
				return fmt.Errorf("%s: %w", tc.Name, err)
			}
		}
		return nil
	}
}

// callAll calls every tool listed, each with arguments made from its input
// schema.
func callAll(ctx context.Context, c *client.Client) error {
	tools, err := c.ListTools(ctx)
	if err != nil {
		return err
	}
	for _, t := range tools {
		if _, err := c.CallTool(ctx, t.Name, argumentsFor(t.InputSchema)); err != nil {
			fmt.Fprintf(os.Stderr, "client: %s: %v\n", t.Name, err)
		}
	}
	return nil
}

// argumentsFor makes arguments that fit a schema's properties: each
// property's default, or a value of its type.
func argumentsFor(schema json.RawMessage) map[string]any {
	var s struct {
		Properties map[string]struct {
			Type    any             `json:"type"`
			Default json.RawMessage `json:"default"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s)
	args := map[string]any{}
	for name, p := range s.Properties {
		switch {
		case p.Default != nil:
			args[name] = p.Default
		case p.Type == "integer" || p.Type == "number":
			args[name] = 1
		case p.Type == "boolean":
			args[name] = true
		case p.Type == "object":
			args[name] = map[string]any{}
		case p.Type == "array":
			args[name] = []any{}
		default:
			args[name] = "value"
		}
	}
	return args
}

// echoSchema sends the focal tool's input schema back, as the client read
// it, through the echo tool.
func echoSchema(ctx context.Context, c *client.Client) error {
	tools, err := c.ListTools(ctx)
	if err != nil {
		return err
	}
	for _, t := range tools {
		if t.Name == "json_schema_2020_12_tool" {
			_, err := c.CallTool(ctx, "json_schema_echo", map[string]any{"schema": t.InputSchema})
			return err
		}
	}
	return fmt.Errorf("no json_schema_2020_12_tool among %d tools", len(tools))
}
