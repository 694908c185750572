package dataset

// SetBlobWindow sets the most a ranged read of object storage asks for
// (8 MiB by default) and returns the previous length: a hook for the tests
// of the packages that read through this one. It is not safe to call while
// a dataset is read.
func SetBlobWindow(n int64) int64 {
	old := blobWindow
	blobWindow = n
	return old
}
