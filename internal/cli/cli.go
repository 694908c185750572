package cli

import (
	"errors"
	"flag"
	"fmt"
	"github.com/dime-project/dime/decode"
	"io"
	"regexp"
	"sort"
	"strings"
	"syscall"

	"github.com/dime-project/dime/outfile"
	"github.com/dime-project/dime/redact"
	"github.com/dime-project/dime/vocab"
)

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
	// exitGate (3, gate.go): the result met a --fail-if gate.
)

// usagef and asUsage make the errors of the command line or of the input
// (exit status 2): vocab.Usagef and vocab.AsUsage, as in dimebeam.
var (
	usagef  = vocab.Usagef
	asUsage = vocab.AsUsage
)

// env is what a command can use: its streams.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// outputs are the command's output files, checked again against the
	// files of its dataset once it is resolved.
	outputs []*output
}

// command is one subcommand.
type command struct {
	summary string
	run     func(e *env, args []string) error
}

var commands map[string]command

func init() {
	commands = map[string]command{
		"demo":    {"exact and RFF DiME against the true MI on the paper's toy, generated in memory", runDemo},
		"merge":   {"merge estimator states saved by score --save-state and print the result", runMerge},
		"score":   {"streaming RFF estimate over every row of a file", runScore},
		"rank":    {"rank candidate columns by their dependence on a target, all in one pass", runRank},
		"matrix":  {"dependence between all pairs of columns in one pass, with a heatmap", runMatrix},
		"exact":   {"exact (Gram-matrix) estimate on a sample of a file's rows", runExact},
		"compare": {"exact and RFF on the same sample for several D, with their errors (and a plot)", runCompare},
		"sweep":   {"DiME and MI against the bandwidth on a sample (the paper's Appendix A), with the auto pick", runSweep},
		"monitor": {"dependence over time: windows, independence tests, alerts, Prometheus metrics", runMonitor},
		"gen":     {"write synthetic data with known dependence (the paper's toy, sine, circle, independent)", runGen},
		"version": {"what ran: module version, commit, Go version, build tags, linear-algebra backend, CPU features", runVersion},
	}
}

// Main runs the dime command with the given arguments (without the program
// name) and returns the exit status.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] == "help" && len(args) == 1) || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		printUsage(stdout)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	switch {
	case args[0] == "--version" || args[0] == "-version":
		args = append([]string{"version"}, args[1:]...)
	case args[0] == "help" && len(args) == 2: // dime help score
		args = []string{args[1], "--help"}
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "dime: unknown command %q (run \"dime help\")\n", args[0])
		return exitUsage
	}
	err := cmd.run(&env{stdin: stdin, stdout: stdout, stderr: stderr}, args[1:])
	var intr interrupted
	var met gateMet
	var cut *outfile.Error
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, &met):
		fmt.Fprintf(stderr, "dime: %s\n", oneLine(err.Error()))
		return exitGate
	case errors.As(err, &intr):
		fmt.Fprintf(stderr, "dime: %s\n", redact.String(oneLine(err.Error())))
		return intr.exitCode()
	case errors.As(err, &cut) && cut.Signal != nil:
		// A write cut short by SIGINT or SIGTERM (nothing was written):
		// 128 + the signal's number, as for a run interrupted after it
		// printed what it had.
		fmt.Fprintf(stderr, "dime: %s\n", redact.String(oneLine(err.Error())))
		if sig, ok := cut.Signal.(syscall.Signal); ok {
			return 128 + int(sig)
		}
		return exitError
	default:
		fmt.Fprintf(stderr, "dime: %s\n", redact.String(oneLine(err.Error())))
		if isUsage(err) {
			return exitUsage
		}
		return exitError
	}
}

// isUsage reports whether err is about the command line or the input: it
// says so itself (vocab.IsUsage: the usage errors of this package, of
// cliflag and the library's sentinels of invalid input), or it is one of
// the reader's.
func isUsage(err error) bool {
	return vocab.IsUsage(err) ||
		errors.Is(err, decode.ErrColumn) || errors.Is(err, decode.ErrFormat) || errors.Is(err, decode.ErrInvalidValue)
}

// oneLine folds a multi-line message into one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "dime measures statistical dependence between two groups of columns with DiME.")
	fmt.Fprintln(w, "\nUsage: dime <command> [flags]\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun \"dime <command> --help\" for a command's flags, \"dime --version\" for what is running.")
}

// flagSet is a subcommand's flags and the text of its usage.
type flagSet struct {
	*flag.FlagSet
	e        *env
	synopsis string
}

// newFlagSet returns a flag set that reports errors instead of exiting and
// prints nothing by itself: an error becomes one line from Main, and -h prints
// the usage to stdout.
func newFlagSet(e *env, name, synopsis string) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flagSet{FlagSet: fs, e: e, synopsis: synopsis}
}

// printDefaults prints the flags as flag.PrintDefaults does, but spelled with
// two dashes, as the README and the error messages spell them (the flag
// package accepts both).
func (fs *flagSet) printDefaults(w io.Writer) {
	var b strings.Builder
	fs.SetOutput(&b)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	for _, l := range strings.SplitAfter(b.String(), "\n") {
		if strings.HasPrefix(l, "  -") {
			l = "  --" + l[3:]
		}
		io.WriteString(w, l)
	}
}

// flagName matches a flag spelled with one dash in the flag package's
// errors ("flag provided but not defined: -bogus", "invalid value "x" for
// flag -rows: ...").
var flagName = regexp.MustCompile(`(^|[ :])-([A-Za-z][A-Za-z0-9-]*)`)

// doubleDash spells the flags of a flag package error with two dashes.
func doubleDash(msg string) string { return flagName.ReplaceAllString(msg, "$1--$2") }

// parseFlags parses args, turning flag errors into usage errors. Flags may
// come before or after positional arguments.
func parseFlags(fs *flagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprintf(fs.e.stdout, "Usage: dime %s %s\n\nFlags:\n", fs.Name(), fs.synopsis)
				fs.printDefaults(fs.e.stdout)
				return nil, err
			}
			return nil, usagef("%s: %s (run \"dime %s --help\")", fs.Name(), doubleDash(err.Error()), fs.Name())
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}
