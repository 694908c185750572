package dimebeam

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"

	"github.com/dime-project/dime/stream"
)

func init() {
	register.DoFn2x2[context.Context, Partial, int, error](&statesInSum{})
	register.DoFn1x1[stream.Result, float64](&roundoffFn{})
	register.Function1x1(shardsInMerged)
}

// roundoffFn maps a result to the largest difference of its entropies, MI,
// analytic DiME and test statistic from Want's, relative to max(|want|, 1):
// the scale of the entropies, of which DiME and MI are differences. The
// p-value, a function of the statistic, is left out: at 1e-111 its relative
// round-off is the statistic's times the statistic.
type roundoffFn struct{ Want []float64 }

func (f *roundoffFn) ProcessElement(r stream.Result) float64 {
	var worst float64
	for i, v := range quantities(r)[:6] {
		worst = math.Max(worst, math.Abs(v-f.Want[i])/math.Max(math.Abs(f.Want[i]), 1))
	}
	return worst
}

// statesInSum returns the number of splits' sums added into a shard's
// sum: the shard ids of its estimator, one per split. It fails if the sum
// is not in a file of Dir (or in the element, when Dir is empty).
type statesInSum struct{ Dir string }

func (f *statesInSum) ProcessElement(ctx context.Context, p Partial) (int, error) {
	if (f.Dir == "") != (p.Path == "") || f.Dir != "" && (len(p.Data) > 0 || !strings.HasPrefix(p.Path, f.Dir)) {
		return 0, fmt.Errorf("a sum at %q with %d bytes in the element, want it in %q", p.Path, len(p.Data), f.Dir)
	}
	e, err := estimatorOf(ctx, Merged{Shards: []Partial{p}})
	if err != nil {
		return 0, err
	}
	ids, complete := e.Shards()
	if !complete {
		return 0, stream.ErrIncompatible
	}
	return len(ids), nil
}

// shardsInMerged returns the number of shards' sums that the last stage
// receives.
func shardsInMerged(m Merged) int { return len(m.Shards) }

// TestShardCount checks the bound of the two-level combine: n splits go to
// at most ⌈√n⌉ shards of at most ⌈√n⌉ splits each.
func TestShardCount(t *testing.T) {
	for n := 1; n <= 5000; n++ {
		s := shardCount(n)
		root := int(math.Ceil(math.Sqrt(float64(n))))
		per := make([]int, s)
		for i, sp := range assignShards(make([]Split, n)) {
			if sp.Shard != i%s {
				t.Fatalf("n = %d: split %d in shard %d", n, i, sp.Shard)
			}
			per[sp.Shard]++
		}
		if s != root || per[0] > root || per[s-1] == 0 {
			t.Fatalf("n = %d: %d shards (want %d), %d splits in the first, %d in the last", n, s, root, per[0], per[s-1])
		}
	}
}

