package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/dime-project/dime/dataset"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"

	dimebeam "github.com/dime-project/dime/beam"
	"github.com/dime-project/dime/outfile"
	"github.com/dime-project/dime/redact"
	"github.com/dime-project/dime/report"
	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/vocab"
)

func init() {
	register.DoFn1x2[stream.Result, []byte, error](&reportFn{})
}

// The runners dimebeam offers, and those that run the workers in this
// process, so that they can write to a local temporary file.
var (
	knownRunners = []string{"prism", "direct", "dataflow", "flink", "spark", "universal"}
	localRunners = []string{"prism", "direct"}
)

// run runs the command and returns its exit status.
func run(ctx context.Context, o options, stdout, stderr io.Writer) int {
	quietLogs(stderr, o.verbose)
	job := score
	if o.rank != nil {
		job = rankCmd
	}
	runner, err := o.runnerName()
	if err == nil {
		err = job(ctx, o, runner, stdout, stderr)
	}
	if err == nil {
		return 0
	}
	// The message's text on one line, with dimebeam's prefix once; the
	// exit status is the error's kind, whatever its text.
	fmt.Fprintf(stderr, "dimebeam: %s\n", redact.String(strings.TrimPrefix(oneLine(err.Error()), "dimebeam: ")))
	if vocab.IsUsage(err) {
		return 2
	}
	return 1
}

// oneLine folds a message of several lines into one.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func score(ctx context.Context, o options, runner string, stdout, stderr io.Writer) error {
	start := time.Now()
	var rules [2]string // as given: the pilot makes median and auto explicit
	config := func() (dimebeam.Config, []string, error) {
		cfg, inputs, err := o.config()
		rules = [2]string{cfg.Stream.BandwidthX.String(), cfg.Stream.BandwidthY.String()}
		return cfg, inputs, err
	}
	reading := func(c dimebeam.Config) dimebeam.Config { return c }
	cfg, inputs, pilot, l, err := prepare(ctx, &o, runner, config, reading, dimebeam.ChoosePilot)
	if err != nil {
		return err
	}
	defer l.cleanup()
	cfg.TempDir = l.tempDir
	p, s := beam.NewPipelineWithRoot()
	sums := dimebeam.Sums(s, beam.CreateList(s, inputs), cfg)
	rf := &reportFn{Input: l.input, Start: start.UnixNano(), RuleX: rules[0], RuleY: rules[1], Scaling: cfg.Stream.Scaling, Pilot: pilot}
	reports := beam.ParDo(s, rf, dimebeam.Results(s, sums, cfg))
	return l.run(ctx, p, s, reports, sums, stdout, stderr, printResult)
}

// runnerName returns the runner (--runner, Beam's --runner, prism), checked
// with the environment it runs the workers in.
func (o *options) runnerName() (string, error) {
	runner := o.runner
	if runner == "" {
		runner = *runners.Runner
	}
	if runner == "" {
		runner = "prism"
	}
	given := runner
	runner = strings.ToLower(strings.TrimSuffix(strings.TrimSuffix(runner, "Runner"), "runner"))
	if !slices.Contains(knownRunners, runner) {
		return "", usagef("--runner %q: want one of %s", given, strings.Join(knownRunners, ", "))
	}
	return runner, checkEnvironment(runner)
}

// launch is what a job checked and chose before its pipeline runs, the same
// for dimebeam and dimebeam rank: where the result goes, the files not to
// overwrite, the input as dime names it and the directory of the splits'
// sums.
type launch struct {
	runner            string
	local             bool   // the workers run in this process
	given             string // --output
	output, saveState string
	exclude           []string
	input             string
	tempDir           string // Config.TempDir
	cleanup           func()
}

// launch checks the flags that say where a job runs and writes: --async
// needs workers that outlive dimebeam, --output and --temp_location workers
// elsewhere. It chooses the result's path (a temporary file when the
// workers run here and --output is not given); cleanup removes it.
func (o *options) launch(runner string) (*launch, error) {
	l := &launch{runner: runner, given: o.output, output: o.output, saveState: o.saveState, cleanup: func() {}}
	l.local = slices.Contains(localRunners, runner) || strings.EqualFold(*jobopts.EnvironmentType, "loopback")
	if *jobopts.Async && l.local {
		// The workers of a local runner live in this process: a submitted
		// job would die with it (the SDK panicked).
		return nil, usagef("--async needs workers that outlive dimebeam (a job server or a service); with --runner %s or LOOPBACK they run in this process", runner)
	}
	if l.output == "" {
		if !l.local {
			return nil, usagef("--output is required with --runner %s: the workers write the result there", runner)
		}
		dir, err := os.MkdirTemp("", "dimebeam-")
		if err != nil {
			return nil, err
		}
		l.cleanup = func() { os.RemoveAll(dir) }
		l.output = filepath.Join(dir, "result.json")
	}
	if f := flag.Lookup("temp_location"); !l.local && (f == nil || f.Value.String() == "") {
		// Without it the sums would be the runner's elements, 30 to 38 MB
		// each at D = 256, which a runner holds and copies.
		l.cleanup()
		return nil, usagef("--temp_location is required with --runner %s: the splits' exact sums are written there and only their names go through the runner", runner)
	}
	return l, nil
}

