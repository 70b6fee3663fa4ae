package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/mcprt/mcprt/handlers/jsonschema"
	"github.com/mcprt/mcprt/handlers/mcp"
)

// AddTool registers (or replaces, by name) a tool whose arguments are
// decoded into an In and whose result is an Out. The tool is an mcp.Tool,
// as clients see it, or a Tool: one with the server's own settings too
// (its timeout, who may call it, whether it may run as a task).
//
// When t.InputSchema is nil it is derived from In, and when t.OutputSchema
// is nil it is derived from Out (see package jsonschema for the field tags:
// description, enum, jsonschema:"required,minimum=1,..."). In must be a
// struct or map type (or an interface type, for any object); Out must be a
// struct or map type, or a pointer to one.
//
// The handler's Out becomes the result's structuredContent, checked against
// the output schema, and its JSON text becomes the content for clients that
// do not read structuredContent. An error from the handler becomes a result
// with isError set (a *jsonrpc.Error, that protocol error).
//
// If Out is an interface type (such as any) the tool has no output schema
// and the value returned decides the result: a string becomes one text
// block, a *mcp.CallToolResult is sent as it is, nil gives an empty result, and
// any other value becomes structuredContent as above.
//
// AddTool panics if a schema cannot be derived or compiled, and in the
// cases where Server.AddTool panics.
func AddTool[T mcp.Tool | Tool, In, Out any](s *Server, tool T, h func(ctx context.Context, req *Request, in In) (Out, error)) {
	if h == nil {
		panic("handlers: AddTool needs a handler")
	}
	var t Tool
	switch v := any(tool).(type) {
	case mcp.Tool:
		t.Tool = v
	case Tool:
		t = v
	}
	inType, outType := reflect.TypeFor[In](), reflect.TypeFor[Out]()
	if t.InputSchema == nil {
		if inType.Kind() == reflect.Interface {
			t.InputSchema = json.RawMessage(`{"type":"object"}`)
		} else {
			t.InputSchema = derive(inType, t.Name, "In")
		}
	}
	dynamic := outType.Kind() == reflect.Interface
	if t.OutputSchema == nil && !dynamic {
		t.OutputSchema = derive(outType, t.Name, "Out")
	}
	s.AddTool(t, func(ctx context.Context, req *Request, args json.RawMessage) (*mcp.CallToolResult, error) {
		var in In
		if err := json.Unmarshal(args, &in); err != nil {
			return nil, &invalidArguments{err}
		}
		out, err := h(ctx, req, in)
		if err != nil {
			return nil, err
		}
		if dynamic {
			switch v := any(out).(type) {
			case nil:
				return &mcp.CallToolResult{}, nil
			case string:
				return mcp.TextResult(v), nil
			case *mcp.CallToolResult:
				return v, nil
			}
		}
		return &mcp.CallToolResult{StructuredContent: out}, nil
	})
}

// derive returns the schema of a typed tool's In or Out, which must
// describe a JSON object.
func derive(t reflect.Type, tool, param string) json.RawMessage {
	schema, err := jsonschema.Reflect(t)
	if err != nil {
		panic(fmt.Sprintf("handlers: tool %q: %s: %v", tool, param, err))
	}
	if !isObjectSchema(schema) {
		panic(fmt.Sprintf("handlers: tool %q: %s (%s) must be a struct or map type: MCP tool schemas describe objects", tool, param, t))
	}
	return schema
}
