package cli

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/dime-project/dime/exact"
	rpt "github.com/dime-project/dime/report"
	"github.com/dime-project/dime/vocab"
)

// sweepPoint is one point of dime sweep's JSON.
type sweepPoint struct {
	Scale      float64 `json:"scale"`
	SigmaX     float64 `json:"sigma_x"`
	SigmaY     float64 `json:"sigma_y"`
	DiME       number  `json:"dime"`
	DiMEStdErr number  `json:"dime_stderr"`
	MI         number  `json:"mutual_information"`
	EntropyXY  number  `json:"entropy_joint"`
	Auto       bool    `json:"auto"`
}

// sweepOutput is the JSON of dime sweep.
type sweepOutput struct {
	Input        string       `json:"input"`
	Rows         int          `json:"rows"`
	Kernel       string       `json:"kernel"`
	Alpha        float64      `json:"alpha"`
	Permutations int          `json:"permutations"`
	Seed         uint64       `json:"seed"`
	Points       []sweepPoint `json:"points"`
	AutoSigmaX   float64      `json:"auto_sigma_x"`
	AutoSigmaY   float64      `json:"auto_sigma_y"`
	// SampleBest is the index of the point of largest DiME on the sample,
	// which can differ from the auto rule's (chosen on the pilot rows).
	SampleBest     int          `json:"sample_best"`
	PilotRows      int          `json:"pilot_rows"`
	Pilot          string       `json:"pilot"` // "sample" (Parquet) or "prefix"
	Scaling        *rpt.Scaling `json:"scaling,omitempty"`
	Warnings       []string     `json:"warnings,omitempty"`
	ElapsedSeconds float64      `json:"elapsed_seconds"`
}

func runSweep(e *env, args []string) error {
	fs := newFlagSet(e, "sweep", "INPUT... --x COLS --y COLS [flags]")
	var sf sampleFlags
	sf.register(fs, fmt.Sprintf("rows of the sample (each of the %d points costs P+3 eigenproblems of this size, growing as n³)", len(exact.AutoScales())))
	plotPath := fs.String("plot", "", "draw DiME and MI against sigma to this .png or .svg file (- for a PNG on stdout)")
	inputs, opts, cfg, err := sf.parse(fs, "sweep", args)
	if err != nil {
		return err
	}
	if err := checkPlotPath(*plotPath); err != nil {
		return err
	}
	plotOut, err := newOutput(e, "--plot", *plotPath, sf.force, inputs...)
	if err != nil {
		return err
	}
	// Sweep every view whose rule is auto, both when none is (the default
	// --sigma fixed): sigma = scale × sqrt(d/2) over the auto rule's grid.
	start := time.Now()
	s, err := sf.read(e, inputs, opts)
	if err != nil {
		return err
	}
	// The views swept are those whose rule is auto, both when none is;
	// their auto bandwidth is chosen as dime score --sigma auto chooses it,
	// on the pilot rows (as dime score reads them: readPilot), and marked in the
	// table of the sample's sweep.
	sweepX := cfg.SigmaX.Rule == vocab.AutoRule || cfg.SigmaY.Rule != vocab.AutoRule
	sweepY := cfg.SigmaY.Rule == vocab.AutoRule || cfg.SigmaX.Rule != vocab.AutoRule
	rcfg, pilot, err := sf.resolve(&s, cfg, sweepX, sweepY)
	if err != nil {
		return err
	}
	if sweepX && !sweepY {
		rcfg.SigmaX = vocab.Auto()
	} else if sweepY && !sweepX {
		rcfg.SigmaY = vocab.Auto()
	}
	points, err := exact.Sweep(s.x, s.y, rcfg, exact.AutoScales())
	if err != nil {
		return err
	}
	best := -1
	for i, p := range points {
		if (!sweepX || p.SigmaX == pilot.SigmaX) && (!sweepY || p.SigmaY == pilot.SigmaY) {
			best = i
		}
	}
	rows, _ := s.x.Dims()
	out := sweepOutput{Input: describeSample(s), Rows: rows, Kernel: cfg.Kernel.String(), Alpha: cfg.Alpha,
		Permutations: cfg.Permutations, Seed: cfg.Seed, AutoSigmaX: pilot.SigmaX, AutoSigmaY: pilot.SigmaY,
		SampleBest: exact.BestDiME(points), PilotRows: pilot.Rows, Pilot: s.pilot.Method.String()}
	if !pilot.Scaling.Empty() {
		out.Scaling = &rpt.Scaling{CenterX: pilot.Scaling.CenterX, ScaleX: pilot.Scaling.ScaleX, CenterY: pilot.Scaling.CenterY, ScaleY: pilot.Scaling.ScaleY, PilotRows: pilot.Rows, Pilot: out.Pilot}
	}
	scales := exact.AutoScales()
	lo, hi := scales[0], scales[len(scales)-1]
	if best >= 0 && (points[best].Scale == lo || points[best].Scale == hi) {
		w := fmt.Sprintf("the auto bandwidth is at the %s end of the grid (scale %.4g): the data's scale may lie beyond it; give --sigma explicitly",
			map[bool]string{true: "low", false: "high"}[points[best].Scale == lo], points[best].Scale)
		out.Warnings = append(out.Warnings, w)
		fmt.Fprintf(e.stderr, "dime: warning: %s\n", w)
	}
	for i, p := range points {
		r := p.Result
		out.Points = append(out.Points, sweepPoint{Scale: p.Scale, SigmaX: p.SigmaX, SigmaY: p.SigmaY,
			DiME: number(r.DiME), DiMEStdErr: number(r.DiMEStdErr), MI: number(r.MutualInformation),
			EntropyXY: number(r.EntropyJoint), Auto: i == best})
	}
	out.ElapsedSeconds = time.Since(start).Seconds()
	if plotOut != nil {
		canvas, err := plotSweep(*plotPath, out)
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
	fmt.Fprintf(e.stdout, "input: %s\n%s kernel, alpha %g, P = %d; sigma = scale × sqrt(d/2) per view\n\n", out.Input, out.Kernel, out.Alpha, out.Permutations)
	tw := newTable(e.stdout, tabwriter.AlignRight)
	fmt.Fprintln(tw, "scale\tsigma x\tsigma y\tDiME\t± se\tMI_alpha\t\t")
	for _, p := range out.Points {
		mark := ""
		if p.Auto {
			mark = "<- auto: largest DiME on " + describePilotRows(out.Pilot, out.PilotRows)
		}
		fmt.Fprintf(tw, "%.4g\t%.4g\t%.4g\t%s\t%s\t%s\t%s\t\n", p.Scale, p.SigmaX, p.SigmaY, fmtNumber(p.DiME), fmtNumber(p.DiMEStdErr), fmtNumber(p.MI), mark)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, "\nMI_alpha grows toward log(rows) as sigma shrinks; DiME peaks in between: --sigma auto takes its peak.")
	return nil
}
