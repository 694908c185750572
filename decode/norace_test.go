//go:build !race

package decode_test

// raceEnabled reports whether the tests run under the race detector, whose
// shadow memory inflates the resident set.
const raceEnabled = false
