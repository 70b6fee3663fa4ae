package mcp

import "encoding/json"

// Prompt describes a prompt template, as prompts/list shows it.
type Prompt struct {
	Name string `json:"name"`
	// Title is a display name (sent from 2025-06-18 on).
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
	// Icons are sent from 2025-11-25 on.
	Icons []Icon `json:"icons,omitempty"`
	// Meta is the prompt's _meta (2025-06-18 on), a JSON object sent as it
	// is. Nil for none.
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// PromptArgument is one argument a prompt accepts. Prompt arguments are
// strings.
type PromptArgument struct {
	Name string `json:"name"`
	// Title is a display name (sent from 2025-06-18 on).
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// Required arguments must be given to prompts/get (else -32602).
	Required bool `json:"required,omitempty"`
}
