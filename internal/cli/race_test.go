//go:build race

package cli

// raceEnabled reports whether the tests run under the race detector, whose
// instrumentation changes what allocates and what the heap keeps.
const raceEnabled = true
