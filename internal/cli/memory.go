package cli

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// physicalMemory returns the machine's memory in bytes (MemTotal of
// /proc/meminfo), or 0 when it cannot tell.
func physicalMemory() uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseUint(fields[1], 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// checkMemory refuses a run whose largest allocations (need bytes) exceed the
// machine's memory: such a run would not fail with an error but be killed.
func checkMemory(what string, need uint64, fix string) error {
	have := physicalMemory()
	if have == 0 || need <= have {
		return nil
	}
	return usagef("%s needs about %.1f GiB, more than this machine's %.1f GiB: %s", what, gib(need), gib(have), fix)
}

func gib(b uint64) float64 { return float64(b) / (1 << 30) }

// rffMemory estimates the bytes of the RFF estimator: its accumulators
// (per group X, Y, joint, the copies and self joints of the normalized score;
// P permuted), each a (2D)² float64 matrix, and what a Result adds: the
// summed accumulators of every group and of all but one, the products of
// marginals and the eigensolvers' scratch copies.
func rffMemory(features, permutations, groups int) uint64 {
	p := uint64(2 * features)
	matrices := uint64(7*groups+permutations) + 2*7 + 6 + uint64(runtime.GOMAXPROCS(0))
	return matrices * p * p * 8
}

// exactMemory estimates the bytes of an exact estimate on n rows: two Gram
// matrices and one scratch matrix per worker, n² float64 each.
func exactMemory(n int) uint64 {
	return uint64(2+runtime.GOMAXPROCS(0)) * uint64(n) * uint64(n) * 8
}

// checkRFFMemory is checkMemory for the RFF estimator's settings.
func checkRFFMemory(features, permutations, groups int) error {
	return checkMemory(fmt.Sprintf("--features %d with %d permutations and %d groups", features, permutations, groups),
		rffMemory(features, permutations, groups), "lower --features (memory grows as D²), --permutations or --groups")
}
