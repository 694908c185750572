package arrowfix

import "time"

// The hooks below are for the tests of the packages that decode through
// this one.

// PoisonPool makes the Parquet buffer pool fill every buffer the decoder
// frees with 0xff before keeping it, so that a read of a buffer after its
// Free changes the values a test checks.
func PoisonPool(on bool) { parquetPool.poison.Store(on) }

// PoolBytes returns the bytes the Parquet buffer pool has handed out from
// its free lists and allocated anew.
func PoolBytes() (served, fresh int64) {
	return parquetPool.served.Load(), parquetPool.fresh.Load()
}

// PoolHeld returns the bytes the Parquet buffer pool keeps.
func PoolHeld() int { return parquetPool.held() }

// SetPoolIdle sets how long the Parquet buffer pool keeps its buffers once
// no decoder uses it, and returns the previous delay.
func SetPoolIdle(d time.Duration) time.Duration {
	old := poolIdle
	poolIdle = d
	return old
}
