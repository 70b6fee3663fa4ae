package mcp

import "encoding/json"

// ResourceContents is the content of a resource (resources/read, an
// embedded resource block): text, or binary data when Blob is not nil.
type ResourceContents struct {
	// URI defaults to the URI that was read.
	URI string
	// MimeType defaults to the resource's or template's MimeType.
	MimeType string
	Text     string
	// Blob holds binary content (base64 on the wire); when it is not nil,
	// Text is ignored.
	Blob []byte
	// Meta is the contents' _meta (2025-06-18 on), a JSON object sent as
	// it is: an MCP App's {"ui":{"csp":…,"permissions":…}} goes here.
	Meta json.RawMessage
}

// MarshalJSON writes text or blob contents.
func (c ResourceContents) MarshalJSON() ([]byte, error) {
	if c.Blob != nil {
		return json.Marshal(struct {
			URI      string          `json:"uri"`
			MimeType string          `json:"mimeType,omitempty"`
			Blob     []byte          `json:"blob"`
			Meta     json.RawMessage `json:"_meta,omitempty"`
		}{c.URI, c.MimeType, c.Blob, c.Meta})
	}
	return json.Marshal(struct {
		URI      string          `json:"uri"`
		MimeType string          `json:"mimeType,omitempty"`
		Text     string          `json:"text"`
		Meta     json.RawMessage `json:"_meta,omitempty"`
	}{c.URI, c.MimeType, c.Text, c.Meta})
}

// UnmarshalJSON reads text or blob contents.
func (c *ResourceContents) UnmarshalJSON(b []byte) error {
	var w struct {
		URI      string          `json:"uri"`
		MimeType string          `json:"mimeType"`
		Text     string          `json:"text"`
		Blob     *[]byte         `json:"blob"`
		Meta     json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*c = ResourceContents{URI: w.URI, MimeType: w.MimeType, Text: w.Text, Meta: w.Meta}
	if string(w.Meta) == "null" {
		c.Meta = nil // null is no _meta
	}
	if w.Blob != nil {
		c.Blob = *w.Blob
		if c.Blob == nil {
			c.Blob = []byte{}
		}
	}
	return nil
}
