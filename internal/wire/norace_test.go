//go:build !race

package wire

// raceEnabled is true when the tests run with -race, whose instrumentation
// changes allocation counts (and makes sync.Pool drop what it is given).
const raceEnabled = false
