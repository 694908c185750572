// Package cli implements the dime command: one function per subcommand, each
// with its own flag.FlagSet, driven by Main with explicit streams so that tests
// run commands in-process against buffers.
//
// Exit status: 0 on success, 2 for usage and input errors (bad flags, bad
// data), 1 for anything else, 3 when the result met a --fail-if gate (score,
// monitor; the result is printed all the same), and 128 + the signal (130,
// 143) when SIGINT or SIGTERM cut the reading short after the command
// printed what it had.
// Errors and warnings are one line each on stderr, prefixed "dime: ".
package cli
