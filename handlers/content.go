package handlers

import (
	"encoding/json"
	"fmt"

	"github.com/mcprt/mcprt/handlers/mcp"
)

// The revisions at which features appeared (mcp.Version20250326: tool
// annotations, audio content, completions capability; mcp.Version20250618:
// title, outputSchema/structuredContent, resource_link, lastModified,
// context.arguments; mcp.Version20251125: icons, invalid tool arguments
// become tool errors) are the vocabulary's.

// since reports whether req is served in revision v or later. A request
// built by hand without a Version is served as the newest revision.
func since(req *Request, v string) bool {
	return req.Modern || req.Version == "" || req.Version >= v
}

// Annotations tell a client how to use a piece of content or a resource.
type Annotations struct {
	// Audience lists who the content is for: "user", "assistant" or both.
	Audience []string `json:"audience,omitempty"`
	// Priority ranges from 0 (least important) to 1 (effectively required).
	Priority *float64 `json:"priority,omitempty"`
	// LastModified is an ISO 8601 timestamp (sent from 2025-06-18 on).
	LastModified string `json:"lastModified,omitempty"`
}

func (a *Annotations) forVersion(req *Request) *Annotations {
	if a == nil || a.LastModified == "" || since(req, mcp.Version20250618) {
		return a
	}
	b := *a
	b.LastModified = ""
	if b.Audience == nil && b.Priority == nil {
		return nil
	}
	return &b
}

// Icon is an image a client may show for a tool, resource, template or
// prompt (sent from 2025-11-25 on).
type Icon struct {
	// Src is an https: or data: URI.
	Src      string   `json:"src"`
	MimeType string   `json:"mimeType,omitempty"`
	Sizes    []string `json:"sizes,omitempty"` // e.g. "48x48", "any"
	Theme    string   `json:"theme,omitempty"` // "light" or "dark"
}

func iconsFor(icons []Icon, req *Request) []Icon {
	if since(req, mcp.Version20251125) {
		return icons
	}
	return nil
}

// Content is one block of a tool result or a prompt message. Build it with
// TextContent, ImageContent, AudioContent, ResourceLink or EmbeddedResource.
//
// Blocks a client's revision does not know are adapted rather than sent:
// before 2025-03-26 an audio block becomes a text block saying that audio
// was left out, and before 2025-06-18 a resource_link becomes a text block
// with the link's name and URI.
type Content struct {
	// Type is "text", "image", "audio", "resource_link" or "resource".
	Type string
	// Text of a text block.
	Text string
	// Data of an image or audio block: the raw bytes (base64 on the wire).
	Data []byte
	// MimeType of an image or audio block.
	MimeType string
	// Link is the resource a resource_link block points to.
	Link *Resource
	// Resource is the content of an embedded resource block.
	Resource *mcp.ResourceContents
	// Annotations of the block (for resource_link, set Link.Annotations).
	Annotations *Annotations
	// Meta is the block's _meta (2025-06-18 on), a JSON object sent as it
	// is (for resource_link, set Link.Meta).
	Meta json.RawMessage
}

// mustBeObject panics unless raw, the member of an item being registered,
// is absent or a JSON object: what _meta and execution must be (the
// caller reads null as absent first, with nullIsNone).
func mustBeObject(kind, name, member string, raw json.RawMessage) {
	if raw == nil {
		return
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		panic(fmt.Sprintf("handlers: %s %q: %s must be a JSON object", kind, name, member))
	}
}

// TextContent returns a text block.
func TextContent(text string) Content { return Content{Type: "text", Text: text} }

// ImageContent returns an image block.
func ImageContent(data []byte, mimeType string) Content {
	return Content{Type: "image", Data: data, MimeType: mimeType}
}

// AudioContent returns an audio block (2025-03-26 and later).
func AudioContent(data []byte, mimeType string) Content {
	return Content{Type: "audio", Data: data, MimeType: mimeType}
}

// ResourceLink returns a block that points to a resource without including
// it (2025-06-18 and later).
func ResourceLink(r Resource) Content { return Content{Type: "resource_link", Link: &r} }

// EmbeddedResource returns a block that includes a resource's content.
func EmbeddedResource(c mcp.ResourceContents) Content { return Content{Type: "resource", Resource: &c} }

