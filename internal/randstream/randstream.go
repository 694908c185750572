// Package randstream holds the PCG stream constants of dime's random
// choices, one place for all of them: the same seed drives the
// permutations, the HSIC test's pairings, the feature frequencies, the row
// samples and the synthetic data through independent streams. A constant
// here never changes: a saved state's results depend on it.
package randstream

const (
	// Permutation is the stream of the DiME permutations ("dimeperm").
	Permutation = 0x64696d657065726d
	// HSIC is the stream of the HSIC test's pairings ("dimehsic").
	HSIC = 0x64696d6568736963
	// Frequency is the stream of the frequency draws ("dimefreq").
	Frequency = 0x64696d6566726571
	// Synth is the stream of the synthetic data ("dimesynt").
	Synth = 0x64696d6573796e74
	// Sample is the stream of the row samples ("dimesamp").
	Sample = 0x64696d6573616d70
	// Pilot is the stream of the pilot sample of a dataset's rows, on
	// which the columns' scales and the data-dependent bandwidths are
	// chosen ("dimepilt").
	Pilot = 0x64696d6570696c74
)
