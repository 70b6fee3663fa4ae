package supervisor_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/supervisor"
)

type crashy struct{}

func (crashy) Receive(c *actor.Context) {
	if msg, ok := c.Message().(string); ok && msg == "crash" {
		panic("crash")
	}
}

func ExampleStart() {
	e, _ := actor.NewEngine(actor.NewEngineConfig())
	restarted := make(chan struct{}, 1)
	root, err := supervisor.Start(e, "app", supervisor.Spec{
		Logger: slog.New(slog.DiscardHandler),
		Children: []supervisor.ChildSpec{
			{ID: "worker", Restart: supervisor.Permanent, Start: func() actor.Receiver { return crashy{} }},
		},
		EventHook: func(ev supervisor.Event) {
			switch ev.(type) {
			case supervisor.EventChildExited, supervisor.EventChildRestarted:
				fmt.Println(ev)
			}
			if _, ok := ev.(supervisor.EventChildRestarted); ok {
				restarted <- struct{}{}
			}
		},
	})
	if err != nil {
		panic(err)
	}

	e.Send(supervisor.ChildPID(root.PID(), "worker"), "crash")
	<-restarted

	err = root.Stop(context.Background())
	fmt.Println("stop:", err, "exit reason:", root.Err())
	// Output:
	// supervisor app: child worker exited: panic: crash
	// supervisor app: child worker restarting (1 in window)
	// supervisor app: child worker exited: shutdown
	// stop: <nil> exit reason: shutdown
}
