package client

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/jsonschema"
	"github.com/mcprt/mcprt/handlers/mcp"
)

// validTools leaves out, with a warning, the tools whose x-mcp-header
// annotations are invalid: a 2026-07-28 client over HTTP must not offer
// them.
func (c *Client) validTools(tools []mcp.Tool) []mcp.Tool {
	return slices.DeleteFunc(tools, func(t mcp.Tool) bool {
		_, err := jsonschema.HeaderParams(t.InputSchema)
		if err != nil {
			c.log.Warn("tools/list: leaving out a tool whose x-mcp-header annotations are invalid",
				slog.String("tool", t.Name), slog.String("reason", err.Error()))
		}
		return err != nil
	})
}

// setParamHeaders adds the Mcp-Param headers of a 2026-07-28 tools/call,
// from the schema of the tool as last listed. A value that is absent or
// null gets no header.
func (c *Client) setParamHeaders(h http.Header, params []byte) {
	name := stringParam(params, "name")
	c.mu.Lock()
	tools, _ := c.cache[mTools].([]mcp.Tool)
	var schema json.RawMessage
	for _, t := range tools {
		if t.Name == name {
			schema = t.InputSchema
			break
		}
	}
	c.mu.Unlock()
	bindings, err := jsonschema.HeaderParams(schema)
	if err != nil || len(bindings) == 0 {
		return
	}
	args, _ := jsonrpc.Member(params, "arguments")
	for _, b := range bindings {
		v, ok := args, len(args) > 0
		for _, key := range b.Path {
			if !ok {
				break
			}
			v, ok = jsonrpc.Member(v, key)
		}
		if !ok {
			continue
		}
		if s, ok := jsonschema.HeaderText(v); ok {
			h.Set(hdrParamPrefix+b.Name, mcp.EncodeHeaderValue(s))
		}
	}
}
