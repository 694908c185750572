package stream

import (
	"math"
	"testing"

	"github.com/dime-project/dime/synth"
)

// TestDiMEOnlySameBits checks that DiMEOnly returns Result's DiME to the
// bit under the estimators and jackknifes it serves (it computes a subset of
// the same entropies by the same code), and refuses what Result refuses.
func TestDiMEOnlySameBits(t *testing.T) {
	const d, D = 2, 16
	base := testConfig(d, D, 0, 3)
	cases := map[string]func(c *Config){
		"third-order serial": func(c *Config) { c.Jackknife, c.RowModel = ThirdOrderJackknife, SerialRows },
		"generalized":        func(c *Config) {},
		"group":              func(c *Config) { c.Jackknife = GroupJackknife },
		"second-order 6":     func(c *Config) { c.Jackknife, c.Groups = SecondOrderJackknife, 6 },
		"skip normalized":    func(c *Config) { c.Jackknife, c.SkipNormalized = ThirdOrderJackknife, true },
		"one group":          func(c *Config) { c.Groups = 1 },
		"permutations":       func(c *Config) { c.Permutations = 3 },
		"half-life":          func(c *Config) { c.HalfLife = 700 },
	}
	for name, set := range cases {
		cfg := base
		set(&cfg)
		e, err := New(d, d, cfg)
		if err != nil {
			t.Fatal(name, err)
		}
		if _, err := e.DiMEOnly(); err == nil {
			t.Errorf("%s: DiMEOnly of no rows: no error", name)
		}
		feed(t, e, synth.Spec{Kind: synth.Sine, Dim: d, Noise: 0.5, Seed: 5}, 3000, 700)
		got, err := e.DiMEOnly()
		if err != nil {
			t.Fatal(name, err)
		}
		r, err := e.Result()
		if err != nil {
			t.Fatal(name, err)
		}
		if math.Float64bits(got) != math.Float64bits(r.DiME) {
			t.Errorf("%s: DiMEOnly %.17g, Result().DiME %.17g", name, got, r.DiME)
		}
	}
}
