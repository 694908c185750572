package calib

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dime-project/dime/internal/cli"
	"github.com/dime-project/dime/synth"
)

// ParityCases returns the dependent kinds of the parity study (the rows
// are set per run): sine with 2 columns per view (noise 0.5), y = x² +
// noise with 3 (noise 1), Gaussian with 5 (MI 1 nat) and with 10 (MI 2).
func ParityCases() []Case {
	return []Case{
		{Kind: synth.Sine, Dim: 2, Noise: 0.5},
		{Kind: synth.Square, Dim: 3, Noise: 1},
		{Kind: synth.Gaussian, Dim: 5, MI: 1},
		{Kind: synth.Gaussian, Dim: 10, MI: 2},
	}
}

// Parity is what dime compare reports on one dataset: exact DiME on its
// rows and, for each D, the three RFF estimates of DiME on the same rows
// (the default of dime score, the permutation estimator, the plug-in).
type Parity struct {
	Rows         int64
	Exact        float64
	Features     []int
	Default      []float64
	Permutations []float64
	PlugIn       []float64
	// ExactSeconds and RFFSeconds are the reported elapsed times.
	ExactSeconds float64
	RFFSeconds   []float64
}

// Compare generates the dataset of case c with seed (c.Rows rows) and runs
// dime compare on every row of it (--sample c.Rows) with the numbers of
// frequencies features, exact's normalized score skipped, and the extra
// arguments.
func Compare(c Case, seed uint64, features []int, extra ...string) (Parity, error) {
	var data, stderr bytes.Buffer
	if code := cli.Main(c.GenArgs(seed), nil, &data, &stderr); code != 0 {
		return Parity{}, fmt.Errorf("calib: dime %s: exit %d: %s", strings.Join(c.GenArgs(seed), " "), code, stderr.String())
	}
	ds := make([]string, len(features))
	for i, d := range features {
		ds[i] = strconv.Itoa(d)
	}
	args := c.EstimateArgs("compare", append([]string{"--sample", strconv.Itoa(c.Rows), "--features", strings.Join(ds, ","), "--normalized=false"}, extra...)...)
	var out bytes.Buffer
	stderr.Reset()
	if code := cli.Main(args, &data, &out, &stderr); code != 0 {
		return Parity{}, fmt.Errorf("calib: dime %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
	}
	type rep struct {
		Rows     int64    `json:"rows"`
		Features int      `json:"features"`
		DiME     *float64 `json:"dime"`
		Analytic *float64 `json:"dime_analytic"`
		Elapsed  float64  `json:"elapsed_seconds"`
	}
	var res struct {
		Exact   rep   `json:"exact"`
		RFF     []rep `json:"rff"`
		Default []rep `json:"rff_default"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return Parity{}, fmt.Errorf("calib: dime compare: %v in %q", err, out.String())
	}
	if len(res.RFF) != len(features) || len(res.Default) != len(features) {
		return Parity{}, fmt.Errorf("calib: dime compare: %d rff and %d rff_default reports for %d values of D", len(res.RFF), len(res.Default), len(features))
	}
	val := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	p := Parity{Rows: res.Exact.Rows, Exact: val(res.Exact.DiME), ExactSeconds: res.Exact.Elapsed}
	for i := range features {
		p.Features = append(p.Features, res.RFF[i].Features)
		p.Default = append(p.Default, val(res.Default[i].DiME))
		p.Permutations = append(p.Permutations, val(res.RFF[i].DiME))
		p.PlugIn = append(p.PlugIn, val(res.RFF[i].Analytic))
		p.RFFSeconds = append(p.RFFSeconds, res.RFF[i].Elapsed+res.Default[i].Elapsed)
	}
	return p, nil
}
