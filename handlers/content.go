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

// annotationsFor adapts a to what req's revision can carry.
func annotationsFor(a *mcp.Annotations, req *Request) *mcp.Annotations {
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

func iconsFor(icons []mcp.Icon, req *Request) []mcp.Icon {
	if since(req, mcp.Version20251125) {
		return icons
	}
	return nil
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

// nullIsNone reads a _meta of null as no _meta.
func nullIsNone(raw json.RawMessage) json.RawMessage {
	if string(raw) == "null" {
		return nil
	}
	return raw
}

// contentForVersion adapts a block to what req's revision can carry.
func contentForVersion(c mcp.Content, req *Request) mcp.Content {
	switch {
	case c.Type == "audio" && !since(req, mcp.Version20250326):
		return mcp.TextContent(fmt.Sprintf("[%s audio left out: not supported by protocol %s]", c.MimeType, req.Version))
	case c.Type == "resource_link" && c.Link != nil && !since(req, mcp.Version20250618):
		return mcp.TextContent(fmt.Sprintf("%s <%s>", c.Link.Name, c.Link.URI))
	case c.Type == "resource_link" && c.Link != nil:
		l := resourceFor(*c.Link, req)
		c.Link = &l
	case c.Type == "resource" && c.Resource != nil && c.Resource.Meta != nil && !since(req, mcp.Version20250618):
		r := *c.Resource
		r.Meta = nil
		c.Resource = &r
	}
	c.Annotations = annotationsFor(c.Annotations, req)
	if !since(req, mcp.Version20250618) {
		c.Meta = nil
	}
	return c
}

// contentFor adapts blocks to req's revision, copying them only when one
// of them changes: plain blocks (most results are one text block) go out
// as the handler made them.
func contentFor(cs []mcp.Content, req *Request) []mcp.Content {
	plain := true
	for i := range cs {
		c := &cs[i]
		plain = plain && c.Annotations == nil && c.Meta == nil && c.Type != "audio" && c.Type != "resource_link" &&
			(c.Resource == nil || c.Resource.Meta == nil)
	}
	if plain {
		return cs
	}
	out := make([]mcp.Content, len(cs))
	for i, c := range cs {
		out[i] = contentForVersion(c, req)
	}
	return out
}
