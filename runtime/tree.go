package runtime

import (
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/supervisor"
)

// A Part is a piece of a program that belongs in its process's one
// supervision tree: given the engine and the supervisor it is to run
// under, it returns the child it is. *taskrun.Manager, *streamhttp.Server
// and *gateway.Gateway are Parts.
//
// Why: a process used to run a tree per piece, each on an engine of its
// own when given none, and to order their shutdown by hand (HTTP drains,
// then the tasks stop, then the backends close). As children of one root,
// they start in the order given and the tree stops them in reverse,
// each bounded by its Shutdown; a piece that fails ends the process
// through the tree, as a crash loop in a session does.
type Part interface {
	ChildSpec(e *actor.Engine, parent *actor.PID) supervisor.ChildSpec
}

var processes atomic.Int64

// processName is a new name for a process's root on an engine.
func processName() string { return fmt.Sprintf("mcprt-%d", processes.Add(1)) }

// processSpec is the root of a process's tree named name on e: parts in
// order, then last the transport, which is stopped (drained) first.
// Every child is significant: when one ends, for a good reason or a bad
// one, the others are stopped in reverse order and the root exits with
// its reason.
func processSpec(e *actor.Engine, name string, parts []Part, transport func(parent *actor.PID) supervisor.ChildSpec, log *slog.Logger, hook func(supervisor.Event)) supervisor.Spec {
	self := supervisor.RootPID(e, name)
	children := make([]supervisor.ChildSpec, 0, len(parts)+1)
	for _, p := range parts {
		children = append(children, significant(p.ChildSpec(e, self)))
	}
	children = append(children, significant(transport(self)))
	return supervisor.Spec{
		Name:      name,
		Strategy:  supervisor.OneForOne,
		Logger:    log,
		EventHook: hook,
		Children:  children,
	}
}

// significant makes c one of the process's pieces: never restarted by the
// root (each restarts what is inside it; a piece that gives up has lost
// its state, and the process is better ended), and ending it.
func significant(c supervisor.ChildSpec) supervisor.ChildSpec {
	c.Restart, c.Significant = supervisor.Temporary, true
	if c.Shutdown == 0 {
		c.Shutdown = 10 * time.Second
	}
	return c
}
