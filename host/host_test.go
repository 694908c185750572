package host_test

import (
	"math"
	"os"
	"runtime/debug"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"

	_ "github.com/dime-project/dime/columns"
	_ "github.com/dime-project/dime/covariance"
	_ "github.com/dime-project/dime/dataset"
	_ "github.com/dime-project/dime/decode"
	_ "github.com/dime-project/dime/exact"
	"github.com/dime-project/dime/host"
	_ "github.com/dime-project/dime/internal/cli"
	"github.com/dime-project/dime/internal/linalg"
	_ "github.com/dime-project/dime/monitor"
	_ "github.com/dime-project/dime/rff"
	_ "github.com/dime-project/dime/stream"
	_ "github.com/dime-project/dime/synth"
	_ "github.com/dime-project/dime/tablewriter"
)

// TestImportChangesNothing checks that importing the library (every package
// above, the CLI's among them) leaves the process as Go starts it: gonum's
// own BLAS in blas64, the pure-Go backend, the garbage collector's default
// percent and no soft memory limit; then that UseBLAS and LimitMemory make
// the choices of the programs' mains.
func TestImportChangesNothing(t *testing.T) {
	if impl, ok := blas64.Implementation().(gonum.Implementation); !ok {
		t.Errorf("blas64 after import is %T, want gonum.Implementation", impl)
	}
	if b := linalg.Current(); b != linalg.Gonum {
		t.Errorf("linear-algebra backend after import %v, want gonum", b)
	}
	if _, set := os.LookupEnv("GOGC"); !set {
		p := debug.SetGCPercent(100)
		if p != 100 {
			t.Errorf("GOGC after import %d, want 100", p)
		}
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
			t.Errorf("memory limit after import %d, want none", l)
		}
	}

	if got, want := host.UseBLAS(), linalg.Best().String(); got != want || linalg.Current() != linalg.Best() {
		t.Errorf("UseBLAS() = %q, backend %v; want %q", got, linalg.Current(), want)
	}
	if _, pure := blas64.Implementation().(gonum.Implementation); pure {
		t.Errorf("blas64 after UseBLAS is still gonum's own")
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		defer debug.SetMemoryLimit(math.MaxInt64)
		bytes := host.LimitMemory()
		l := debug.SetMemoryLimit(-1)
		if bytes > 0 && (l <= 0 || uint64(l) > bytes) {
			t.Errorf("LimitMemory() = %d, soft limit %d: want a limit at most that", bytes, l)
		}
		if bytes == 0 && l != math.MaxInt64 {
			t.Errorf("LimitMemory() found no bound but set the limit to %d", l)
		}
	}
}
