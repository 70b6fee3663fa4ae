package mcp

// Implementation names a piece of MCP software: a server (initialize's
// serverInfo, 2026-07-28's _meta serverInfo) or a client (clientInfo).
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// Root is one of a client's roots (roots/list): what a server may work in.
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// Completion is an answer to completion/complete.
type Completion struct {
	// Values are the suggestions, best first. A server sends only the
	// first 100; when there are more, HasMore is set and Total counts them
	// all.
	Values []string `json:"values"`
	// Total is the number of suggestions there are, if known (0: not given).
	Total int `json:"total,omitempty"`
	// HasMore says there are suggestions beyond Values.
	HasMore bool `json:"hasMore,omitempty"`
}
