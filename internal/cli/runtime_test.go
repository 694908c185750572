package cli

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// gcSettings returns the garbage collector's percent and soft memory limit
// without changing them.
func gcSettings() (percent int, limit int64) {
	percent = debug.SetGCPercent(-1)
	debug.SetGCPercent(percent)
	return percent, debug.SetMemoryLimit(-1)
}

// TestMainLeavesRuntimeAlone checks that Main, called as a library or a
// test calls it, changes neither GOGC nor the soft memory limit of the
// process, during score or after, and that with TuneRuntime (as cmd/dime's
// main) score lowers GOGC while it streams and restores it after.
func TestMainLeavesRuntimeAlone(t *testing.T) {
	if _, set := os.LookupEnv("GOGC"); set {
		t.Skip("GOGC is set: score would not touch it either way")
	}
	path := filepath.Join(t.TempDir(), "g.parquet")
	var out, errb bytes.Buffer
	if code := Main([]string{"gen", "--kind", "gaussian", "--dim", "2", "--rows", "2000", "--out", path},
		strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("gen: %s", errb.String())
	}
	// An unusual percent and limit, so that a change cannot go unseen.
	defer debug.SetGCPercent(debug.SetGCPercent(137))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64 - 1))
	wantPercent, wantLimit := gcSettings()
	score := func() (during int) {
		memoryHook = func(phase string) {
			if phase == "stream" {
				during, _ = gcSettings()
			}
		}
		defer func() { memoryHook = nil }()
		out.Reset()
		errb.Reset()
		if code := Main([]string{"score", path, "--x", "x*", "--y", "y*", "--features", "16", "--json"},
			strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("score: %s", errb.String())
		}
		return during
	}
	if during := score(); during != wantPercent {
		t.Errorf("without TuneRuntime, GOGC during score = %d, want %d (untouched)", during, wantPercent)
	}
	if p, l := gcSettings(); p != wantPercent || l != wantLimit {
		t.Errorf("after score without TuneRuntime: GOGC %d, limit %d; want %d, %d", p, l, wantPercent, wantLimit)
	}
	TuneRuntime()
	defer tuneRuntime.Store(false)
	if during := score(); during != 5 {
		t.Errorf("with TuneRuntime, GOGC during score = %d, want 5", during)
	}
	if p, l := gcSettings(); p != wantPercent || l != wantLimit {
		t.Errorf("after score with TuneRuntime: GOGC %d, limit %d; want %d, %d (restored)", p, l, wantPercent, wantLimit)
	}
}
