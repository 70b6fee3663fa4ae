package supervisor

import (
	"errors"
	"testing"
)

// TestServiceOrder: services start in order with their siblings and stop
// in reverse, by the tree; a stop runs only after a start that succeeded.
func TestServiceOrder(t *testing.T) {
	h := newHarness(t)
	svc := func(id string) ChildSpec {
		return ChildSpec{ID: id, Start: Service(
			func(func(error)) error { h.rec.add("start:" + id); return nil },
			func() { h.rec.add("stop:" + id) })}
	}
	root := h.start("svc", Spec{Children: []ChildSpec{svc("a"), workerSpec("b", h.rec, Permanent), svc("c")}})
	if err := stopRoot(t, root); err != nil {
		t.Fatal(err)
	}
	h.assertLog("start:a", "start:b", "start:c", "stop:c", "stop:b", "stop:a")
}

// TestServiceExit: a service that fails later, through exit, ends a
// supervisor it is significant to with that reason, its siblings stopped
// in reverse; one whose start fails never runs its stop.
func TestServiceExit(t *testing.T) {
	h := newHarness(t)
	broke := errors.New("listener broke")
	var exit func(error)
	root := h.start("svcx", Spec{Children: []ChildSpec{
		workerSpec("a", h.rec, Permanent),
		{ID: "s", Restart: Temporary, Significant: true, Start: Service(
			func(x func(error)) error { exit = x; return nil },
			func() { h.rec.add("stop:s") })},
	}})
	exit(broke)
	h.waitDone(root)
	if !errors.Is(root.Err(), broke) {
		t.Fatalf("Err = %v", root.Err())
	}
	h.assertLog("start:a", "stop:s", "stop:a")

	h2 := newHarness(t)
	root2 := h2.start("svcf", Spec{Children: []ChildSpec{
		{ID: "s", Restart: Temporary, Significant: true, Start: Service(
			func(func(error)) error { return broke },
			func() { h2.rec.add("stop:s") })},
	}})
	h2.waitDone(root2)
	if !errors.Is(root2.Err(), broke) {
		t.Fatalf("Err = %v", root2.Err())
	}
	h2.assertLog()
}
