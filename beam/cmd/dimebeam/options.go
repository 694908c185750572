package main

import (
	"flag"
	"os"
	"strings"

	dimebeam "github.com/dime-project/dime/beam"
	"github.com/dime-project/dime/cliflag"
	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/vocab"
)

// options are dimebeam's own flags (the Beam SDK's are on flag.CommandLine
// too): the estimator's and the input's, which dime takes too (package
// cliflag), and dimebeam's.
type options struct {
	inputs    inputList
	est       cliflag.Estimator
	in        cliflag.Input
	splitRows int64
	output    string
	saveState string
	verbose   bool
	args      []string      // positional arguments: more inputs
	runner    string        // set by run from --runner
	rank      *cliflag.Rank // dimebeam rank's flags; nil for a score
}

// inputList is a repeatable flag.
type inputList []string

func (l *inputList) String() string { return strings.Join(*l, " ") }

func (l *inputList) Set(v string) error {
	*l = append(*l, v)
	return nil
}

func (o *options) register(fs *flag.FlagSet) {
	fs.Var(&o.inputs, "input", "data file, directory (read recursively) or quoted glob; repeat for more (positional arguments count too)")
	o.est.Register(fs)
	o.est.RegisterRFF(fs)
	o.est.RegisterPilot(fs)
	o.in.Register(fs)
	fs.Int64Var(&o.splitRows, "split-rows", dimebeam.DefaultSplitRows, "at most this many rows per split (unit of work of one worker): small Parquet files are packed together, large ones cut into runs of row groups; larger splits cost less, smaller ones spread a small dataset over more workers")
	fs.StringVar(&o.output, "output", "", "write the JSON result to this path or URL (required unless the runner runs here: prism, direct, loopback)")
	fs.StringVar(&o.saveState, "save-state", "", "write the merged estimator state to this path or URL (dime merge reads it)")
	fs.BoolVar(&o.verbose, "verbose", false, "show the runner's logs on stderr")
}

// registerRank registers the flags of dimebeam rank: dime rank's
// estimator and ranking flags (--group, --top, --csv; D's screening
// default), and dimebeam's.
func (o *options) registerRank(fs *flag.FlagSet) {
	o.register(fs)
	o.est.RegisterRows(fs)
	o.est.RegisterNormalized(fs)
	o.rank = &cliflag.Rank{}
	o.rank.Register(fs, &o.est, cliflag.DefaultRankFeatures)
	if fl := fs.Lookup("output"); fl != nil {
		fl.Usage = "write the JSON result (the CSV with --csv) to this path or URL (required unless the runner runs here: prism, direct, loopback)"
	}
}

// inputList returns the inputs: --input and the positional arguments.
func (o *options) inputList() ([]string, error) {
	inputs := append(append([]string{}, o.inputs...), o.args...)
	if len(inputs) == 0 {
		return nil, usagef("--input is required: a data file, a directory or a quoted glob")
	}
	for _, in := range inputs {
		if in == "-" {
			return nil, usagef("--input -: a pipeline cannot read stdin; give files")
		}
	}
	return inputs, nil
}

// usagef and asUsage make the errors of the command line or of the input
// (exit status 2): vocab.Usagef and vocab.AsUsage, as in dime.
var (
	usagef  = vocab.Usagef
	asUsage = vocab.AsUsage
)

// config checks the flags and returns the pipeline's configuration and
// inputs.
func (o *options) config() (dimebeam.Config, []string, error) {
	var cfg dimebeam.Config
	inputs, err := o.inputList()
	if err != nil {
		return cfg, nil, err
	}
	xcols, ycols, err := o.est.Views()
	if err != nil {
		return cfg, nil, err
	}
	c, err := o.est.StreamConfig(xcols, ycols)
	if err != nil {
		return cfg, nil, err
	}
	if cfg, err = o.reading(xcols, ycols); err != nil {
		return cfg, nil, err
	}
	if o.est.PilotRows > dimebeam.MaxSampleRows {
		return cfg, nil, usagef("--pilot-rows %d: want 2 to %d (the pilot rows travel through the pipeline)", o.est.PilotRows, dimebeam.MaxSampleRows)
	}
	if c, err = o.est.ApplyLike(c, readState, xcols, ycols); err != nil {
		return cfg, nil, err
	}
	cfg.Stream, cfg.SampleRows = c, o.est.PilotRows
	// The scaling of standardized columns is chosen on the data, by
	// dimebeam.ChoosePilot, before the pipeline is built: check the rest.
	v := cfg
	v.Stream.Standardize = v.Stream.Standardize && !v.Stream.Scaling.Empty()
	if err := v.Validate(); err != nil {
		return cfg, nil, usagef("%v", err)
	}
	return cfg, inputs, nil
}

// reading checks the input's flags and --split-rows and returns how the
// pipeline reads the dataset: the reader options for views of the given
// columns, and the rows of a split.
func (o *options) reading(xcols, ycols []string) (dimebeam.Config, error) {
	opts, err := o.in.Options(xcols, ycols)
	if err != nil {
		return dimebeam.Config{}, err
	}
	if o.splitRows < 1 {
		return dimebeam.Config{}, usagef("--split-rows %d: want at least 1", o.splitRows)
	}
	return dimebeam.Config{Read: dimebeam.NewReadOptions(opts), SplitRows: o.splitRows}, nil
}

// readState reads the saved state at path, for --like (cliflag's
// ApplyLike).
func readState(path string) (*stream.Estimator, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usagef("--like: %v", err)
	}
	defer f.Close()
	st, err := stream.ReadState(f)
	if err != nil {
		return nil, usagef("--like %s: %v", path, err)
	}
	return st, nil
}
