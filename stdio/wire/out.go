// Package wire holds what a transport and the session hand each other that
// is neither JSON-RPC nor a line: the outgoing message (Out) and the credit
// that bounds what is read but not yet answered (Backlog).
//
// It sits below both stdio and session, so that the session's seam needs no
// transport's package and a transport other than stdio (Streamable HTTP)
// needs no stdio: each imports this leaf, which imports nothing of the
// module.
package wire

// Out is one outgoing message. Data must be one complete JSON message
// without a line ending; its ownership passes to whoever takes it (the
// stdio writer, which may append '\n' in place: producers leave one byte of
// spare capacity to save a copy). Done, if set, is called once the message
// has been written or has been dropped because the stream is gone: it is
// how producers learn that their bytes have left the process, which is what
// bounds memory when the client stops reading.
type Out struct {
	Data []byte
	// Text and Tail, when Text is set, follow Data: the message is Data,
	// Text, Tail. A large string, a tool's text result, then leaves the
	// process without first being copied into a buffer with the rest of
	// the message. Such a message goes out in Writes of its own, after
	// those queued before it and before any that come after; Tail gets
	// the line ending.
	Text string
	Tail []byte
	Done func()
}

// Bytes is m in one slice: Data itself when no text is kept apart, else a
// copy of the three, for a transport that sends a message whole.
func (m Out) Bytes() []byte {
	if m.Text == "" {
		return m.Data
	}
	b := make([]byte, 0, len(m.Data)+len(m.Text)+len(m.Tail))
	return append(append(append(b, m.Data...), m.Text...), m.Tail...)
}
