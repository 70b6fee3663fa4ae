package supervisor

import (
	"bytes"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/anthdm/hollywood/actor"
)

// registry maps a running supervisor to the little state that goroutines
// other than its own may touch. Everything else lives on the supervisor's
// goroutine and is reached by message.
var registry sync.Map // regKey -> *shared

type regKey struct {
	e  *actor.Engine
	id string
}

type shared struct {
	pid  *actor.PID
	gone chan struct{} // closed when the supervisor stops answering requests
	once sync.Once
	// goid is the goroutine running the supervisor's Receive while that
	// runs code not its own (a child's Initialized or Started, the logger,
	// the EventHook; see enterCallout), 0 otherwise. A request made from
	// that goroutine could never be answered, so it fails fast instead of
	// deadlocking.
	goid atomic.Uint64
}

func lookup(e *actor.Engine, pid *actor.PID) *shared {
	if e == nil || pid == nil {
		return nil
	}
	v, ok := registry.Load(regKey{e, pid.ID})
	if !ok {
		return nil
	}
	return v.(*shared)
}

func register(e *actor.Engine, sh *shared) {
	registry.Store(regKey{e, sh.pid.ID}, sh)
}

func deregister(e *actor.Engine, sh *shared) {
	registry.CompareAndDelete(regKey{e, sh.pid.ID}, sh)
	sh.once.Do(func() { close(sh.gone) })
}

// goid returns the current goroutine's ID. It is only used to detect
// self-deadlock, never for control flow otherwise.
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, _ := strconv.ParseUint(string(b), 10, 64)
	return id
}
