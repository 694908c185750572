package cli

import "github.com/dime-project/dime/monitor"

// baselineChange is the comparison of a DiME with a baseline's, as score
// --baseline, monitor --baseline and monitor --rank-y print it; the
// outputs embed it by pointer, so that it is absent without a baseline.
type baselineChange struct {
	BaselineDiME number `json:"baseline_dime"`
	// BaselineRows is score's alone: a monitor's lines leave it out (the
	// same on every line).
	BaselineRows *number `json:"baseline_rows,omitempty"`
	Change       number  `json:"dime_change"`
	ChangeStdErr number  `json:"dime_change_stderr"`
	ChangeDF     int     `json:"change_df"`
	ChangePValue number  `json:"change_p_value"`
}

// changeOf returns the comparison c without the baseline's rows (nil
// without a comparison).
func changeOf(c *monitor.Change) *baselineChange {
	if c == nil {
		return nil
	}
	return &baselineChange{BaselineDiME: number(c.BaselineDiME), Change: number(c.Difference), ChangeStdErr: number(c.StdErr),
		ChangeDF: c.DF, ChangePValue: number(c.PValue)}
}
