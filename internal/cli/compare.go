package cli

import (
	"fmt"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dime-project/dime/exact"
	"github.com/dime-project/dime/rff"
	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/vocab"
)

// compareOutput is the JSON of dime compare: the exact estimate, the RFF
// estimates with the exact one's permutations (one per D), and the RFF
// estimate of dime score's default estimator on the same rows (one per D).
type compareOutput struct {
	Exact   report   `json:"exact"`
	RFF     []report `json:"rff"`
	Default []report `json:"rff_default"`
}

// quantities compared: get reads the RFF estimate of one D (r, with the
// exact permutations, and d, the default estimator), exact the exact
// report (nil: get(x, x)).
var compareQuantities = []struct {
	name  string
	get   func(r, d report) number
	exact func(x report) number
}{
	{name: "entropy x", get: func(r, _ report) number { return r.EntropyX }},
	{name: "entropy y", get: func(r, _ report) number { return r.EntropyY }},
	{name: "entropy joint", get: func(r, _ report) number { return r.EntropyJoint }},
	{name: "mutual information", get: func(r, _ report) number { return r.MI }},
	// The RFF estimators of DiME, each against the exact DiME: dime
	// score's default (analytic, jackknifed), the permutation estimator
	// with the exact one's pairings, and the uncorrected plug-in.
	{name: "DiME default*", get: func(_, d report) number { return d.DiME }, exact: exactDiME},
	{name: "DiME permutations", get: func(r, _ report) number { return r.DiME }},
	{name: "DiME plug-in*", get: func(r, _ report) number {
		if r.DiMEAnalytic == nil {
			return number(math.NaN())
		}
		return *r.DiMEAnalytic
	}, exact: exactDiME},
}

func exactDiME(x report) number { return x.DiME }

// exactValue is the exact value quantity i is compared with.
func exactValue(i int, x report) number {
	if q := compareQuantities[i]; q.exact != nil {
		return q.exact(x)
	}
	return compareQuantities[i].get(x, x)
}

func runCompare(e *env, args []string) error {
	fs := newFlagSet(e, "compare", "INPUT... --x COLS --y COLS [flags]")
	var sf sampleFlags
	sf.register(fs, "rows of the sample both estimators see")
	featureList := fs.String("features", "64,256,1024", "numbers `D,D,...` of random frequencies, one RFF run each (2D features; memory grows as D²)")
	variantName := fs.String("variant", "plain", "RFF frequencies: plain or orthogonal")
	plotPath := fs.String("plot", "", "draw |RFF − exact| against D on log-log axes to this .png or .svg file (- for a PNG on stdout)")
	normalized := fs.Bool("normalized", true, "report exact's dime_normalized (2(P+1) more eigenproblems of the sample's size: more than half of exact's time)")
	inputs, opts, ecfg, err := sf.parse(fs, "compare", args)
	if err != nil {
		return err
	}
	ecfg.SkipNormalized = !*normalized
	Ds, err := parseInts("features", *featureList)
	if err != nil {
		return err
	}
	for _, D := range Ds {
		if D > rff.MaxFeatures {
			return usagef("--features %d: want at most %d", D, rff.MaxFeatures)
		}
		if err := checkRFFMemory(D, ecfg.Permutations, 1); err != nil {
			return err
		}
	}
	variant, err := rff.ParseVariant(*variantName)
	if err != nil {
		return usagef("--variant %q: want plain or orthogonal", *variantName)
	}
	if variant == vocab.Orthogonal && ecfg.Kernel != vocab.Gaussian {
		return usagef("--variant orthogonal needs --kernel gaussian")
	}
	if err := checkPlotPath(*plotPath); err != nil {
		return err
	}
	plotOut, err := newOutput(e, "--plot", *plotPath, sf.force, inputs...)
	if err != nil {
		return err
	}
	start := time.Now()
	s, err := sf.read(e, inputs, opts)
	if err != nil {
		return err
	}
	rcfg, pilot, err := sf.resolve(&s, ecfg, false, false)
	if err != nil {
		return err
	}
	er, err := exact.Estimate(s.x, s.y, rcfg)
	if err != nil {
		return err
	}
	out := compareOutput{Exact: exactReport(er, ecfg, s.xcols, s.ycols, time.Since(start))}
	out.Exact.Input, out.Exact.SampledFrom, out.Exact.SkippedRows = describeSample(s), s.seen, s.skipped
	out.Exact.SetScaling(pilot.Scaling, pilot.Rows, s.pilot.Method.String())
	// RFF on the same rows with the same bandwidths and the same
	// permutations: the differences are the feature approximation alone.
	perms := exact.Permutations(er.Rows, ecfg.Permutations, ecfg.Seed)
	// sampleReport is the report of an RFF estimate on the sample: its
	// input and bandwidth rules are exact's.
	sampleReport := func(r stream.Result, t0 time.Time) report {
		rep := rffReport(r, time.Since(t0))
		rep.Input, rep.SampledFrom = out.Exact.Input, s.seen
		rep.SigmaRuleX, rep.SigmaRuleY = out.Exact.SigmaRuleX, out.Exact.SigmaRuleY
		rep.ShuffleRows = nil
		return rep
	}
	for _, D := range Ds {
		t0 := time.Now()
		cfg := stream.Config{Kernel: ecfg.Kernel, Alpha: ecfg.Alpha, BandwidthX: vocab.Sigma(er.SigmaX), BandwidthY: vocab.Sigma(er.SigmaY),
			Features: D, Variant: variant, Permutations: ecfg.Permutations, Seed: ecfg.Seed, XColumns: s.xcols, YColumns: s.ycols}
		rr, err := stream.EstimateWithPermutations(s.x, s.y, cfg, perms)
		if err != nil {
			return err
		}
		out.RFF = append(out.RFF, sampleReport(rr, t0))

		// dime score's default estimator on the same rows, bandwidths and
		// seed: what score reports, against the same exact DiME.
		t0 = time.Now()
		dcfg := stream.DefaultConfig()
		dcfg.Kernel, dcfg.Alpha, dcfg.BandwidthX, dcfg.BandwidthY = ecfg.Kernel, ecfg.Alpha, vocab.Sigma(er.SigmaX), vocab.Sigma(er.SigmaY)
		dcfg.Features, dcfg.Variant, dcfg.Seed, dcfg.SkipNormalized = D, variant, ecfg.Seed, true
		// The sample is already standardized with the pilot's scaling, the
		// units of exact's σ: standardizing again would rescale it.
		dcfg.Standardize = false
		dcfg.XColumns, dcfg.YColumns = s.xcols, s.ycols
		dr, err := stream.EstimateMatrices(s.x, s.y, dcfg)
		if err != nil {
			return err
		}
		out.Default = append(out.Default, sampleReport(dr, t0))
	}
	if plotOut != nil {
		canvas, err := plotCompare(*plotPath, out)
		if err != nil {
			return err
		}
		if err := plotOut.write(writerTo(canvas)); err != nil {
			return err
		}
	}
	if sf.est.asJSON {
		return writeJSON(e.stdout, out)
	}
	return writeCompareTable(e, out)
}

