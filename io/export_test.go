package io

// SetBlobWindow sets the length of the ranged reads of object storage and
// returns the previous one.
func SetBlobWindow(n int64) int64 {
	old := blobWindow
	blobWindow = n
	return old
}

// SkipPageCRC turns the Parquet page CRC verification off or on, for
// BenchmarkPageCRC.
func SkipPageCRC(skip bool) { skipPageCRC = skip }
