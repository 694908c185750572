package cli

import (
	"flag"
	"strconv"
	"strings"

	"github.com/dime-project/dime/cliflag"
	"github.com/dime-project/dime/exact"
	"github.com/dime-project/dime/stream"
)

// estimatorFlags are the estimator flags (package cliflag, shared with
// dimebeam) and dime's own --json and --progress.
type estimatorFlags struct {
	cliflag.Estimator
	asJSON   bool
	progress string
}

// register adds the shared flags to fs.
func (f *estimatorFlags) register(fs *flagSet) {
	f.Estimator.Register(fs.FlagSet)
	fs.StringVar(&f.progress, "progress", "auto", "progress on stderr: auto (when stderr is a terminal), always or never")
}

// registerJSON adds --json with the given default.
func (f *estimatorFlags) registerJSON(fs *flagSet, def bool, usage string) {
	fs.BoolVar(&f.asJSON, "json", def, usage)
}

// registerRFF adds the flags of the RFF estimator.
func (f *estimatorFlags) registerRFF(fs *flagSet) {
	f.RegisterRFF(fs.FlagSet)
	f.RegisterRows(fs.FlagSet)
	f.RegisterNormalized(fs.FlagSet)
	f.RegisterPilot(fs.FlagSet)
}

// views returns the column names of both views.
func (f *estimatorFlags) views() (x, y []string, err error) { return f.Views() }

// checkProgress checks --progress.
func (f *estimatorFlags) checkProgress() error {
	switch f.progress {
	case "auto", "always", "never":
		return nil
	}
	return usagef("--progress %q: want auto, always or never", f.progress)
}

// exactConfig returns the configuration of the exact estimator.
func (f *estimatorFlags) exactConfig() (exact.Config, error) {
	if err := f.checkProgress(); err != nil {
		return exact.Config{}, err
	}
	return f.ExactConfig()
}

// streamConfig returns the configuration of the RFF estimator, for views
// with the given column names.
func (f *estimatorFlags) streamConfig(xcols, ycols []string) (stream.Config, error) {
	if err := f.checkProgress(); err != nil {
		return stream.Config{}, err
	}
	c, err := f.StreamConfig(xcols, ycols)
	if err != nil {
		return c, err
	}
	if err := checkRFFMemory(f.Features, f.Permutations, f.Groups); err != nil {
		return stream.Config{}, err
	}
	return c, nil
}

// like returns c, or with --like the settings of that state for views with
// the given column names (nil: the state's): cliflag's ApplyLike, reading
// the state with readStateFile.
func (f *estimatorFlags) like(c stream.Config, xcols, ycols []string) (stream.Config, error) {
	return f.ApplyLike(c, readStateFile, xcols, ycols)
}

// parseInts parses a comma-separated list of positive integers.
func parseInts(flag, list string) ([]int, error) {
	var out []int
	for _, s := range strings.Split(list, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || v < 1 {
			return nil, usagef("--%s %q: want a comma-separated list of positive integers", flag, list)
		}
		out = append(out, v)
	}
	return out, nil
}

// given reports whether the flag name was given on the command line.
func (fs *flagSet) given(name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}
