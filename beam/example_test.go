package dimebeam_test

import (
	"bytes"
	"context"
	"fmt"
	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"
	"github.com/dime-project/dime/tablewriter"
	"os"
	"path/filepath"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	dimebeam "github.com/dime-project/dime/beam"
	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/synth"
	"github.com/dime-project/dime/vocab"
)

// Score a directory of two Parquet files on Prism, in this process, and
// read the merged state back.
func Example() {
	dir, err := os.MkdirTemp("", "dimebeam")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	for i, seed := range []uint64{1, 2} { // 2000 rows each: y depends on x
		x, y, _ := synth.Generate(synth.Spec{Kind: synth.Sine, Dim: 1, Noise: 0.2, Seed: seed}, 2000)
		w, _ := tablewriter.Create(filepath.Join(dir, fmt.Sprintf("part-%d.parquet", i)), dataset.Auto, []string{"x", "y"}, tablewriter.Options{})
		for r := range 2000 {
			w.Write([]float64{x.At(r, 0), y.At(r, 0)}, 1)
		}
		w.Close()
	}

	cfg := dimebeam.Config{Stream: stream.DefaultConfig()}
	cfg.Stream.Features = 64
	cfg.Stream.BandwidthX, cfg.Stream.BandwidthY = vocab.Sigma(1), vocab.Sigma(1)
	cfg.Read = dimebeam.NewReadOptions(decode.Options{Columns: columns.Spec{X: []string{"x"}, Y: []string{"y"}}})
	d, err := dimebeam.Resolve(context.Background(), []string{dir}, cfg)
	if err != nil {
		panic(err)
	}
	// The columns' scales, chosen on the pilot (a seeded sample of the
	// dataset's rows), for every split.
	cfg, _, err = dimebeam.ChoosePilot(context.Background(), d, cfg)
	if err != nil {
		panic(err)
	}

	p, s := beam.NewPipelineWithRoot()
	states := dimebeam.States(s, beam.Create(s, dir), cfg)
	dimebeam.WriteFile(s, states, filepath.Join(dir, "all.state"))
	if _, err := beam.Run(context.Background(), "prism", p); err != nil {
		panic(err)
	}

	b, err := os.ReadFile(filepath.Join(dir, "all.state"))
	if err != nil {
		panic(err)
	}
	est, err := stream.ReadState(bytes.NewReader(b))
	if err != nil {
		panic(err)
	}
	r, _ := est.Result()
	fmt.Printf("rows %d, MI %.3f nats, DiME analytic %.3f\n", r.Rows, r.MutualInformation, r.DiMEAnalytic)
	// Output: rows 4000, MI 0.027 nats, DiME analytic 0.024
}
