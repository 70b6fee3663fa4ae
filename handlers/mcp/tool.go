package mcp

import "encoding/json"

// Tool describes a tool as tools/list shows it.
type Tool struct {
	// Name is 1 to 128 characters from A-Z, a-z, 0-9, '_', '-' and '.'.
	Name string `json:"name"`
	// Title is a display name (sent from 2025-06-18 on).
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// InputSchema is a JSON Schema of the arguments object; it must have
	// "type":"object". Nil means a tool without arguments.
	InputSchema json.RawMessage `json:"inputSchema"`
	// OutputSchema, when set, describes structuredContent, which the tool
	// must then return (sent from 2025-06-18 on).
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// Annotations are sent from 2025-03-26 on.
	Annotations *ToolAnnotations `json:"annotations,omitempty"`
	// Icons are sent from 2025-11-25 on.
	Icons []Icon `json:"icons,omitempty"`
	// Execution is the tool's execution object (2025-11-25 on), such as
	// {"taskSupport":"optional"}, sent as it is: nil for none.
	Execution json.RawMessage `json:"execution,omitempty"`
	// Meta is the tool's _meta (2025-06-18 on), a JSON object sent as it
	// is: how extensions describe a tool, such as an MCP App's
	// {"ui":{"resourceUri":"ui://…"}}. Nil for none.
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// TaskSupport is a tool's execution.taskSupport (2025-11-25): "forbidden"
// (also when absent), "optional" or "required".
func (t Tool) TaskSupport() string {
	var e struct {
		TaskSupport string `json:"taskSupport"`
	}
	if len(t.Execution) > 0 && json.Unmarshal(t.Execution, &e) == nil && e.TaskSupport != "" {
		return e.TaskSupport
	}
	return "forbidden"
}

// ToolAnnotations are hints about a tool's behaviour; clients treat them as untrusted.
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}
