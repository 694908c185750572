package dimebeam

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"

	"github.com/dime-project/dime/rank"
	"github.com/dime-project/dime/stream"
)

func init() { register.Function1x2(rankStateRows) }

// rankStateRows returns the rows of a multi-pair state.
func rankStateRows(b []byte) (int64, error) {
	a, err := rank.ReadState(bytes.NewReader(b))
	if err != nil {
		return 0, err
	}
	return a.Rows(), nil
}

// rankTestConfig returns a ranking of y0 against x0, x1 and y1 of the
// test data, its scales and bandwidths chosen on the pilot of dir.
func rankTestConfig(t *testing.T, dir string, splitRows int64) RankConfig {
	t.Helper()
	probe := func(x, _ []string) ([]string, int, error) { return x, len(x), nil }
	lay, err := rank.RankLayout(probe, testY[:1], []string{testX[0], testX[1], testY[1]}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sc := stream.DefaultConfig()
	sc.Features, sc.Seed = 16, 7
	cfg := RankConfig{Read: Config{SplitRows: splitRows}, Layout: lay, Rank: rank.Config{Stream: sc}}
	d, err := Resolve(context.Background(), []string{dir}, cfg.Reading())
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err = ChooseRankPilot(context.Background(), d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestRankSums runs a ranking of 12 splits (4 shards of 3) on Prism, with
// the sums in files of a temporary directory and in the elements: the
// state that WriteState writes and RankStates' give the same results, bit
// for bit, as the exact sum (rank.Sum: Add, Merge and Estimator, in memory)
// of one accumulator per split; RankAccumulator refuses a pair's sums, and
// a split's sum is a file of the directory.
func TestRankSums(t *testing.T) {
	dir := writeGroups(t, 100, 1200)
	cfg := rankTestConfig(t, dir, 100)
	splits := assignShards(plan(t, dir, cfg.Reading()))
	if len(splits) != 12 {
		t.Fatalf("%d splits, want 12", len(splits))
	}
	ctx := context.Background()
	var total rank.Sum
	for _, sp := range splits {
		p, err := (&rankFn{Cfg: cfg}).rank(ctx, sp)
		if err != nil {
			t.Fatal(err)
		}
		var s rank.Sum
		if err := s.UnmarshalBinary(p.Data); err != nil {
			t.Fatal(err)
		}
		if err := total.Merge(&s); err != nil {
			t.Fatal(err)
		}
	}
	acc, err := total.Estimator()
	if err != nil {
		t.Fatal(err)
	}
	want := results(t, acc)

	for _, temp := range []string{t.TempDir(), ""} {
		t.Run(map[bool]string{true: "files", false: "elements"}[temp != ""], func(t *testing.T) {
			c := cfg
			c.Read.TempDir = temp
			if temp != "" {
				p, err := (&rankFn{Cfg: c}).rank(ctx, splits[0])
				if err != nil {
					t.Fatal(err)
				}
				if !strings.HasPrefix(p.Path, temp) || len(p.Data) != 0 {
					t.Fatalf("a split's sum at %q with %d bytes in the element", p.Path, len(p.Data))
				}
			}
			out := filepath.Join(t.TempDir(), "rank.state")
			p, s := beam.NewPipelineWithRoot()
			files := beam.Create(s, dir)
			WriteState(s, RankSums(s, files, c), out)
			states := RankStates(s, files, c)
			passert.Equals(s, beam.ParDo(s, rankStateRows, states), int64(1200))
			runOn(t, "", p)
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			a, err := rank.ReadState(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if got := results(t, a); !slices.Equal(got, want) {
				t.Errorf("results of the pipeline's state:\n%v\nof the splits' exact sum:\n%v", got, want)
			}
		})
	}
	if _, err := RankAccumulator(ctx, Merged{Kind: pairSums}); err == nil {
		t.Error("RankAccumulator of a pair's sums: no error")
	}
	if _, err := RankAccumulator(ctx, Merged{Kind: rankSums}); err != errNoRows {
		t.Errorf("RankAccumulator of no sums: %v", err)
	}
}

// results returns the results of a, each printed with every float as Go
// prints it (which reads back bit for bit).
func results(t *testing.T, a *rank.Accumulator) []string {
	t.Helper()
	rs, err := a.Results()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rs {
		out = append(out, fmt.Sprintf("%+v", r))
	}
	return out
}
