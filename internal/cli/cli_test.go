package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// run runs Main in-process and returns its exit status and output.
func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestDemoJSONRisesWithMI(t *testing.T) {
	code, out, errs := run(t, "demo", "--rows", "256", "--stream-rows", "8000", "--features", "64", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(demoMIs) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(demoMIs), out)
	}
	prev, prevRFF := -1.0, -1.0
	for i, l := range lines {
		var v struct {
			TrueMI float64 `json:"true_mi"`
			Exact  struct {
				Estimator string  `json:"estimator"`
				DiME      float64 `json:"dime"`
				Rows      int     `json:"rows"`
			} `json:"exact"`
			RFF struct {
				Estimator string  `json:"estimator"`
				DiME      float64 `json:"dime"`
				Rows      int     `json:"rows"`
				Features  int     `json:"features"`
			} `json:"rff"`
		}
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("line %d: %v: %s", i, err, l)
		}
		if v.TrueMI != demoMIs[i] || v.Exact.Rows != 256 || v.RFF.Rows != 8000 || v.RFF.Features != 64 ||
			v.Exact.Estimator != "exact" || v.RFF.Estimator != "rff" {
			t.Errorf("line %d: %+v", i, v)
		}
		if v.Exact.DiME <= prev || v.RFF.DiME <= prevRFF {
			t.Errorf("DiME exact %v, rff %v at MI %v are not above %v, %v", v.Exact.DiME, v.RFF.DiME, v.TrueMI, prev, prevRFF)
		}
		prev, prevRFF = v.Exact.DiME, v.RFF.DiME
	}
}

func TestUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, ""},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"demo", "--bogus"}, 2, "flag provided but not defined: --bogus"},
		{[]string{"demo", "--rows", "1"}, 2, "--rows 1"},
		{[]string{"demo", "--rows", "x"}, 2, "invalid value"},
		{[]string{"demo", "extra"}, 2, "takes no arguments"},
		{[]string{"demo", "--dim", "0"}, 2, "dimension 0"},
		{[]string{"help"}, 0, ""},
		{[]string{"demo", "-h"}, 0, ""},
	}
	for _, c := range cases {
		code, _, errs := run(t, c.args...)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d (%s)", c.args, code, c.code, errs)
		}
		if c.want != "" {
			if !strings.Contains(errs, c.want) || !strings.HasPrefix(errs, "dime: ") || strings.Count(errs, "\n") != 1 {
				t.Errorf("%v: stderr %q, want one line starting \"dime: \" mentioning %q", c.args, errs, c.want)
			}
		}
	}
}
