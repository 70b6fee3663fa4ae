package stdio

import "github.com/mcprt/mcprt/stdio/wire"

// Backlog is the reader's back-pressure (see wire.Backlog): the reader
// waits on it before it hands on a line.
type Backlog = wire.Backlog

// NewBacklog returns a Backlog that holds the reader back at max units.
func NewBacklog(max int) *Backlog { return wire.NewBacklog(max) }
