package wire

import (
	"testing"
	"time"
)

func TestBacklog(t *testing.T) {
	b := NewBacklog(2)
	stop := make(chan struct{})
	b.Add(1)
	if !b.Wait(stop) {
		t.Fatal("Wait under the bound returned false")
	}
	b.Add(1)
	got := make(chan bool)
	go func() { got <- b.Wait(stop) }()
	select {
	case <-got:
		t.Fatal("Wait returned at the bound")
	case <-time.After(20 * time.Millisecond):
	}
	// Producers that never wait may go over the bound; the reader waits
	// until it is under again.
	b.Add(1)
	b.Done()
	select {
	case <-got:
		t.Fatal("Wait returned while still at the bound")
	case <-time.After(20 * time.Millisecond):
	}
	b.Done()
	if ok := <-got; !ok {
		t.Fatal("Wait returned false once under the bound")
	}
	if b.len() != 1 {
		t.Fatalf("Len = %d, want 1", b.len())
	}
	b.Add(1)
	go func() { got <- b.Wait(stop) }()
	close(stop)
	if ok := <-got; ok {
		t.Fatal("Wait returned true after stop closed, at the bound")
	}
	b.Done()
	// A closed stop does not keep the reader back under the bound.
	if !b.Wait(stop) {
		t.Fatal("Wait under the bound with a closed stop returned false")
	}
	if !NewBacklog(0).Wait(stop) {
		t.Error("NewBacklog(0) holds the reader back at once; want a bound of at least one")
	}
}

// TestBacklogWakeRace: Done on other goroutines, racing the reader's Wait,
// never leaves the reader asleep under the bound.
func TestBacklogWakeRace(t *testing.T) {
	b := NewBacklog(1)
	stop := make(chan struct{})
	defer close(stop)
	for range 20000 {
		b.Add(1)
		go b.Done()
		done := make(chan bool)
		go func() { done <- b.Wait(stop) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("Wait slept through a Done")
		}
	}
}
