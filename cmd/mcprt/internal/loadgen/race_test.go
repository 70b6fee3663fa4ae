//go:build race

package loadgen

func init() { raceEnabled = true }
