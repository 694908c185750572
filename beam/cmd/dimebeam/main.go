// Command dimebeam scores a dataset with dime's streaming RFF estimator on
// Apache Beam: locally on Prism (the default) or the direct runner, or on
// Google Cloud Dataflow, Apache Flink and Apache Spark.
//
//	dimebeam --input DIR|PATTERN --x COLS --y COLS [--sigma … --features …]
//	         [--output result.json] [--save-state all.state] [--runner prism]
//
// It prints one JSON object with the fields of dime score --json (and writes
// it to --output), and with --save-state the merged state that dime merge
// and stream.ReadState read. Every flag of the Beam SDK and its runners is
// accepted too (--endpoint, --environment_type, --project, --region,
// --temp_location, …). Errors are one line on stderr; the exit status is 2
// for usage and input errors, 1 for other failures. See the README's
// "Beyond one machine".
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/s3"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/dataflow"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/direct"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/flink"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/spark"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/universal"

	"github.com/dime-project/dime/host"
	"github.com/dime-project/dime/redact"
)

func main() {
	// The process-wide choices, which the library leaves to main (the same
	// in a worker, which runs this main too): the fastest linear-algebra
	// backend compiled in and a soft memory limit below what the process
	// may use.
	host.UseBLAS()
	host.LimitMemory()
	var o options
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "rank" {
		o.registerRank(flag.CommandLine)
		args = args[1:]
	} else {
		o.register(flag.CommandLine)
	}
	flag.CommandLine.Init("dimebeam", flag.ContinueOnError)
	if code, ok := parseFlags(flag.CommandLine, args, os.Stderr, o.rank != nil); !ok {
		os.Exit(code)
	}
	// A worker started by a runner runs its harness here and never returns.
	beam.Init()
	o.args = flag.Args()
	os.Exit(run(context.Background(), o, os.Stdout, os.Stderr))
}

// parseFlags parses the command line: a bad flag is one line on w and exit
// status 2, -h the usage and 0; ok is true when the command should run.
func parseFlags(fs *flag.FlagSet, args []string, w io.Writer, rank bool) (code int, ok bool) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	switch {
	case err == nil:
		return 0, true
	case errors.Is(err, flag.ErrHelp):
		usage(w, rank)
		return 0, false
	}
	cmd := "dimebeam"
	if rank {
		cmd = "dimebeam rank"
	}
	fmt.Fprintf(w, "dimebeam: %s (run %s -h for the flags)\n", redact.String(err.Error()), cmd)
	return 2, false
}

func usage(w io.Writer, rank bool) {
	fs := flag.NewFlagSet("dimebeam", flag.ContinueOnError)
	var o options
	if rank {
		fmt.Fprint(w, `usage: dimebeam rank --input DIR|PATTERN|FILE --y TARGET --x 'PATTERN,...' [--group NAME=A,B] [flags]

Ranks candidates against a target on Apache Beam, as dime rank ranks them,
and prints the ranking as one JSON object (the fields of dime rank --json),
or as CSV with --csv.

dimebeam rank flags:
`)
		o.registerRank(fs)
	} else {
		fmt.Fprint(w, `usage: dimebeam --input DIR|PATTERN|FILE --x COLS --y COLS [flags]
       dimebeam rank --input DIR|PATTERN|FILE --y TARGET --x 'PATTERN,...' [flags]

Scores a dataset with dime's streaming RFF estimator on Apache Beam and
prints the result as one JSON object (the fields of dime score --json).

dimebeam flags:
`)
		o.register(fs)
	}
	fs.SetOutput(w)
	fs.PrintDefaults()
	fmt.Fprint(w, `
Beam flags: --runner prism|direct|dataflow|flink|spark|universal (default
prism), --endpoint, --environment_type, --project, --region, --temp_location,
--staging_location, --worker_binary, --async and the others of the Beam Go
SDK and its runners.
`)
}

// quietLogs silences the runners' logs (Prism logs every job step at INFO)
// unless verbose: dimebeam's own messages and errors are enough.
func quietLogs(stderr io.Writer, verbose bool) {
	level := slog.Level(100) // above every level: nothing
	if verbose {
		level = slog.LevelInfo
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})))
}
