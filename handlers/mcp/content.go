package mcp

import (
	"encoding/json"
	"fmt"
)

// Annotations tell a client how to use a piece of content or a resource.
type Annotations struct {
	// Audience lists who the content is for: "user", "assistant" or both.
	Audience []string `json:"audience,omitempty"`
	// Priority ranges from 0 (least important) to 1 (effectively required).
	Priority *float64 `json:"priority,omitempty"`
	// LastModified is an ISO 8601 timestamp (sent from 2025-06-18 on).
	LastModified string `json:"lastModified,omitempty"`
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

// Resource describes a resource with a fixed URI, as resources/list shows
// it and a resource_link block points to it.
type Resource struct {
	// URI identifies the resource; resources/read asks for it.
	URI string `json:"uri"`
	// Name is a short identifier; Title is for display.
	Name string `json:"name"`
	// Title is a display name (sent from 2025-06-18 on).
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// MimeType is the default MIME type of the resource's contents.
	MimeType    string       `json:"mimeType,omitempty"`
	Annotations *Annotations `json:"annotations,omitempty"`
	// Size in bytes, if known (0: not given).
	Size int64 `json:"size,omitempty"`
	// Icons are sent from 2025-11-25 on.
	Icons []Icon `json:"icons,omitempty"`
	// Meta is the resource's _meta (2025-06-18 on), a JSON object sent as
	// it is, such as an MCP App's {"ui":{"csp":…}}. Nil for none.
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// ResourceTemplate describes a family of resources whose URIs match an RFC
// 6570 URI template, as resources/templates/list shows it.
type ResourceTemplate struct {
	// URITemplate is an RFC 6570 template, such as "file:///{+path}".
	URITemplate string       `json:"uriTemplate"`
	Name        string       `json:"name"`
	Title       string       `json:"title,omitempty"`
	Description string       `json:"description,omitempty"`
	MimeType    string       `json:"mimeType,omitempty"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Icons       []Icon       `json:"icons,omitempty"`
	// Meta is the template's _meta (2025-06-18 on), a JSON object sent as
	// it is. Nil for none.
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// Content is one block of a tool result or a prompt message. Build it with
// TextContent, ImageContent, AudioContent, ResourceLink or EmbeddedResource.
//
// A server adapts blocks a client's revision does not know rather than
// send them: before 2025-03-26 an audio block becomes a text block saying
// that audio was left out, and before 2025-06-18 a resource_link becomes a
// text block with the link's name and URI.
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
	Resource *ResourceContents
	// Annotations of the block (for resource_link, set Link.Annotations).
	Annotations *Annotations
	// Meta is the block's _meta (2025-06-18 on), a JSON object sent as it
	// is (for resource_link, set Link.Meta).
	Meta json.RawMessage
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
func EmbeddedResource(c ResourceContents) Content { return Content{Type: "resource", Resource: &c} }

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
			return nil, fmt.Errorf("mcp: resource_link content without Link")
		}
		return json.Marshal(struct {
			Type string `json:"type"`
			*Resource
		}{c.Type, c.Link})
	case "resource":
		if c.Resource == nil {
			return nil, fmt.Errorf("mcp: resource content without Resource")
		}
		return json.Marshal(struct {
			Type        string            `json:"type"`
			Resource    *ResourceContents `json:"resource"`
			Annotations *Annotations      `json:"annotations,omitempty"`
			Meta        json.RawMessage   `json:"_meta,omitempty"`
		}{c.Type, c.Resource, c.Annotations, c.Meta})
	}
	return nil, fmt.Errorf("mcp: unknown content type %q", c.Type)
}

// UnmarshalJSON reads a block of any type, such as one in a tool result a
// client reads or in a client's sampling result a server reads.
func (c *Content) UnmarshalJSON(b []byte) error {
	var w struct {
		Type        *string           `json:"type"`
		Text        string            `json:"text"`
		Data        []byte            `json:"data"`
		MimeType    string            `json:"mimeType"`
		Resource    *ResourceContents `json:"resource"`
		Annotations *Annotations      `json:"annotations"`
		Meta        json.RawMessage   `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if w.Type == nil {
		return fmt.Errorf("mcp: content block without a type")
	}
	*c = Content{Type: *w.Type, Text: w.Text, Data: w.Data, MimeType: w.MimeType, Resource: w.Resource, Annotations: w.Annotations, Meta: nullIsNone(w.Meta)}
	if c.Type == "resource_link" {
		var r Resource
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		r.Meta = nullIsNone(r.Meta)
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
