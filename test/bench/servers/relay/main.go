// Command relay is the floor of a gateway's hop: a process that starts a
// server and copies lines between its own stdin and stdout and the
// server's, reading nothing in them. Whatever a gateway adds beyond
// relay's figures is its own work; what relay adds to the server alone is
// the cost of one more process in the path (two more pipes, two more
// wake-ups per round trip).
//
//	relay CMD [ARGS...]
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: relay CMD [ARGS...]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		os.Exit(1)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		os.Exit(1)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		os.Exit(1)
	}
	go func() {
		copyLines(in, os.Stdin)
		in.Close() // the server sees EOF when the client closes
	}()
	copyLines(os.Stdout, out)
	if err := cmd.Wait(); err != nil {
		os.Exit(1)
	}
}

// copyLines copies src to dst a line at a time, flushing whenever nothing
// more is buffered: lines that arrive together leave in one write.
func copyLines(dst io.Writer, src io.Reader) {
	r := bufio.NewReaderSize(src, 64<<10)
	w := bufio.NewWriterSize(dst, 64<<10)
	for {
		line, err := r.ReadSlice('\n')
		w.Write(line)
		if err != nil && err != bufio.ErrBufferFull {
			w.Flush()
			return
		}
		if r.Buffered() == 0 && w.Flush() != nil {
			return
		}
	}
}