// prepare does what a job does before it builds its pipeline, the same
// for dimebeam and dimebeam rank: it checks the flags (config), where the
// job runs and writes (launch), resolves the dataset of the inputs once,
// as reading reads it, chooses the settings on its pilot with choose
// (which reports a missing file or a bad column at once, rather than from
// the workers) and checks the outputs (check). The caller removes what
// the launch made with its cleanup.
func prepare[C any](ctx context.Context, o *options, runner string, config func() (C, []string, error), reading func(C) dimebeam.Config,
	choose func(context.Context, *dataset.Dataset, C) (C, dimebeam.Pilot, error)) (cfg C, inputs []string, pilot dimebeam.Pilot, l *launch, err error) {
	if cfg, inputs, err = config(); err != nil {
		return cfg, nil, pilot, nil, err
	}
	if l, err = o.launch(runner); err != nil {
		return cfg, nil, pilot, nil, err
	}
	ready := func() error {
		d, err := dimebeam.Resolve(ctx, inputs, reading(cfg))
		if err != nil {
			return asUsage(err)
		}
		if cfg, pilot, err = choose(ctx, d, cfg); err != nil {
			return asUsage(err)
		}
		return l.check(inputs, d)
	}
	if err := ready(); err != nil {
		l.cleanup()
		return cfg, nil, pilot, nil, err
	}
	return cfg, inputs, pilot, l, nil
}

// check names the input as dime names it, checks the outputs as dime
// checks its own (a new path or a regular file, none of the files of the
// dataset d that inputs name, however the arguments name them) and makes
// the directory of the splits' sums.
func (l *launch) check(inputs []string, d *dataset.Dataset) error {
	files := len(d.Inputs)
	// The input as dime names it: the arguments, and the number of files
	// when it is not one.
	l.input = redact.String(strings.Join(inputs, " "))
	if files != 1 || len(inputs) != 1 {
		l.input += fmt.Sprintf(" (%d files)", files)
	}
	l.exclude = append(slices.Clone(inputs), d.LocalFiles()...)
	for _, out := range []struct{ flag, path string }{{"--output", l.given}, {"--save-state", l.saveState}} {
		if out.path == "" {
			continue
		}
		if err := dimebeam.CheckOutput(out.path, l.exclude...); err != nil {
			var oe *outfile.Error
			if errors.As(err, &oe) {
				err = oe
			}
			return usagef("%s %v", out.flag, err)
		}
		if overwritesInput(out.path, inputs) {
			return usagef("%s %s is an input: refusing to overwrite it", out.flag, out.path)
		}
	}
	var err error
	l.tempDir, err = tempDir(l.local)
	return err
}

// tempDir returns the directory of this job's partial sums (Config.TempDir):
// a new directory under --temp_location when it is given, a new local
// temporary directory when the workers run on this machine, or none (the
// sums then travel through the runner).
func tempDir(local bool) (string, error) {
	if f := flag.Lookup("temp_location"); f != nil && f.Value.String() != "" {
		return strings.TrimSuffix(f.Value.String(), "/") + fmt.Sprintf("/dimebeam-%016x", rand.Uint64()), nil
	}
	if !local {
		return "", nil
	}
	return os.MkdirTemp("", "dimebeam-sums-")
}

// printSubmitted says on stderr where the result of a submitted job will
// be written, without the output's credentials.
func printSubmitted(stderr io.Writer, output string) {
	fmt.Fprintf(stderr, "dimebeam: job submitted; the result will be written to %s\n", redact.String(output))
}

// run writes the reports (one []byte) to the output and the state of the
// merged sums (one Merged) to --save-state, runs the pipeline, removes the
// splits' sums, and prints the output with print (not with --async).
func (l *launch) run(ctx context.Context, p *beam.Pipeline, s beam.Scope, reports, sums beam.PCollection, stdout, stderr io.Writer,
	print func(ctx context.Context, output string, stdout, stderr io.Writer) error) error {
	dimebeam.WriteFile(s, reports, l.output, l.exclude...)
	if l.saveState != "" {
		dimebeam.WriteState(s, sums, l.saveState, l.exclude...)
	}
	_, err := beam.Run(ctx, l.runner, p)
	if *jobopts.Async {
		if err == nil {
			printSubmitted(stderr, l.output)
			if l.tempDir != "" {
				fmt.Fprintf(stderr, "dimebeam: the shards' sums will be left in %s: remove it once the job is done\n", redact.String(l.tempDir))
			}
		}
		return jobError(err)
	}
	// The sums are removed whether the job succeeded or not.
	if rmErr := dimebeam.RemoveTemp(ctx, l.tempDir); rmErr != nil {
		fmt.Fprintf(stderr, "dimebeam: warning: removing the temporary sums in %s: %s\n", redact.String(l.tempDir), redact.String(rmErr.Error()))
	}
	if err != nil {
		return jobError(err)
	}
	return print(ctx, l.output, stdout, stderr)
}

