package cli

import (
	"fmt"
	"math"
	"text/tabwriter"
	"time"

	"github.com/dime-project/dime/exact"
	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/synth"
)

// demoMIs are the true mutual informations of the paper's toy (Section 4).
var demoMIs = []float64{0, 2, 4, 6, 8, 10}

// demoLine is one JSON line of the demo.
type demoLine struct {
	TrueMI float64 `json:"true_mi"`
	Exact  report  `json:"exact"`
	RFF    report  `json:"rff"`
}

func runDemo(e *env, args []string) error {
	fs := newFlagSet(e, "demo", "[flags]")
	rows := fs.Int("rows", 512, "rows of the exact estimate (cost grows as rows³)")
	streamRows := fs.Int("stream-rows", 20000, "rows streamed through the RFF estimator")
	features := fs.Int("features", 128, "RFF frequencies D")
	dim := fs.Int("dim", 20, "columns per view")
	seed := fs.Uint64("seed", 1, "random seed for data, frequencies and permutations")
	asJSON := fs.Bool("json", false, "print one JSON object per MI level instead of a table")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return usagef("demo takes no arguments, got %q", pos[0])
	case *rows < 2 || *rows > 8192:
		return usagef("--rows %d: want 2 to 8192 (exact cost grows as rows³)", *rows)
	case *streamRows < 2:
		return usagef("--stream-rows %d: want at least 2", *streamRows)
	case *features < 1 || *features > 4096:
		return usagef("--features %d: want 1 to 4096", *features)
	}
	ecfg := exact.DefaultConfig()
	ecfg.Seed = *seed
	scfg := stream.DefaultConfig()
	scfg.Features, scfg.Seed = *features, *seed
	tw := newTable(e.stdout, tabwriter.AlignRight)
	if !*asJSON {
		fmt.Fprintf(e.stdout, "The paper's toy: X ~ N(0, I_%d), Y = rho X + sqrt(1 - rho^2) E, alpha %g, sigma sqrt(d/2); exact DiME with P = %d permutations.\n",
			*dim, ecfg.Alpha, ecfg.Permutations)
		fmt.Fprintf(e.stdout, "exact: Gram matrices of %d rows. rff: %d rows streamed, D = %d frequencies, the analytic estimate\n", *rows, *streamRows, *features)
		fmt.Fprintf(e.stdout, "with its bias removed by the jackknife over %d groups of rows (the plug-in is rff analytic).\n", stream.DefaultGroups)
		fmt.Fprintln(tw, "true MI (nats)\texact DiME\t± se\trff DiME\t± se\trff analytic\trff normalized\tseconds\t")
	}
	lo, hi := math.Inf(1), math.Inf(-1) // rff DiME / exact DiME where MI > 0
	for _, m := range demoMIs {
		spec := synth.Spec{Kind: synth.Gaussian, Dim: *dim, MI: m, Seed: *seed}
		start := time.Now()
		x, y, err := synth.Generate(spec, *rows)
		if err != nil {
			return err
		}
		er, err := exact.Estimate(x, y, ecfg)
		if err != nil {
			return err
		}
		exactElapsed := time.Since(start)
		start = time.Now()
		rr, err := streamSynthetic(spec, *streamRows, scfg)
		if err != nil {
			return err
		}
		rffElapsed := time.Since(start)
		if *asJSON {
			if err := writeJSON(e.stdout, demoLine{TrueMI: m, Exact: exactReport(er, ecfg, nil, nil, exactElapsed), RFF: rffReport(rr, rffElapsed)}); err != nil {
				return err
			}
			continue
		}
		if m > 0 && er.DiME > 0 {
			lo, hi = math.Min(lo, rr.DiME/er.DiME), math.Max(hi, rr.DiME/er.DiME)
		}
		fmt.Fprintf(tw, "%g\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.3f\t%.1f\t\n", m, er.DiME, er.DiMEStdErr, rr.DiME, rr.DiMEStdErr, rr.DiMEAnalytic,
			rr.DiMENormalized, (exactElapsed + rffElapsed).Seconds())
	}
	if *asJSON {
		return nil
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, "Both rise with the true MI. They are on different scales: exact DiME is a Gram matrix's, bounded")
	fmt.Fprintln(e.stdout, "by log(rows), rff DiME a covariance operator's of 2D features, bounded by log(2D); neither is")
	fmt.Fprintln(e.stdout, "the Shannon MI. The normalized score, DiME / sqrt(DiME(X;X')·DiME(Y;Y')), puts each on the scale")
	fmt.Fprintln(e.stdout, "of its own estimator: 0 for independent views, 1 for Y = X. rff analytic, the plug-in,")
	fmt.Fprintln(e.stdout, "is biased upward by about D/rows; rff DiME has that bias removed.")
	if hi >= lo {
		fmt.Fprintf(e.stdout, "Here rff DiME is %.0f%% to %.0f%% of exact DiME where the MI is above 0: they are not the same number\n", 100*lo, 100*hi)
		fmt.Fprintln(e.stdout, "(dime compare puts the RFF estimators beside exact DiME on the same rows).")
	}
	return nil
}

// streamSynthetic streams n rows of spec through an RFF estimator.
func streamSynthetic(spec synth.Spec, n int, cfg stream.Config) (stream.Result, error) {
	const block = 4096
	est, err := stream.New(spec.Dim, spec.Dim, cfg)
	if err != nil {
		return stream.Result{}, err
	}
	src, err := synth.NewStream(spec)
	if err != nil {
		return stream.Result{}, err
	}
	x, y := make([]float64, block*spec.Dim), make([]float64, block*spec.Dim)
	for done := 0; done < n; {
		b := min(block, n-done)
		src.Fill(x[:b*spec.Dim], y[:b*spec.Dim])
		if err := est.Add(x[:b*spec.Dim], y[:b*spec.Dim], b); err != nil {
			return stream.Result{}, err
		}
		done += b
	}
	return est.Result()
}
