package decode

import (
	"time"

	"github.com/dime-project/dime/internal/arrowfix"
)

// SkipPageCRC turns the Parquet page CRC verification off or on, for
// BenchmarkPageCRC.
func SkipPageCRC(skip bool) { skipPageCRC = skip }

// SetPageCRCWhole sets the size up to which the page CRC verification reads
// a column chunk whole without first probing its first page header, and
// returns the previous one.
func SetPageCRCWhole(n int64) int64 {
	old := pageCRCWhole
	pageCRCWhole = n
	return old
}

// PageCRCProbe is the length of the probe of a column chunk's first page
// header.
const PageCRCProbe = pageCRCProbe

// Every test of the package reads Parquet through a poisoned pool: a buffer
// the decoder frees is filled with 0xff before it is reused, so a read of a
// buffer after its Free changes the values the tests check.
func init() { arrowfix.PoisonPool(true) }

// ParquetPoolBytes returns the bytes the Parquet buffer pool has handed out
// from its free lists and allocated anew.
func ParquetPoolBytes() (served, fresh int64) {
	return arrowfix.PoolBytes()
}

// ParquetPoolHeld returns the bytes the Parquet buffer pool keeps.
func ParquetPoolHeld() int { return arrowfix.PoolHeld() }

// SetPoolIdle sets how long the Parquet buffer pool keeps its buffers once
// no reader is open, and returns the previous delay.
func SetPoolIdle(d time.Duration) time.Duration {
	return arrowfix.SetPoolIdle(d)
}

// SetMaxCSVRecord sets the longest CSV record read and returns the previous
// bound.
func SetMaxCSVRecord(n int64) int64 {
	old := maxCSVRecord
	maxCSVRecord = n
	return old
}
