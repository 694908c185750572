package synth

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dime-project/dime/internal/randstream"
)

// Screen is a table for screening many candidates against a target, with a
// known answer: a target y and Candidates columns x00, x01, …, of which six
// depend on y with distinct strengths through even functions of it (their
// Pearson correlation with y is 0 in expectation: y is symmetric), the
// others independent of everything. Every column is in its own units.
//
// With z ~ N(0, 1) the target is y = 40 + 12z. Dependent candidate k (k =
// 0 … 5, in ScreenDependent order, strongest first) is
//
//	x = u_k·(√r_k·g_k(z) + √(1 − r_k)·e) + c_k,   e ~ N(0, 1),
//
// with g_k standardized to mean 0 and variance 1 and r_k the share of x's
// variance that y explains: z² (0.70), |z| (0.50), cos 2z (0.35), e^(−z²)
// (0.25), min(z², 4) rounded (a count, 0.17), |z|^½ (0.11). The independent
// candidates cycle through Gaussian, Student-t(3), log-normal and Poisson(3)
// columns. u_k and c_k are units: 10^((k mod 7) − 3) and 100·(k mod 5).
type Screen struct {
	rng        *rand.Rand
	candidates int
	dep        [6]int // column (0-based candidate index) of dependent k
	filled     int64  // rows written by Fill
	late       int    // dependent k that SwitchOn delays, −1
	lateRows   int64  // rows before it depends on y
}

// SwitchOn makes dependent candidate k (0 … 5, ScreenDependent order)
// independent of y in the first rows rows that Fill writes: there it is
// drawn as from another row's z (an independent z′ ~ N(0, 1)), with the
// same distribution; from row rows on it depends on y as usual. A stream
// whose dependence switches on, for monitors.
func (s *Screen) SwitchOn(k int, rows int64) {
	s.late, s.lateRows = k, rows
}

// ScreenShapes names the dependent candidates' shapes, strongest first.
var ScreenShapes = [6]string{"z^2", "|z|", "cos 2z", "exp(-z^2)", "round(min(z^2,4))", "|z|^0.5"}

// screenShare is r_k, the share of variance explained, strongest first.
var screenShare = [6]float64{0.70, 0.50, 0.35, 0.25, 0.17, 0.11}

// NewScreen returns a table of candidates columns (at least 6) drawn from
// seed; the dependent columns' places are drawn from seed too.
func NewScreen(candidates int, seed uint64) (*Screen, error) {
	if candidates < 6 {
		return nil, fmt.Errorf("synth: a screening table needs at least 6 candidates, got %d", candidates)
	}
	s := &Screen{rng: rand.New(rand.NewPCG(seed, randstream.Synth+2)), candidates: candidates, late: -1}
	perm := rand.New(rand.NewPCG(seed, randstream.Synth+3)).Perm(candidates)
	copy(s.dep[:], perm[:6])
	return s, nil
}

// Columns returns the column names: y, then x00, x01, ….
func (s *Screen) Columns() []string {
	out := []string{"y"}
	for j := range s.candidates {
		out = append(out, fmt.Sprintf("x%02d", j))
	}
	return out
}

// Dependent returns the names of the dependent candidates, strongest first.
func (s *Screen) Dependent() []string {
	out := make([]string, 6)
	for k, j := range s.dep {
		out[k] = fmt.Sprintf("x%02d", j)
	}
	return out
}

// screenMoments are the mean and standard deviation of g_k(z), z ~ N(0, 1),
// by numerical integration.
var screenMoments = func() (m [6][2]float64) {
	const h = 1e-3
	for k := range 6 {
		var s0, s1, s2 float64
		for z := -10.0; z <= 10; z += h {
			w := math.Exp(-z*z/2) / math.Sqrt(2*math.Pi) * h
			g := screenShape(k, z)
			s0 += w
			s1 += w * g
			s2 += w * g * g
		}
		mean := s1 / s0
		m[k] = [2]float64{mean, math.Sqrt(s2/s0 - mean*mean)}
	}
	return m
}()

func screenShape(k int, z float64) float64 {
	switch k {
	case 0:
		return z * z
	case 1:
		return math.Abs(z)
	case 2:
		return math.Cos(2 * z)
	case 3:
		return math.Exp(-z * z)
	case 4:
		return math.Round(math.Min(z*z, 4))
	default:
		return math.Sqrt(math.Abs(z))
	}
}

// Fill writes len(table)/(1+candidates) rows, row-major in the order of
// Columns, and returns their number. Successive calls continue the same
// sequence.
func (s *Screen) Fill(table []float64) int {
	w := 1 + s.candidates
	rows := len(table) / w
	r := s.rng
	depOf := make(map[int]int, 6)
	for k, j := range s.dep {
		depOf[j] = k
	}
	for i := range rows {
		row := table[i*w : (i+1)*w]
		z := r.NormFloat64()
		row[0] = 40 + 12*z
		for j := range s.candidates {
			var v float64
			if k, ok := depOf[j]; ok {
				zk := z
				if k == s.late && s.filled+int64(i) < s.lateRows {
					zk = r.NormFloat64()
				}
				g := (screenShape(k, zk) - screenMoments[k][0]) / screenMoments[k][1]
				v = math.Sqrt(screenShare[k])*g + math.Sqrt(1-screenShare[k])*r.NormFloat64()
			} else {
				switch j % 4 {
				case 0:
					v = r.NormFloat64()
				case 1:
					v = studentT3(r)
				case 2:
					v = math.Exp(r.NormFloat64())
				default:
					v = float64(poisson(3, r))
				}
			}
			row[1+j] = v*math.Pow(10, float64(j%7-3)) + 100*float64(j%5)
		}
	}
	s.filled += int64(rows)
	return rows
}
