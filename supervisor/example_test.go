package supervisor_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

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

// counter runs on a goroutine of its own and prints a total at each batch.
type counter struct{ n int }

func (c *counter) Receive(lc *supervisor.LoopContext, msg any) {
	switch m := msg.(type) {
	case int:
		c.n += m
	case string:
		if m == "done" {
			lc.Exit(nil) // a normal exit: transient children are not restarted
		}
	case actor.Stopped:
		fmt.Println("total:", c.n)
	}
}

func ExampleOwnGoroutine() {
	e, _ := actor.NewEngine(actor.NewEngineConfig())
	in := supervisor.NewInbox()
	root, err := supervisor.Start(e, "counting", supervisor.Spec{
		Logger: slog.New(slog.DiscardHandler),
		Children: []supervisor.ChildSpec{{
			ID:          "counter",
			Restart:     supervisor.Transient,
			Significant: true, // its normal exit ends the tree
			Start:       supervisor.OwnGoroutine(in, func() supervisor.Loop { return &counter{} }),
		}},
	})
	if err != nil {
		panic(err)
	}
	// Any goroutine may send, straight to the inbox or through the PID.
	for i := 1; i <= 100; i++ {
		in.Send(i)
	}
	in.Send("done")
	<-root.Done()
	fmt.Println("exit reason:", root.Err())
	// Output:
	// total: 5050
	// exit reason: <nil>
}

// Many loops that are mostly idle share a pool of goroutines: each holds
// one only while its inbox has messages. The pool is a child of the tree,
// before the loops, so it stops after them.
func ExampleOnRunners() {
	e, _ := actor.NewEngine(actor.NewEngineConfig())
	pool := supervisor.NewRunners()
	children := []supervisor.ChildSpec{{ID: "runners", Start: pool.Actor(), Restart: supervisor.Permanent}}
	inboxes := make([]*supervisor.Inbox, 3)
	for i := range inboxes {
		inboxes[i] = supervisor.NewInbox()
		children = append(children, supervisor.ChildSpec{
			ID:      fmt.Sprint("counter-", i),
			Restart: supervisor.Transient,
			Start:   supervisor.OnRunners(inboxes[i], pool, func() supervisor.Loop { return &counter{} }),
		})
	}
	root, err := supervisor.Start(e, "many", supervisor.Spec{Logger: slog.New(slog.DiscardHandler), Children: children})
	if err != nil {
		panic(err)
	}
	for i, in := range inboxes {
		in.Send(10 * (i + 1))
		in.Send("done") // each prints its total as it stops
	}
	for _, in := range inboxes {
		for in.Len() > 0 { // until each loop has taken its messages
			time.Sleep(time.Millisecond)
		}
	}
	_ = root.Stop(context.Background()) // a loop finishes what it took first
	// Unordered output:
	// total: 10
	// total: 20
	// total: 30
}
