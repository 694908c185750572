// Command dime measures statistical dependence between two groups of columns
// with DiME, a Difference of Matrix-based Entropies. Run "dime help" for the
// commands.
package main

import (
	"os"

	"github.com/dime-project/dime/host"
	"github.com/dime-project/dime/internal/cli"
)

func main() {
	// The process-wide choices, which the library leaves to main: the
	// fastest linear-algebra backend compiled in, a soft memory limit below
	// what the process may use, and score's garbage-collector settings.
	host.UseBLAS()
	host.LimitMemory()
	cli.TuneRuntime()
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
