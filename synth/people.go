package synth

import (
	"math"
	"math/rand/v2"

	"github.com/dime-project/dime/internal/randstream"
)

// PeopleColumns are the columns of the People table, in order.
var PeopleColumns = []string{"age", "income", "spend", "visits", "height"}

// People draws rows of a small table in real units, for examples: age in
// years, U(18, 80); yearly income in dollars, 50,000·e^(0.8Z); yearly spend
// in dollars, 1,200 + 900·((age − 49)/18)² + 600·|ln(income/50,000)| plus
// noise of standard deviation 150 (a nonlinear function of both: its
// Pearson correlation with age is near 0); visits, a count drawn from
// Poisson(2 + (age − 18)/20); height in meters, N(1.72, 0.09²), independent
// of everything else.
type People struct {
	rng *rand.Rand
}

// NewPeople returns a People table drawn from seed.
func NewPeople(seed uint64) *People {
	return &People{rng: rand.New(rand.NewPCG(seed, randstream.Synth+1))}
}

// Fill writes len(table)/5 rows, row-major in the order of PeopleColumns,
// and returns their number. Successive calls continue the same sequence.
func (p *People) Fill(table []float64) int {
	w := len(PeopleColumns)
	rows := len(table) / w
	r := p.rng
	for i := range rows {
		age := 18 + 62*r.Float64()
		income := 50000 * math.Exp(0.8*r.NormFloat64())
		a := (age - 49) / 18
		spend := 1200 + 900*a*a + 600*math.Abs(math.Log(income/50000)) + 150*r.NormFloat64()
		visits := float64(poisson(2+(age-18)/20, r))
		height := 1.72 + 0.09*r.NormFloat64()
		copy(table[i*w:(i+1)*w], []float64{math.Round(age*10) / 10, math.Round(income), math.Round(spend*100) / 100, visits, math.Round(height*1000) / 1000})
	}
	return rows
}
