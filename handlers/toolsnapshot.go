package handlers

// noOne is an Access no caller meets (a claim without a value to match):
// what tools/list sees of an Unlisted tool.
var noOne = Access{Claims: map[string][]string{"": {}}}

// Tools returns the tools registered, in registration order, as they were
// given to AddTool (with their Access and Unlisted; the handlers are not
// given). A server that indexes its tools (a gateway's tool search)
// reads them again when Watch reports ToolsChanged.
func (s *Server) Tools() []Tool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	vals := s.tools.values()
	out := make([]Tool, len(vals))
	for i, t := range vals {
		out[i] = t.Tool
	}
	return out
}
