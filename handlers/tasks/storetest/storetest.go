// Package storetest is the contract every tasks.Store keeps, as a test
// suite: the package's own stores run it, and so can an adapter to a
// database, from its own module.
package storetest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers/tasks"
)

// Contract is the store contract with the cases a store opts into: those
// that need a way to make its writes fail, or a store that holds its
// place exclusively.
type Contract struct {
	// Open opens the store under test on dir (a fresh directory per test,
	// which a store without files ignores).
	Open func(t *testing.T, dir string) (tasks.Store, error)
	// Durable says the store keeps its records across Close and a new
	// Open on the same dir.
	Durable bool
	// Exclusive says a second Open of a dir (a journal's directory, a
	// database's key prefix) fails while the first store is open, and
	// names who holds it, rather than letting two writers overwrite each
	// other; and that it opens again once the first is closed.
	Exclusive bool
	// Break makes s's writes fail from now on, as a full disk or an
	// unreachable database would, until mend is called. With it the
	// contract checks that a write that fails is not visible (not to
	// Get, All, nor, when Durable, to the next Open), that the store
	// works again once mended, and that it can still be closed. nil
	// skips those cases.
	Break func(t *testing.T, s tasks.Store) (mend func())
}

// Run runs the contract.
func (c Contract) Run(t *testing.T) {
	open := func(t *testing.T, dir string) tasks.Store {
		t.Helper()
		s, err := c.Open(t, dir)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	durable := c.Durable
	t.Run("GetMissing", func(t *testing.T) {
		s := open(t, t.TempDir())
		defer s.Close()
		if _, ok, err := s.Get("nope"); ok || err != nil {
			t.Fatalf("Get of an unknown id: ok=%v err=%v, want false, nil", ok, err)
		}
	})
	t.Run("PutGetRoundTrip", func(t *testing.T) {
		s := open(t, t.TempDir())
		defer s.Close()
		want := sample("a", tasks.Completed)
		mustPut(t, s, want)
		got, ok, err := s.Get("a")
		if !ok || err != nil {
			t.Fatalf("Get after Put: ok=%v err=%v", ok, err)
		}
		same(t, got, want)
	})
	t.Run("PutReplaces", func(t *testing.T) {
		s := open(t, t.TempDir())
		defer s.Close()
		mustPut(t, s, sample("a", tasks.Working))
		want := sample("a", tasks.Failed)
		want.Error = &tasks.Error{Code: -32603, Message: "boom"}
		want.Result = nil
		mustPut(t, s, want)
		got, _, _ := s.Get("a")
		same(t, got, want)
		all, _ := s.All()
		if len(all) != 1 {
			t.Fatalf("All after two Puts of one id: %d records, want 1", len(all))
		}
	})
	t.Run("Delete", func(t *testing.T) {
		s := open(t, t.TempDir())
		defer s.Close()
		mustPut(t, s, sample("a", tasks.Working))
		mustPut(t, s, sample("b", tasks.Working))
		if err := s.Delete("a"); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete("never"); err != nil {
			t.Fatalf("Delete of an unknown id: %v, want nil", err)
		}
		if _, ok, _ := s.Get("a"); ok {
			t.Fatal("Get after Delete found the record")
		}
		all, _ := s.All()
		if len(all) != 1 || all[0].ID != "b" {
			t.Fatalf("All after Delete: %v, want just b", ids(all))
		}
	})
	t.Run("ConcurrentPuts", func(t *testing.T) {
		s := open(t, t.TempDir())
		defer s.Close()
		const n = 64
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				id := fmt.Sprint("t", i)
				if err := s.Put(sample(id, tasks.Working)); err != nil {
					t.Error(err)
				}
				if err := s.Put(sample(id, tasks.Completed)); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		all, _ := s.All()
		if len(all) != n {
			t.Fatalf("All after %d concurrent tasks: %d records", n, len(all))
		}
		for _, r := range all {
			if r.Status != tasks.Completed {
				t.Fatalf("%s: status %s, want the last Put's, completed", r.ID, r.Status)
			}
		}
	})
	t.Run("ClosedFails", func(t *testing.T) {
		s := open(t, t.TempDir())
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s.Put(sample("a", tasks.Working)); err == nil {
			t.Fatal("Put after Close succeeded")
		}
	})
	t.Run("Batch", func(t *testing.T) { c.batch(t, open) })
	if c.Exclusive {
		t.Run("SecondOpenRefused", func(t *testing.T) { c.secondOpen(t, open) })
	}
	if c.Break != nil {
		t.Run("FailedWriteNotVisible", func(t *testing.T) { c.failedWrite(t, open) })
	}
	if !durable {
		return
	}
	t.Run("Reopen", func(t *testing.T) {
		dir := t.TempDir()
		s := open(t, dir)
		done := sample("done", tasks.Completed)
		mustPut(t, s, sample("gone", tasks.Working))
		mustPut(t, s, sample("run", tasks.Working))
		mustPut(t, s, done)
		if err := s.Delete("gone"); err != nil {
			t.Fatal(err)
		}
		s.Close()
		s = open(t, dir)
		defer s.Close()
		all, _ := s.All()
		if len(all) != 2 {
			t.Fatalf("after reopen: %v, want done and run", ids(all))
		}
		got, ok, _ := s.Get("done")
		if !ok {
			t.Fatal("completed task lost across reopen")
		}
		same(t, got, done)
	})
}

func sample(id string, st tasks.Status) tasks.Task {
	now := time.Date(2026, 11, 27, 4, 0, 0, 123456789, time.UTC)
	t := tasks.Task{ID: id, Owner: "sub:alice", Tool: "slow", Status: st, Message: "m",
		Created: now, Updated: now.Add(time.Second), TTL: time.Hour}
	if st == tasks.Completed {
		t.Result = json.RawMessage(`{"content":[{"type":"text","text":"ok"}]}`)
	}
	return t
}

func mustPut(t *testing.T, s tasks.Store, r tasks.Task) {
	t.Helper()
	if err := s.Put(r); err != nil {
		t.Fatal(err)
	}
}

func same(t *testing.T, got, want tasks.Task) {
	t.Helper()
	if !got.Created.Equal(want.Created) || !got.Updated.Equal(want.Updated) {
		t.Fatalf("times: got %v/%v, want %v/%v", got.Created, got.Updated, want.Created, want.Updated)
	}
	got.Created, got.Updated, want.Created, want.Updated = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	if string(got.Result) != string(want.Result) {
		t.Fatalf("result: got %s, want %s", got.Result, want.Result)
	}
	got.Result, want.Result = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func ids(all []tasks.Task) []string {
	var out []string
	for _, r := range all {
		out = append(out, r.ID)
	}
	return out
}