// MarshalJSON writes the block in the shape its type requires.
func (c Content) MarshalJSON() ([]byte, error) {
	switch c.Type {
	case "text":
		return json.Marshal(struct {
			Type        string          `json:"type"`
			Text        string          `json:"text"`
			Annotations *Annotations    `json:"annotations,omitempty"`
			Meta        json.RawMessage `json:"_meta,omitempty"`
		}{c.Type, c.Text, c.Annotations, c.Meta})
	case "image", "audio":
		if c.Data == nil {
			c.Data = []byte{} // data is required: "" rather than null
		}
		return json.Marshal(struct {
			Type        string          `json:"type"`
			Data        []byte          `json:"data"`
			MimeType    string          `json:"mimeType"`
			Annotations *Annotations    `json:"annotations,omitempty"`
			Meta        json.RawMessage `json:"_meta,omitempty"`
		}{c.Type, c.Data, c.MimeType, c.Annotations, c.Meta})
	case "resource_link":
		if c.Link == nil {
			return nil, fmt.Errorf("handlers: resource_link content without Link")
		}
		return json.Marshal(struct {
			Type string `json:"type"`
			*Resource
		}{c.Type, c.Link})
	case "resource":
		if c.Resource == nil {
			return nil, fmt.Errorf("handlers: resource content without Resource")
		}
		return json.Marshal(struct {
			Type        string                `json:"type"`
			Resource    *mcp.ResourceContents `json:"resource"`
			Annotations *Annotations          `json:"annotations,omitempty"`
			Meta        json.RawMessage       `json:"_meta,omitempty"`
		}{c.Type, c.Resource, c.Annotations, c.Meta})
	}
	return nil, fmt.Errorf("handlers: unknown content type %q", c.Type)
}

// UnmarshalJSON reads a block of any type, such as one in a client's
// sampling result.
func (c *Content) UnmarshalJSON(b []byte) error {
	var w struct {
		Type        *string               `json:"type"`
		Text        string                `json:"text"`
		Data        []byte                `json:"data"`
		MimeType    string                `json:"mimeType"`
		Resource    *mcp.ResourceContents `json:"resource"`
		Annotations *Annotations          `json:"annotations"`
		Meta        json.RawMessage       `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if w.Type == nil {
		return fmt.Errorf("handlers: content block without a type")
	}
	*c = Content{Type: *w.Type, Text: w.Text, Data: w.Data, MimeType: w.MimeType, Resource: w.Resource, Annotations: w.Annotations, Meta: nullIsNone(w.Meta)}
	if c.Type == "resource_link" {
		var r Resource
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		c.Link, c.MimeType, c.Annotations, c.Meta = &r, "", nil, nil
	}
	return nil
}

// nullIsNone reads a _meta of null as no _meta.
func nullIsNone(raw json.RawMessage) json.RawMessage {
	if string(raw) == "null" {
		return nil
	}
	return raw
}

// forVersion adapts a block to what req's revision can carry.
func (c Content) forVersion(req *Request) Content {
	switch {
	case c.Type == "audio" && !since(req, mcp.Version20250326):
		return TextContent(fmt.Sprintf("[%s audio left out: not supported by protocol %s]", c.MimeType, req.Version))
	case c.Type == "resource_link" && c.Link != nil && !since(req, mcp.Version20250618):
		return TextContent(fmt.Sprintf("%s <%s>", c.Link.Name, c.Link.URI))
	case c.Type == "resource_link" && c.Link != nil:
		l := c.Link.forVersion(req)
		c.Link = &l
	case c.Type == "resource" && c.Resource != nil && c.Resource.Meta != nil && !since(req, mcp.Version20250618):
		r := *c.Resource
		r.Meta = nil
		c.Resource = &r
	}
	c.Annotations = c.Annotations.forVersion(req)
	if !since(req, mcp.Version20250618) {
		c.Meta = nil
	}
	return c
}

// contentFor adapts blocks to req's revision, copying them only when one
// of them changes: plain blocks (most results are one text block) go out
// as the handler made them.
func contentFor(cs []Content, req *Request) []Content {
	plain := true
	for i := range cs {
		c := &cs[i]
		plain = plain && c.Annotations == nil && c.Meta == nil && c.Type != "audio" && c.Type != "resource_link" &&
			(c.Resource == nil || c.Resource.Meta == nil)
	}
	if plain {
		return cs
	}
	out := make([]Content, len(cs))
	for i, c := range cs {
		out[i] = c.forVersion(req)
	}
	return out
}
