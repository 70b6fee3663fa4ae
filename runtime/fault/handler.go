package fault

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
)

// faultKind is a fault a wrapped handler can suffer on one call.
type faultKind int

// The handler faults. Every call gets exactly one faultKind; noFault runs the real
// handler untouched.
const (
	noFault    faultKind = iota
	faultPanic           // the handler panics
	faultHang            // the handler blocks until its context ends, then returns ctx.Err()
	faultSlow            // the handler waits HandlerRates.SlowFor (or until its context ends), then runs
	faultError           // the handler returns an error, which the client sees as a result with isError set
	numKinds
)

var kindNames = [numKinds]string{"none", "panic", "hang", "slow", "error"}

// String returns the fault's name, as Report.Faults and logs spell it.
func (k faultKind) String() string {
	if k < 0 || k >= numKinds {
		return fmt.Sprintf("Kind(%d)", int(k))
	}
	return kindNames[k]
}

// HandlerRates are the probabilities, per call, of each handler fault. They
// must be between 0 and 1 and add up to at most 1; the calls left over run
// the real handler. HandlerRates{Panic: 1} is a crash loop: every call panics.
type HandlerRates struct {
	Panic, Hang, Slow, Error float64
	// SlowFor is how long a Slow call waits before running (0: 100 ms).
	SlowFor time.Duration
}

func (r HandlerRates) validate() error {
	sum := 0.0
	for _, p := range []float64{r.Panic, r.Hang, r.Slow, r.Error} {
		if !(p >= 0 && p <= 1) { // also rejects NaN
			return fmt.Errorf("fault: rate %v is not between 0 and 1", p)
		}
		sum += p
	}
	if sum > 1+1e-9 {
		return fmt.Errorf("fault: handler rates add up to %v, more than 1", sum)
	}
	return nil
}

// ErrInjected is the error a call given HandlerRates.Error returns (wrapped with the
// call's number), so tests can tell injected failures from real ones.
var ErrInjected = errors.New("fault: injected error")

// Injector chooses the fault of every call made through the handlers it
// wraps. The choice for the n-th call (counting calls through all of them,
// in the order they start) depends only on the seed and n, so a run whose
// calls start in the same order suffers the same faults. It is safe for
// concurrent use.
type Injector struct {
	seed   uint64
	rates  HandlerRates
	calls  atomic.Uint64
	counts [numKinds]atomic.Int64
}

// NewInjector returns an Injector for seed and rates. It panics if the rates
// are not probabilities adding up to at most 1: a test with a typo in its
// rates should fail loudly, not run a different experiment.
func NewInjector(seed uint64, rates HandlerRates) *Injector {
	if err := rates.validate(); err != nil {
		panic(err)
	}
	if rates.SlowFor <= 0 {
		rates.SlowFor = 100 * time.Millisecond
	}
	return &Injector{seed: seed, rates: rates}
}

// next draws the fault of the next call.
func (in *Injector) next() faultKind {
	k, _ := in.draw()
	return k
}

func (in *Injector) draw() (faultKind, uint64) {
	n := in.calls.Add(1)
	u := unitFloat(splitmix(in.seed ^ splitmix(n)))
	k := noFault
	r := in.rates
	switch {
	case u < r.Panic:
		k = faultPanic
	case u < r.Panic+r.Hang:
		k = faultHang
	case u < r.Panic+r.Hang+r.Slow:
		k = faultSlow
	case u < r.Panic+r.Hang+r.Slow+r.Error:
		k = faultError
	}
	in.counts[k].Add(1)
	return k, n
}

// count reports how many calls so far got fault k.
func (in *Injector) count(k faultKind) int64 {
	if k < 0 || k >= numKinds {
		return 0
	}
	return in.counts[k].Load()
}

// callCount reports how many calls have been made so far.
func (in *Injector) callCount() uint64 { return in.calls.Load() }

// Wrap returns h with faults injected: on each call the Injector draws a
// fault and the wrapper panics, hangs, waits, fails or just runs h.
func (in *Injector) Wrap(h handlers.ToolHandler) handlers.ToolHandler {
	return func(ctx context.Context, req *handlers.Request, args json.RawMessage) (*mcp.CallToolResult, error) {
		k, n := in.draw()
		switch k {
		case faultPanic:
			panic("fault: injected panic")
		case faultHang:
			<-ctx.Done()
			return nil, ctx.Err()
		case faultSlow:
			t := time.NewTimer(in.rates.SlowFor)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		case faultError:
			return nil, fmt.Errorf("%w (call %d)", ErrInjected, n)
		}
		return h(ctx, req, args)
	}
}

// CrashLoop returns a handler that panics on every call: a tool broken for
// good, for testing what a server does when the same handler keeps failing.
func CrashLoop() handlers.ToolHandler {
	return func(context.Context, *handlers.Request, json.RawMessage) (*mcp.CallToolResult, error) {
		panic("fault: crash loop")
	}
}

// splitmix is SplitMix64's finalizer: a cheap bijective hash whose output
// bits are independent enough to turn (seed, n) into a uniform draw without
// shared PRNG state, so concurrent calls need no lock.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// unitFloat maps x to [0, 1) using its top 53 bits.
func unitFloat(x uint64) float64 { return float64(x>>11) / (1 << 53) }
