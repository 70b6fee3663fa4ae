package taskrun_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers/tasks"
	"github.com/mcprt/mcprt/handlers/tasks/etcdstore"
	"github.com/mcprt/mcprt/runtime/taskrun"
	"github.com/mcprt/mcprt/test/etcdtest"
)

// BenchmarkCreateToCompleted is a task's life, create to completed (its
// record stored three times: created, then completed), on each store:
// the time a client waits on the store alone. Run:
//
//	go test -run '^$' -bench CreateToCompleted -benchtime 2s ./runtime/taskrun
func BenchmarkCreateToCompleted(b *testing.B) {
	done := func(context.Context, map[string]json.RawMessage) tasks.Outcome {
		return tasks.Outcome{Result: json.RawMessage(`{"content":[]}`)}
	}
	run := func(b *testing.B, store tasks.Store) {
		m, err := taskrun.Start(nil, taskrun.Config{Store: store, MaxLive: -1, MaxLivePerOwner: -1, MaxEndedPerClient: -1})
		if err != nil {
			b.Fatal(err)
		}
		defer m.Stop(context.Background())
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				tk, err := m.Create(tasks.Requestor{Owner: "o"}, "t", true, 0, done)
				if err != nil {
					b.Error(err)
					return
				}
				if got, err := m.Wait(ctx, "o", tk.ID); err != nil || got.Status != tasks.Completed {
					b.Errorf("wait: %v %v", got.Status, err)
					return
				}
			}
		})
	}
	b.Run("memory", func(b *testing.B) { run(b, tasks.NewMemoryStore()) })
	b.Run("journal", func(b *testing.B) {
		j, err := tasks.OpenJournal(b.TempDir(), tasks.JournalOptions{})
		if err != nil {
			b.Fatal(err)
		}
		run(b, j)
	})
	b.Run("etcd", func(b *testing.B) {
		cl := etcdtest.Start(b, 1)
		s, err := etcdstore.Open(etcdstore.Options{Endpoints: cl.Endpoints(), Prefix: "bench/"})
		if err != nil {
			b.Fatal(err)
		}
		run(b, s)
	})
}
