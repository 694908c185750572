package linalg

import (
	"math"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
)

// importOnlyEnv, set to 1, makes the test binary skip its Install (see
// install_test.go), as a program that imports the package and never calls
// Install.
const importOnlyEnv = "DIME_LINALG_IMPORT_ONLY"

func importOnly() bool { return os.Getenv(importOnlyEnv) == "1" }

// TestInstall runs TestImportOnly in a fresh process that only imports the
// package, and checks that it passed.
func TestInstall(t *testing.T) {
	if importOnly() {
		t.Skip("in the child process")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestImportOnly$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), importOnlyEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestImportOnly") {
		t.Fatalf("child process: %v\n%s", err, out)
	}
	t.Logf("child process:\n%s", out)
}

// TestImportOnly, in a process that imported the package and did not call
// Install, checks that the import changed nothing: the backend is Gonum and
// blas64 is still gonum's own BLAS. Eigenvalues computed so agree with
// those after Install to round-off (both are backward stable: within
// 1e-13 of the largest, the bound of TestBackendsAgree's matrices' sizes
// with room), and Install then makes Best the backend, with its BLAS in
// blas64 and, with OpenBLAS, one thread per call.
func TestImportOnly(t *testing.T) {
	if !importOnly() {
		t.Skip("runs in the child process of TestInstall")
	}
	if Current() != Gonum {
		t.Errorf("backend after import %v, want gonum", Current())
	}
	if impl, ok := blas64.Implementation().(gonum.Implementation); !ok {
		t.Errorf("blas64 after import is %T, want gonum's own gonum.Implementation", impl)
	}
	a := poisonedSym(gaussianGram(300, 4, 11), 300, blas.Upper)
	var s SymEigensolver
	c := a
	c.Data = slices.Clone(a.Data)
	before, err := s.EigenvaluesInPlace(nil, c)
	if err != nil {
		t.Fatal(err)
	}
	if b := Install(); b != Best() || Current() != Best() {
		t.Errorf("Install() = %v, backend %v, want %v", b, Current(), Best())
	}
	switch impl := blas64.Implementation().(type) {
	case gonumBLAS:
		if Best() != Gonum {
			t.Errorf("blas64 after Install is %T with backend %v", impl, Best())
		}
	default:
		if Best() != OpenBLAS {
			t.Errorf("blas64 after Install is %T with backend %v", impl, Best())
		}
	}
	if _, set := os.LookupEnv("OPENBLAS_NUM_THREADS"); Best() == OpenBLAS && !set && openblasThreads() != 1 {
		t.Errorf("OpenBLAS threads after Install: %d, want 1", openblasThreads())
	}
	c.Data = slices.Clone(a.Data)
	after, err := s.EigenvaluesInPlace(nil, c)
	if err != nil {
		t.Fatal(err)
	}
	scale := math.Max(math.Abs(after[0]), math.Abs(after[len(after)-1]))
	var worst float64
	for i := range after {
		worst = math.Max(worst, math.Abs(after[i]-before[i])/scale)
	}
	t.Logf("largest difference before/after Install over max|λ|: %.2g (GOMAXPROCS %d)", worst, runtime.GOMAXPROCS(0))
	if !(worst <= 1e-13) {
		t.Errorf("eigenvalues before and after Install differ by %.3g of the largest", worst)
	}
}
