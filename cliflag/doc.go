// Package cliflag is the one flag and validation layer of the dime and
// dimebeam commands: every flag both take is declared here, with its help
// text and default, and checked here, so that the two binaries cannot
// drift apart.
//
// Contract: Estimator.Register* and Input.Register add flags to a
// flag.FlagSet (the vocabulary types of package vocab bound with
// flag.TextVar, so that a bad --kernel, --sigma, --variant, --precision or
// --rows fails at parse time naming the flag); after the set is parsed,
// Estimator.StreamConfig, Estimator.ExactConfig and Input.Options check
// every value and return the library's configuration, or an error for
// which vocab.IsUsage reports true (exit status 2), one line naming the
// flag. Nothing here reads data or changes process state.
package cliflag