// readOutput reads what the pipeline wrote to output.
func readOutput(ctx context.Context, output string) ([]byte, error) {
	fs, err := filesystem.New(ctx, output)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	b, err := filesystem.Read(ctx, fs, output)
	if err != nil {
		// A job that wrote nothing had no rows to combine.
		return nil, usagef("reading the result %s: %v (no rows in the input?)", output, err)
	}
	return b, nil
}

// printResult prints the JSON the pipeline wrote, and on stderr the
// bandwidths that a rule chose.
func printResult(ctx context.Context, output string, stdout, stderr io.Writer) error {
	b, err := readOutput(ctx, output)
	if err != nil {
		return err
	}
	var r report.Report
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("reading the result %s: %v", output, err)
	}
	var chosen []string
	for _, v := range []struct {
		name, rule string
		sigma      float64
	}{{"sigma_x", r.SigmaRuleX, r.SigmaX}, {"sigma_y", r.SigmaRuleY, r.SigmaY}} {
		if v.rule == "median" || v.rule == "auto" {
			chosen = append(chosen, fmt.Sprintf("%s %.9g (%s)", v.name, v.sigma, v.rule))
		}
	}
	if len(chosen) > 0 {
		on := "the pilot rows"
		if r.Scaling != nil {
			switch r.Scaling.Pilot {
			case "sample":
				on = fmt.Sprintf("a seeded sample of %d rows", r.Scaling.PilotRows)
			case "prefix":
				on = fmt.Sprintf("the first %d rows (files in path order)", r.Scaling.PilotRows)
			}
		}
		fmt.Fprintf(stderr, "dimebeam: %s, chosen on %s of the dataset and used by every split\n",
			strings.Join(chosen, ", "), on)
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(stderr, "dimebeam: warning: %s\n", w)
	}
	_, err = stdout.Write(b)
	return err
}

// reportFn turns the result into the JSON of dime score --json, one line.
type reportFn struct {
	Input string
	Start int64 // the launch, in Unix nanoseconds: elapsed_seconds counts from it
	// RuleX and RuleY are the bandwidth rules as given (the pipeline gets
	// the bandwidths that median and auto chose as explicit values).
	RuleX, RuleY string
	// Scaling is the columns' standardization, chosen on the rows that
	// Pilot describes (Rows rows of DimX and DimY columns, 0 when no pilot
	// was read, of the kind Method names).
	Scaling stream.Scaling
	dimebeam.Pilot
}

func (f *reportFn) ProcessElement(r stream.Result) ([]byte, error) {
	rep := report.RFF(r, time.Since(time.Unix(0, f.Start)))
	rep.Input = f.Input
	if f.RuleX != "" {
		rep.SigmaRuleX, rep.SigmaRuleY = f.RuleX, f.RuleY
	}
	rep.SetScaling(f.Scaling, f.Rows, f.Method.String())
	rep.Warn(f.DimX, f.DimY, math.Log(float64(2*r.Features)))
	b, err := json.Marshal(rep)
	return append(b, '\n'), dimebeam.TagJobError(err)
}

// overwritesInput reports whether a local output path is an input, or a
// data file inside an input directory (which it would clobber, or join).
func overwritesInput(out string, inputs []string) bool {
	o, err := filepath.Abs(out)
	if err != nil || strings.Contains(out, "://") {
		return false
	}
	for _, in := range inputs {
		i, err := filepath.Abs(in)
		if err != nil {
			continue
		}
		if o == i {
			return true
		}
		st, err := os.Stat(i)
		if err == nil && st.IsDir() && strings.HasPrefix(o, i+string(filepath.Separator)) {
			if _, err := dataset.FormatFromPath(o); err == nil {
				return true
			}
		}
	}
	return false
}

// jobError returns the error of a failed job (the error of beam.Run; nil
// for nil): the error of the stage that failed, which says whether the input
// was at fault (dimebeam.ReadJobError), or, when no stage said why (the
// runner, the connection to it or a worker process failed), the runner's
// message on one line, a failure.
func jobError(err error) error {
	if err == nil {
		return nil
	}
	if je, ok := dimebeam.ReadJobError(err); ok {
		return je
	}
	return errors.New(oneLine(err.Error()))
}
