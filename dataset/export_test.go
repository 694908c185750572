package dataset

// SetMaxListed sets the most objects a listing goes through and returns the
// previous bound.
func SetMaxListed(n int) int {
	old := maxListed
	maxListed = n
	return old
}
