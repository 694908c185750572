// Command dime measures statistical dependence between two groups of columns
// with DiME, a Difference of Matrix-based Entropies. Run "dime help" for the
// commands.
package main

import (
	"os"

	"github.com/dime-project/dime/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
