package cli

import (
	"fmt"

	"github.com/dime-project/dime/synth"
)

// defaultScreenCandidates is gen --kind screen's number of candidates
// without --dim.
const defaultScreenCandidates = 40

// genScreen writes rows of synth.Screen: a target y and candidates x00, …,
// six of them dependent on y (named on stderr, strongest first).
func genScreen(e *env, out, format string, rows int64, seed uint64, force bool, progressMode string, candidates int) error {
	if err := checkGenOut(out, rows); err != nil {
		return err
	}
	if candidates < 6 || candidates > 10000 {
		return usagef("--dim %d: --kind screen wants 6 to 10000 candidates", candidates)
	}
	src, err := synth.NewScreen(candidates, seed)
	if err != nil {
		return asUsage(err)
	}
	if err := genTable(e, out, format, rows, force, progressMode, src.Columns(), func(t []float64) { src.Fill(t) }); err != nil {
		return err
	}
	if out != "-" {
		fmt.Fprintf(e.stderr, "wrote %d rows of a screening table (y and %d candidates) to %s; dependent on y, strongest first: %v\n", rows, candidates, out, src.Dependent())
	}
	return nil
}