// TestTreeCombine runs 64 splits on Prism and counts what each level of the
// combine receives: 8 shard sums, each of 8 splits' sums (the bound
// ⌈√64⌉), 64 in all, and 8 shards' sums in the last stage. The merged
// result must equal one split's over the same rows to float64 round-off:
// with float64 products, so that only the order of the additions differs,
// the entropies, MI, analytic DiME and test statistic within 1e-14 of
// max(|value|, 1) (about 45 ulps at 1; measured: entropies, MI and
// statistic within 5 ulps, DiME, a difference of entropies, 3.1e-15). It
// runs with the sums in files of a temporary directory, which holds only
// the shards' sums once the result is computed, and with the sums in the
// elements.
func TestTreeCombine(t *testing.T) {
	dir := writeGroups(t, 100, 6400)
	cfg := testConfig()
	cfg.SplitRows = 100
	splits := assignShards(plan(t, dir, cfg))
	if len(splits) != 64 {
		t.Fatalf("%d splits, want 64", len(splits))
	}
	one := cfg
	one.SplitRows = 6400
	if n := len(plan(t, dir, one)); n != 1 {
		t.Fatalf("%d splits, want 1", n)
	}
	oneResult := mustResult(t, oneEstimator(t, dir, cfg.Stream))
	merged := splitEstimators(t, dir, cfg)
	for i, v := range quantities(mustResult(t, merged)) {
		w := quantities(oneResult)[i]
		t.Logf("quantity %d: %.17g vs %.17g: %.2g relative, %.0f ulps", i, v, w, math.Abs(v-w)/math.Abs(w), math.Abs(v-w)/(math.Nextafter(math.Abs(w), math.Inf(1))-math.Abs(w)))
	}

	for _, temp := range []string{t.TempDir(), ""} {
		t.Run(map[bool]string{true: "files", false: "elements"}[temp != ""], func(t *testing.T) {
			cfg.TempDir, one.TempDir = temp, temp
			p, s := beam.NewPipelineWithRoot()
			sums := shardSums(s, beam.ParDo(s, &scoreFn{Cfg: cfg}, beam.CreateList(s, splits)), cfg, pairSums)
			counts := beam.ParDo(s, &statesInSum{Dir: temp}, sums)
			passert.Count(s, sums, "shard sums", 8)
			passert.AllWithinBounds(s, counts, 8, 8)
			passert.Equals(s, stats.Sum(s, counts), 64)
			passert.Equals(s, beam.ParDo(s, shardsInMerged, beam.Combine(s, &collectFn{}, sums)), 8)
			for _, c := range []Config{cfg, one} {
				res := beam.ParDo(s, &roundoffFn{Want: quantities(oneResult)}, ScoreFiles(s, beam.Create(s, dir), c))
				passert.AllWithinBounds(s, res, 0, 1e-14)
			}
			runOn(t, "", p)
			if temp == "" {
				return
			}
			// Left: the 64 splits' and 8 shards' sums of the counting
			// branch (no result reads them), the 8 shards' sums of the
			// pipeline of 64 splits (its result removed the splits'), and
			// the sum of the pipeline of one split.
			left, err := filepath.Glob(filepath.Join(temp, "*.sum"))
			if err != nil {
				t.Fatal(err)
			}
			if want := 64 + 8 + 8 + 1; len(left) != want {
				t.Errorf("%d files left in the temporary directory, want %d", len(left), want)
			}
			if err := RemoveTemp(context.Background(), temp); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(temp); !os.IsNotExist(err) {
				t.Errorf("the temporary directory is still there: %v", err)
			}
		})
	}
}

// TestPartialChecked checks that a sum is read back only as it was
// written: a file whose size or checksum is not what its Partial says, or
// that is gone, fails the stage with its name, and so do changed bytes in
// an element.
func TestPartialChecked(t *testing.T) {
	dir := writeDataset(t, 700)
	cfg := testConfig()
	ctx := context.Background()
	splits := plan(t, dir, cfg)
	for _, temp := range []string{t.TempDir(), ""} {
		cfg.TempDir = temp
		p, err := (&scoreFn{Cfg: cfg}).score(ctx, splits[0])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := estimatorOf(ctx, Merged{Shards: []Partial{p}}); err != nil {
			t.Fatal(err)
		}
		bad := p
		bad.CRC ^= 1
		if _, err := estimatorOf(ctx, Merged{Shards: []Partial{bad}}); err == nil || !strings.Contains(err.Error(), "changed since it was written") {
			t.Errorf("a changed checksum: %v", err)
		}
		bad = p
		bad.Size++
		if _, err := estimatorOf(ctx, Merged{Shards: []Partial{bad}}); err == nil || !strings.Contains(err.Error(), "changed since it was written") {
			t.Errorf("a changed size: %v", err)
		}
		if temp == "" {
			continue
		}
		if !strings.HasPrefix(p.Path, temp) || len(p.Data) != 0 {
			t.Fatalf("the sum is at %q with %d bytes in the element", p.Path, len(p.Data))
		}
		os.Remove(p.Path)
		if _, err := estimatorOf(ctx, Merged{Shards: []Partial{p}}); err == nil || !strings.Contains(err.Error(), p.Path) {
			t.Errorf("a missing file: %v", err)
		}
	}
}