func writeCompareTable(e *env, out compareOutput) error {
	x := out.Exact
	fmt.Fprintf(e.stdout, "input: %s\nexact: %d rows, %s kernel, alpha %g, sigma x %s, sigma y %s, P = %d\n",
		x.Input, x.Rows, x.Kernel, x.Alpha, describeBandwidthRule(x.SigmaRuleX, x.SigmaX), describeBandwidthRule(x.SigmaRuleY, x.SigmaY), x.Permutations)
	fmt.Fprintf(e.stdout, "rff: the same rows, bandwidths and permutations, %s frequencies; error = rff − exact\n\n", out.RFF[0].Variant)
	tw := newTable(e.stdout, tabwriter.AlignRight)
	head := []string{"quantity", "exact"}
	for _, r := range out.RFF {
		head = append(head, fmt.Sprintf("D=%d", r.Features), "error")
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for i, q := range compareQuantities {
		ex := fmtNumber(q.get(x, x))
		if q.exact != nil {
			ex = "-"
		}
		cells := []string{q.name, ex}
		for j, r := range out.RFF {
			v := q.get(r, out.Default[j])
			cells = append(cells, fmtNumber(v), fmt.Sprintf("%+.6f", float64(v-exactValue(i, x))))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	cells := []string{"seconds", fmt.Sprintf("%.2f", x.ElapsedSeconds)}
	for j, r := range out.RFF {
		cells = append(cells, fmt.Sprintf("%.2f", r.ElapsedSeconds+out.Default[j].ElapsedSeconds), "")
	}
	fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(e.stdout, "\n*: against the exact DiME. DiME default is what dime score reports (the analytic estimator, its bias\n"+
		"removed by the jackknife over %d groups of rows); DiME permutations pairs the rows as exact does; DiME plug-in is\n"+
		"the analytic estimator uncorrected. The RFF estimators converge, as rows grow, to a population quantity\n"+
		"bounded by log(2D), not to exact DiME on these rows (bounded by log(rows)): the gaps measure both.\n", out.Default[0].Groups)
	return err
}

// compareErrors returns |rff − exact| for each quantity and each D.
func compareErrors(out compareOutput) [][]float64 {
	errs := make([][]float64, len(compareQuantities))
	for i, q := range compareQuantities {
		for j, r := range out.RFF {
			errs[i] = append(errs[i], math.Abs(float64(q.get(r, out.Default[j])-exactValue(i, out.Exact))))
		}
	}
	return errs
}
