package calib

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/dime-project/dime/internal/cli"
)

// SerialKind is a pair of independent stationary series (every column of
// X and of Y its own series, standard normal at every row): the null of the
// serial-rows studies, written for them (package monitor's and stream's
// tests have their own generators).
type SerialKind struct {
	Name string
	// Phi is the AR(1) coefficient (0 with MA).
	Phi float64
	// MA, if not empty, are the weights of a moving average of
	// len(MA) innovations (normalized to unit variance).
	MA []float64
}

// serialStream is the PCG stream of the series ("dimeserl").
const serialStream = 0x64696d657365726c

// SerialKinds returns the kinds of the serial-rows studies: iid rows,
// AR(1) with φ = 0.5 and 0.9, and a moving average of 5 innovations with
// weights 1, 0.8, 0.6, 0.4, 0.2 (lag-1 autocorrelation 1.6/2.2 = 0.73).
func SerialKinds() []SerialKind {
	return []SerialKind{
		{Name: "iid"},
		{Name: "AR(1) φ=0.5", Phi: 0.5},
		{Name: "AR(1) φ=0.9", Phi: 0.9},
		{Name: "MA(4)", MA: []float64{1, 0.8, 0.6, 0.4, 0.2}},
	}
}

// Table returns rows rows of the kind from seed, row-major, d columns of X
// then d of Y, each column an independent series started from its
// stationary distribution.
func (k SerialKind) Table(seed uint64, rows, d int) []float64 {
	r := rand.New(rand.NewPCG(seed, serialStream))
	w := 2 * d
	table := make([]float64, rows*w)
	var norm float64
	for _, a := range k.MA {
		norm += a * a
	}
	norm = math.Sqrt(norm)
	innov := make([]float64, len(k.MA))
	for c := range w {
		x := r.NormFloat64()
		for i := range innov {
			innov[i] = r.NormFloat64()
		}
		for t := range rows {
			switch {
			case len(k.MA) > 0:
				copy(innov[1:], innov[:len(innov)-1])
				innov[0] = r.NormFloat64()
				var s float64
				for i, a := range k.MA {
					s += a * innov[i]
				}
				x = s / norm
			case k.Phi != 0:
				x = k.Phi*x + math.Sqrt(1-k.Phi*k.Phi)*r.NormFloat64()
			default:
				x = r.NormFloat64()
			}
			table[t*w+c] = x
		}
	}
	return table
}

// Score runs dime score on rows rows of the kind (d columns per view) with
// the extra arguments (e.g. --rows serial).
func (k SerialKind) Score(seed uint64, rows, d int, extra ...string) (Outcome, error) {
	data, err := ipcTable(k.Table(seed, rows, d), rows, d)
	if err != nil {
		return Outcome{}, err
	}
	return Case{Dim: d, Rows: rows}.estimate("score", data, extra...)
}

// Monitor runs dime monitor with tumbling windows of windowRows rows over
// windows·windowRows rows of one series of the kind (d columns per view),
// at monitor's defaults plus the extra arguments, and returns each
// window's outcome (DiME, dime_stderr, p_value, p_value_iid).
func (k SerialKind) Monitor(seed uint64, windows, windowRows, d int, extra ...string) ([]Outcome, error) {
	rows := windows * windowRows
	data, err := ipcTable(k.Table(seed, rows, d), rows, d)
	if err != nil {
		return nil, err
	}
	return monitorWindows(Case{Dim: d, Rows: rows}, data, windowRows, extra...)
}

// MonitorCase runs dime monitor with tumbling windows of windowRows rows
// over the dataset of case c with seed (c.Rows rows), as Monitor does.
func MonitorCase(c Case, seed uint64, windowRows int, extra ...string) ([]Outcome, error) {
	var data, stderr bytes.Buffer
	if code := cli.Main(c.GenArgs(seed), nil, &data, &stderr); code != 0 {
		return nil, fmt.Errorf("calib: dime %s: exit %d: %s", strings.Join(c.GenArgs(seed), " "), code, stderr.String())
	}
	return monitorWindows(c, &data, windowRows, extra...)
}

// monitorWindows runs dime monitor on the IPC stream data (columns of case
// c) and reads back one outcome per window line.
func monitorWindows(c Case, data io.Reader, windowRows int, extra ...string) ([]Outcome, error) {
	args := append(c.EstimateArgs("monitor", "--window-rows", strconv.Itoa(windowRows)), extra...)
	var out, stderr bytes.Buffer
	if code := cli.Main(args, data, &out, &stderr); code != 0 {
		return nil, fmt.Errorf("calib: dime %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
	}
	var outs []Outcome
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r report
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("calib: dime monitor: %v in %q", err, sc.Text())
		}
		outs = append(outs, r.outcome())
	}
	return outs, sc.Err()
}
