//go:build !race

package mcpadapter

// raceEnabled is true when the tests run with -race, whose instrumentation
// changes allocation counts.
const raceEnabled = false
