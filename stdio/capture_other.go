//go:build unix && !linux

package stdio

// growPipe is a no-op where pipe buffers cannot be resized.
func growPipe(int) {}
