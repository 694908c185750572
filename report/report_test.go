package report

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dime-project/dime/stream"
)

// TestRFFJSON checks the field names of an RFF report and that NaN (the
// standard error of one permutation) is written as null.
func TestRFFJSON(t *testing.T) {
	r := stream.Result{Config: stream.Config{Features: 8, Permutations: 1, Alpha: 1.01}, Rows: 10, DiMEStdErr: math.NaN(), PValue: math.NaN(), EntropyX: 1.5}
	b, err := json.Marshal(RFF(r, 2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"estimator", "rows", "skipped_rows", "x_columns", "y_columns", "kernel", "alpha", "sigma_x", "sigma_y",
		"features", "permutations", "seed", "entropy_x", "entropy_y", "entropy_joint", "mutual_information", "dime", "dime_stderr",
		"dime_analytic", "p_value", "elapsed_seconds"} {
		if _, ok := m[k]; !ok {
			t.Errorf("no %q in %s", k, b)
		}
	}
	if m["dime_stderr"] != nil || m["entropy_x"] != 1.5 || m["estimator"] != "rff" || m["elapsed_seconds"] != 2.0 {
		t.Errorf("values: %s", b)
	}
	if strings.Contains(string(b), "NaN") {
		t.Errorf("NaN in JSON: %s", b)
	}
}
