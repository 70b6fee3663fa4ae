package storetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/handlers/tasks"
)

// batch: a store that is a tasks.Batcher applies a batch whole: every put
// and delete of it visible, durably when the store is durable; and, when
// its writes can be broken, none of a batch that failed.
func (c Contract) batch(t *testing.T, open func(*testing.T, string) tasks.Store) {
	dir := t.TempDir()
	s := open(t, dir)
	b, ok := s.(tasks.Batcher)
	if !ok {
		s.Close()
		t.Skip("not a tasks.Batcher")
	}
	mustPut(t, s, sample("gone", tasks.Working))
	mustPut(t, s, sample("kept", tasks.Working))
	// Past any threshold a store may have for batches it treats apart
	// (the journal compacts for a large one).
	for _, n := range []int{2, 3000} {
		var puts []tasks.Task
		for i := range n {
			puts = append(puts, sample(id("p", i), tasks.Completed))
		}
		if err := b.Apply(puts, []string{"gone", "never"}); err != nil {
			t.Fatalf("Apply of %d puts: %v", n, err)
		}
		all, _ := s.All()
		if len(all) != n+1 {
			t.Fatalf("after Apply of %d puts and a delete: %d records, want %d", n, len(all), n+1)
		}
		dels := make([]string, 0, n)
		for _, r := range puts {
			dels = append(dels, r.ID)
		}
		if err := b.Apply(nil, dels); err != nil {
			t.Fatal(err)
		}
	}
	if c.Break != nil {
		mend := c.Break(t, s)
		var puts []tasks.Task
		for i := range 3000 {
			puts = append(puts, sample(id("f", i), tasks.Completed))
		}
		if err := b.Apply(puts[:2], []string{"kept"}); err == nil {
			t.Fatal("Apply succeeded on a broken store")
		}
		if err := b.Apply(puts, []string{"kept"}); err == nil {
			t.Fatal("Apply of a large batch succeeded on a broken store")
		}
		all, _ := s.All()
		if len(all) != 1 || all[0].ID != "kept" {
			t.Fatalf("after failed Applies: %v, want just kept", ids(all))
		}
		mend()
	}
	if !c.Durable {
		s.Close()
		return
	}
	mustPut(t, s, sample("last", tasks.Working))
	s.Close()
	s = open(t, dir)
	defer s.Close()
	all, _ := s.All()
	if len(all) != 2 {
		t.Fatalf("after reopen: %v, want kept and last", ids(all))
	}
}

// secondOpen: an exclusive store refuses a second opener, saying so, and
// opens again once the first is closed.
func (c Contract) secondOpen(t *testing.T, open func(*testing.T, string) tasks.Store) {
	dir := t.TempDir()
	s := open(t, dir)
	mustPut(t, s, sample("a", tasks.Completed))
	s2, err := c.Open(t, dir)
	if err == nil {
		s2.Close()
		t.Fatal("a second Open of a dir in use succeeded")
	}
	if !strings.Contains(err.Error(), "in use") {
		t.Errorf("second Open: %q; want it to say the store is in use", err)
	}
	if err := s.Put(sample("b", tasks.Completed)); err != nil {
		t.Fatalf("the first store after a refused second opener: %v", err)
	}
	s.Close()
	s = open(t, dir)
	defer s.Close()
	if all, _ := s.All(); c.Durable && len(all) != 2 {
		t.Fatalf("after the first store closed: %v, want a and b", ids(all))
	}
}

// failedWrite: a Put or Delete that fails changes nothing anyone can see,
// now or (durable) after a reopen; once mended the store works again; a
// broken store still closes.
func (c Contract) failedWrite(t *testing.T, open func(*testing.T, string) tasks.Store) {
	dir := t.TempDir()
	s := open(t, dir)
	working := sample("a", tasks.Working)
	mustPut(t, s, working)
	mustPut(t, s, sample("d", tasks.Completed))
	mend := c.Break(t, s)
	if err := s.Put(sample("a", tasks.Completed)); err == nil {
		t.Fatal("Put succeeded on a broken store")
	}
	if err := s.Put(sample("b", tasks.Working)); err == nil {
		t.Fatal("Put of a new record succeeded on a broken store")
	}
	if err := s.Delete("d"); err == nil {
		t.Fatal("Delete succeeded on a broken store")
	}
	check := func(when string) {
		t.Helper()
		got, ok, err := s.Get("a")
		if !ok || err != nil || got.Status != tasks.Working {
			t.Fatalf("%s: a = %+v, %v, %v; want it as before the failed Put (working)", when, got, ok, err)
		}
		if _, ok, _ := s.Get("b"); ok {
			t.Fatalf("%s: a record whose Put failed is visible", when)
		}
		if _, ok, _ := s.Get("d"); !ok {
			t.Fatalf("%s: a record whose Delete failed is gone", when)
		}
		if all, _ := s.All(); len(all) != 2 {
			t.Fatalf("%s: All = %v, want a and d", when, ids(all))
		}
	}
	check("after failed writes")
	if c.Durable {
		// Closed while broken, as a server stopping on a full disk.
		s.Close()
		mend()
		s = open(t, dir)
		check("after a reopen")
		mend = c.Break(t, s)
		if err := s.Put(sample("b", tasks.Working)); err == nil {
			t.Fatal("Put succeeded on a broken store")
		}
	}
	mend()
	want := sample("a", tasks.Completed)
	if err := s.Put(want); err != nil {
		t.Fatalf("Put once the store is mended: %v; want it to work again", err)
	}
	mustPut(t, s, sample("b", tasks.Working))
	if err := s.Delete("d"); err != nil {
		t.Fatalf("Delete once the store is mended: %v", err)
	}
	if !c.Durable {
		s.Close()
		return
	}
	s.Close()
	s = open(t, dir)
	defer s.Close()
	got, _, _ := s.Get("a")
	same(t, got, want)
	if all, _ := s.All(); len(all) != 2 {
		t.Fatalf("after mending and a reopen: %v, want a and b", ids(all))
	}
}

func id(prefix string, i int) string { return fmt.Sprint(prefix, i) }
