package cliflag

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/dime-project/dime/exact"
	"github.com/dime-project/dime/rank"
	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/vocab"
)

// DefaultRankFeatures is the screening default of D of dime rank, dime
// matrix and dimebeam rank: the largest D whose cost at 10⁶ rows and 40
// candidates stays within 3× one dime score (BENCHMARKS.md), which ranks
// as larger D do (CALIBRATION.md, "Screening defaults").
const DefaultRankFeatures = 32

// Groups is the repeatable --group name=a,b,c of the commands that score
// many views (dime rank, dime matrix, dimebeam rank): each a named group of
// columns scored as one view.
type Groups []rank.Group

func (g *Groups) String() string { return "" }

// Set implements flag.Value.
func (g *Groups) Set(s string) error {
	name, list, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return fmt.Errorf("want name=col,col,... (a name for the group, then its columns)")
	}
	var sel []string
	for _, c := range strings.Split(list, ",") {
		if c = strings.TrimSpace(c); c == "" {
			return fmt.Errorf("group %q has an empty column name", name)
		}
		sel = append(sel, c)
	}
	for _, o := range *g {
		if o.Name == name {
			return fmt.Errorf("group %q given twice", name)
		}
	}
	*g = append(*g, rank.Group{Name: name, Columns: sel})
	return nil
}

// Rank holds the flags of a ranking of candidates against a target (dime
// rank and dimebeam rank) beside the estimator's: --group, --top, --csv.
type Rank struct {
	Groups Groups
	Top    int
	CSV    bool
}

// RegisterMulti adds --group to the flags of a command that scores many
// pairs, and makes features (the screening default, BENCHMARKS.md) the
// default of --features, which RegisterRFF must have added.
func (e *Estimator) RegisterMulti(fs *flag.FlagSet, groups *Groups, features int) {
	e.Features = features
	if fl := fs.Lookup("features"); fl != nil {
		fl.DefValue = strconv.Itoa(features)
	}
	fs.Var(groups, "group", groupUsage)
}

// groupUsage is the usage of --group.
const groupUsage = "a named group of columns scored as one view, name=a,b,c (names, globs or slices; repeat for more groups)"

// MonitorRank holds the flags of a monitor of many pairs (dime monitor
// --rank-y): the target, --group and --top.
type MonitorRank struct {
	Target string
	Groups Groups
	Top    int
}

// Register adds --rank-y, --group and --top (default top).
func (r *MonitorRank) Register(fs *flag.FlagSet, top int) {
	fs.StringVar(&r.Target, "rank-y", "", "monitor many pairs: rank every --x column (each one candidate) and --group against this target in every window, and report the top --top and the candidates that changed from the baseline")
	fs.Var(&r.Groups, "group", "with --rank-y: "+groupUsage)
	fs.IntVar(&r.Top, "top", top, "with --rank-y: the candidates reported per window by rank, and labelled in the metrics with at most as many changed ones")
}

// Selectors checks the flags of a monitor of many pairs and returns the
// target's selectors (--rank-y) and the candidates' (--x, optional with
// --group).
func (r *MonitorRank) Selectors(e *Estimator) (target, candidates []string, err error) {
	if r.Top < 1 {
		return nil, nil, vocab.Errorf("--top %d: want 1 or more", r.Top)
	}
	if strings.TrimSpace(e.Y) != "" {
		return nil, nil, vocab.Errorf("--rank-y with --y: --rank-y is the target of every pair; drop --y")
	}
	if target, err = Columns("rank-y", r.Target); err != nil {
		return nil, nil, err
	}
	if candidates, err = e.Multi("x", e.X, r.Groups,
		"--rank-y needs candidates: --x 'pattern,...' (each column one candidate) or --group name=a,b,c"); err != nil {
		return nil, nil, err
	}
	return target, candidates, nil
}

// Register adds --group (RegisterMulti), --top and --csv.
func (r *Rank) Register(fs *flag.FlagSet, e *Estimator, features int) {
	e.RegisterMulti(fs, &r.Groups, features)
	fs.IntVar(&r.Top, "top", 0, "print only the first K candidates (0: all)")
	fs.BoolVar(&r.CSV, "csv", false, "print the table as CSV (one line per candidate)")
}

// Selectors checks the flags of a ranking and returns the target's
// selectors (--y) and the candidates' (--x, optional with --group).
func (r *Rank) Selectors(e *Estimator) (target, candidates []string, err error) {
	if r.Top < 0 {
		return nil, nil, vocab.Errorf("--top %d: want 0 (all) or more", r.Top)
	}
	if target, err = Columns("y", e.Y); err != nil {
		return nil, nil, vocab.Errorf("rank needs --y: the target's columns")
	}
	if candidates, err = e.Multi("x", e.X, r.Groups,
		"rank needs candidates: --x 'pattern,...' (each column one candidate) or --group name=a,b,c"); err != nil {
		return nil, nil, err
	}
	return target, candidates, nil
}

// Multi parses the selectors of a list flag (optional when groups name
// views); need is the usage error when neither names a view.
func (e *Estimator) Multi(flag, list string, groups Groups, need string) ([]string, error) {
	var sel []string
	if strings.TrimSpace(list) != "" {
		var err error
		if sel, err = Columns(flag, list); err != nil {
			return nil, err
		}
	}
	if len(sel) == 0 && len(groups) == 0 {
		return nil, vocab.Errorf("%s", need)
	}
	return sel, nil
}

// MultiConfig returns the estimator settings of a command that scores many
// pairs (StreamConfig's, checked for what they add): the analytic
// estimator, one --sigma rule for every view, a rule that chooses one
// view's bandwidth alone (not auto), and the pilot rows.
func (e *Estimator) MultiConfig() (stream.Config, error) {
	cfg, err := e.StreamConfig(nil, nil)
	if err != nil {
		return cfg, err
	}
	switch {
	case cfg.Permutations != 0:
		return cfg, vocab.Errorf("--permutations %d: rank and matrix use the analytic estimator (0)", cfg.Permutations)
	case e.Given("sigma-x") || e.Given("sigma-y"):
		return cfg, vocab.Errorf("--sigma-x and --sigma-y: one --sigma rule applies to every view")
	case cfg.BandwidthX.Rule == exact.AutoRule:
		return cfg, vocab.Errorf("--sigma auto chooses one pair's bandwidths together: use fixed, median or a number")
	case e.PilotRows < 2 || e.PilotRows > stream.MaxPilotRows:
		return cfg, vocab.Errorf("--pilot-rows %d: want 2 to %d", e.PilotRows, stream.MaxPilotRows)
	}
	cfg.PilotRows = e.PilotRows
	return cfg, nil
}
