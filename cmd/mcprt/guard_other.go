//go:build !unix

package main

import "fmt"

func guard(_ []string, s streams) int {
	fmt.Fprint(s.Stderr, "mcprt guard: process groups are needed, and this system has none\n")
	return 1
}
