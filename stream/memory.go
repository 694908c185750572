package stream

import (
	"github.com/dime-project/dime/covariance"
)

// AccumulatorBytes returns the bytes of the accumulators of one Estimator
// with this configuration: per group X, Y, joint, the copies and self
// joints of the normalized score, and the P permuted, each the packed
// triangle of a (2D)² float64 matrix (covariance.StoredSize).
func (c Config) AccumulatorBytes() uint64 {
	groups := c.Groups
	if groups <= 0 {
		groups = DefaultGroups
	}
	return uint64(7*groups+c.Permutations) * uint64(covariance.StoredSize(c.Features))
}

// MemoryBytes estimates the bytes an Estimator with this configuration
// holds at its peak when procs goroutines add rows and compute its Result,
// for views of dimX and dimY columns (0 and 0 before they are known: the
// frequencies and the rows held are then left out). It counts the
// accumulators (AccumulatorBytes); what a Result adds (one (2D)² float64
// matrix per goroutine computing entropies and one for the test's null
// covariance: the sums and products are written straight into them,
// TestResultAllocations); the workers' feature buffers (four blocks of 256
// rows × 2D float64 each); the frequencies (8·D·(dimX+dimY) bytes); and the
// rows that the shuffle buffer and, for a median or auto bandwidth, the
// pilot sample hold (twice, for the growth of their slices). The reader's
// buffers and the Go runtime are the caller's to add.
func (c Config) MemoryBytes(procs, dimX, dimY int) uint64 {
	p := uint64(2 * c.Features)
	n := uint64(max(procs, 1))
	need := c.AccumulatorBytes() + (n+1)*p*p*8 + n*4*256*p*8
	if d := uint64(dimX + dimY); d > 0 {
		rows := uint64(c.ShuffleRows)
		if c.BandwidthX.NeedsData() || c.BandwidthY.NeedsData() {
			rows += uint64(c.PilotRows)
		}
		need += 8*uint64(c.Features)*d + 2*8*d*rows
	}
	return need
}
