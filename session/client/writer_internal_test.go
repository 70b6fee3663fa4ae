//go:build unix

package client

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestWriterWholeLines: many senders at once into a pipe that fills (a
// slow reader), lines batched and their buffers recycled: every line
// arrives whole, once, and each sender's lines in the order sent.
func TestWriterWholeLines(t *testing.T) {
	r, wf, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w := newWriter(wf)
	done := make(chan struct{})
	go func() { defer close(done); w.run() }()

	const senders, each = 8, 300
	var wg sync.WaitGroup
	for s := range senders {
		wg.Go(func() {
			for i := range each {
				// Long enough that a few fill the pipe.
				text := fmt.Sprintf("s%d-%d-%s", s, i, strings.Repeat("x", 1000+i%7*300))
				bp := lineBuf(len(text))
				line := append(*bp, text...)
				if i%3 == 0 {
					w.send(0, line, nil)
				} else {
					w.send(int64(i+1), line, bp)
				}
			}
		})
	}
	got := map[int]int{} // sender -> next index expected
	br := bufio.NewReaderSize(r, 1<<20)
	for n := 0; n < senders*each; n++ {
		if n%100 == 0 {
			time.Sleep(20 * time.Millisecond) // a slow reader: the pipe fills
		}
		l, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		var s, i int
		var x string
		if _, err := fmt.Sscanf(strings.TrimSuffix(l, "\n"), "s%d-%d-%s", &s, &i, &x); err != nil || len(x) != 1000+i%7*300 || strings.Trim(x, "x") != "" {
			t.Fatalf("line %d is not whole: %.60q… (%v)", n, l, err)
		}
		if got[s] != i {
			t.Fatalf("sender %d: line %d came when %d was next", s, i, got[s])
		}
		got[s]++
	}
	wg.Wait()
	w.close(time.Second)
	<-done
}
