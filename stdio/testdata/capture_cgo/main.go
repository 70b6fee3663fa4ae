//go:build cgo

// Command capture_cgo is run by TestCaptureCgo: C code in this process
// prints through C stdio while fd 1 is captured. It prints what was
// delivered, as JSON, to its restored stdout.
package main

/*
#include <stdio.h>

static void say(int i) { printf("c line %d\n", i); fflush(stdout); }
static void unfinished(void) { printf("c unfinished"); fflush(stdout); }
static void after(void) { printf("c after stop\n"); fflush(stdout); }
*/
import "C"

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/mcprt/mcprt/stdio"
)

type delivery struct {
	Data    string `json:"data"`
	Partial bool   `json:"partial"`
}

func main() {
	var got []delivery
	c, err := stdio.CaptureStdout(func(line []byte, partial bool) {
		got = append(got, delivery{string(line), partial})
	}, stdio.CaptureOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for i := range 1000 {
		C.say(C.int(i))
	}
	C.unfinished()
	if err := c.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	C.after()
	out, _ := json.Marshal(got)
	fmt.Printf("%s\n", out)
}
