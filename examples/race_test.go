//go:build race

package examples_test

// raceEnabled is true when the tests run with -race: the examples are built
// with it too.
const raceEnabled = true
