package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	dimebeam "github.com/dime-project/dime/beam"
	"github.com/dime-project/dime/decode"
	"github.com/dime-project/dime/rank"
	"github.com/dime-project/dime/report"
	"github.com/dime-project/dime/vocab"
)

func init() {
	register.DoFn2x2[context.Context, dimebeam.Merged, []byte, error](&rankReportFn{})
}

// rankCmd runs dimebeam rank: the candidates against the target, as dime
// rank ranks them (the same views, settings, pilot and report), on Beam,
// launched, combined and written as dimebeam's score is.
func rankCmd(ctx context.Context, o options, runner string, stdout, stderr io.Writer) error {
	start := time.Now()
	config := func() (dimebeam.RankConfig, []string, error) { return o.rankConfig(ctx) }
	cfg, inputs, pilot, l, err := prepare(ctx, &o, runner, config, dimebeam.RankConfig.Reading, dimebeam.ChooseRankPilot)
	if err != nil {
		return err
	}
	defer l.cleanup()
	cfg.Read.TempDir = l.tempDir
	p, s := beam.NewPipelineWithRoot()
	sums := dimebeam.RankSums(s, beam.CreateList(s, inputs), cfg)
	rf := &rankReportFn{Input: l.input, Start: start.UnixNano(), Top: o.rank.Top, CSV: o.rank.CSV, Pilot: pilot}
	return l.run(ctx, p, s, beam.ParDo(s, rf, sums), sums, stdout, stderr, printOutput)
}

// rankConfig checks the flags of dimebeam rank and returns the pipeline's
// configuration (its bandwidths still to choose, but with --like) and
// inputs.
func (o *options) rankConfig(ctx context.Context) (dimebeam.RankConfig, []string, error) {
	var cfg dimebeam.RankConfig
	inputs, err := o.inputList()
	if err != nil {
		return cfg, nil, err
	}
	target, candidates, err := o.rank.Selectors(&o.est)
	if err != nil {
		return cfg, nil, err
	}
	var rc rank.Config
	var like *rank.Accumulator
	if o.est.Like != "" {
		if like, err = o.rankLike(); err != nil {
			return cfg, nil, err
		}
		rc = like.Config()
	} else {
		sc, err := o.est.MultiConfig()
		if err != nil {
			return cfg, nil, err
		}
		rc = rank.Config{Stream: sc}
	}
	read, err := o.reading(target, target)
	if err != nil {
		return cfg, nil, err
	}
	probe := func(x, y []string) ([]string, int, error) {
		opts := read.Read.Options()
		opts.Columns.X, opts.Columns.Y = x, y
		r, err := decode.OpenDataset(ctx, inputs, nil, opts)
		if err != nil {
			return nil, 0, asUsage(err)
		}
		defer r.Close()
		return r.Columns().X.Labels(), r.DimX(), nil
	}
	lay, err := rank.RankLayout(probe, target, candidates, o.rank.Groups)
	if err != nil {
		return cfg, nil, usagef("rank: %s", strings.TrimPrefix(err.Error(), rank.ErrInvalidInput.Error()+": "))
	}
	if like != nil {
		if err := rank.SameViews(like.Plan(), lay.Plan); err != nil {
			return cfg, nil, usagef("--like %s: %s", o.est.Like, strings.TrimPrefix(err.Error(), rank.ErrIncompatible.Error()+": "))
		}
	}
	cfg = dimebeam.RankConfig{Layout: lay, Rank: rc, Read: read}
	if err := cfg.Reading().Validate(); err != nil {
		return cfg, nil, usagef("%v", err)
	}
	return cfg, inputs, nil
}

// rankLike reads the multi-pair state of --like.
func (o *options) rankLike() (*rank.Accumulator, error) {
	if err := o.est.CheckLike(); err != nil {
		return nil, err
	}
	f, err := os.Open(o.est.Like)
	if err != nil {
		return nil, usagef("--like: %v", err)
	}
	defer f.Close()
	st, err := rank.ReadState(f)
	if err != nil {
		return nil, usagef("--like %s: %v", o.est.Like, err)
	}
	return st, nil
}

// rankReportFn turns the merged sums into dime rank's output: its JSON
// (--json), or with CSV its CSV, the first Top candidates (0: all).
type rankReportFn struct {
	Input string
	Start int64 // the launch, in Unix nanoseconds: elapsed_seconds counts from it
	Top   int
	CSV   bool
	// Pilot says which rows the scales and bandwidths were chosen on
	// (none with --like), as dime rank says.
	dimebeam.Pilot
}

func (f *rankReportFn) ProcessElement(ctx context.Context, m dimebeam.Merged) ([]byte, error) {
	b, err := f.report(ctx, m)
	return b, dimebeam.TagJobError(err)
}

func (f *rankReportFn) report(ctx context.Context, m dimebeam.Merged) ([]byte, error) {
	acc, err := dimebeam.RankAccumulator(ctx, m)
	if err != nil {
		return nil, err
	}
	if acc.Rows() < 2 {
		return nil, vocab.Errorf("dimebeam: %d rows in the input: need at least 2", acc.Rows())
	}
	results, err := acc.Results()
	if err != nil {
		return nil, err
	}
	r := report.RankOf(acc, results, f.Input)
	if f.Rows > 0 {
		r.Pilot, r.PilotRows = f.Method.String(), f.Rows
	}
	r.Elapsed = time.Since(time.Unix(0, f.Start)).Seconds()
	r.Top(f.Top)
	if f.CSV {
		var b bytes.Buffer
		err := r.WriteCSV(&b)
		return b.Bytes(), err
	}
	b, err := json.Marshal(r)
	return append(b, '\n'), err
}

// printOutput prints what the pipeline wrote to output.
func printOutput(ctx context.Context, output string, stdout, _ io.Writer) error {
	b, err := readOutput(ctx, output)
	if err != nil {
		return err
	}
	_, err = stdout.Write(b)
	return err
}
