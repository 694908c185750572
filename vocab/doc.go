// Package vocab names the choices of an estimate, the words every other
// package of dime and both binaries share: the kernel, the bandwidth rule,
// the frequencies' variant, the precision of the rank-k updates, the row
// model, and the bound on the values the estimators take.
//
// Contract: every type here is a small value whose zero value is the
// library's default choice (Gaussian, the fixed bandwidth √(d/2), plain
// frequencies, iid rows), except Precision, whose zero value Float64 is the
// precision of a bare accumulator. Each type implements
// encoding.TextMarshaler and encoding.TextUnmarshaler with the names the
// command line uses, so that a flag binds to it with flag.TextVar and a
// value prints as the user typed it. Parsing never panics; a name that is
// not one of the type's is an error for which IsInvalid reports true (and
// whose Usage method returns true: exit status 2 for a command). The
// package holds no mutable state and imports nothing of dime.
package vocab
