package stdio

import "errors"

// Capture is a running capture of stdout. On Windows there is none:
// CaptureStdout says so, and stray prints reach stderr as Claim leaves
// them (see Claim).
type Capture struct{}

// CaptureStdout is not available on Windows; the error says so.
func CaptureStdout(deliver func(line []byte, partial bool), opts CaptureOptions) (*Capture, error) {
	return nil, errors.New("stdio: capturing stdout is not supported on Windows")
}

// stats reports nothing: nothing is captured.
func (c *Capture) stats() captureStats { return captureStats{} }

// Stop does nothing.
func (c *Capture) Stop() error { return nil }
