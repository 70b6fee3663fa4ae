package stdio

// Credits bound how many input lines are being worked on at once. The reader
// takes one before it hands a line on and the line's consumer gives it back
// when the line is fully dealt with (its response written, or no response
// due). When none is left the reader stops reading, the pipe fills, and the
// client feels back-pressure instead of the server buffering without bound.
type Credits struct{ ch chan struct{} }

// NewCredits returns n credits.
func NewCredits(n int) *Credits {
	if n < 1 {
		n = 1
	}
	return &Credits{ch: make(chan struct{}, n)}
}

// TryAcquire takes a credit if one is free, without waiting.
func (c *Credits) TryAcquire() bool {
	select {
	case c.ch <- struct{}{}:
		return true
	default:
		return false
	}
}

// Acquire takes a credit, waiting while none is free. It returns false if
// stop is closed first.
func (c *Credits) Acquire(stop <-chan struct{}) bool {
	select {
	case c.ch <- struct{}{}:
		return true
	default:
	}
	select {
	case c.ch <- struct{}{}:
		return true
	case <-stop:
		return false
	}
}

// Release gives a credit back.
func (c *Credits) Release() {
	select {
	case <-c.ch:
	default:
		panic("stdio: Credits.Release without Acquire")
	}
}

// InUse reports how many credits are taken.
func (c *Credits) InUse() int { return len(c.ch) }
