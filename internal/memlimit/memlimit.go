// Package memlimit finds how much memory the process may use, so that the
// dime command can refuse settings that would exceed it with a one-line
// error, rather than be killed by the kernel or die in the Go runtime with a
// dump of every goroutine.
//
// The bound is the smallest of:
//
//   - the machine's memory (MemTotal in /proc/meminfo);
//   - the memory limit of the process's cgroup and of its ancestors, cgroup
//     v2 (memory.max) or v1 (memory.limit_in_bytes), as containers and
//     systemd set them;
//   - what is left of the address-space limit (ulimit -v, RLIMIT_AS) beyond
//     the address space the process already has (VmSize);
//   - what is left of the data-segment limit (ulimit -d, RLIMIT_DATA, which
//     Linux applies to private writable mappings, the Go heap among them)
//     beyond what the process already has (VmData).
//
// Apply sets the Go runtime's soft memory limit (debug.SetMemoryLimit) a
// little below it, unless GOMEMLIMIT says otherwise, so that the garbage
// collector works harder rather than let the heap grow past it.
package memlimit

import (
	"bufio"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"runtime/debug"
	"strconv"
	"strings"
)

// Limit is the memory the process may use, and what sets it.
type Limit struct {
	// Bytes is the bound, 0 if none is known.
	Bytes uint64
	// Source says where the bound comes from, for messages: e.g. "this
	// machine's memory", "the cgroup's memory limit", "ulimit -v".
	Source string
}

// Rlimits are the process's resource limits in bytes, 0 for none.
type Rlimits struct {
	AS, Data uint64
}

// Detect returns the limit of this process.
func Detect() Limit {
	return detect(os.DirFS("/"), getRlimits())
}

// detect returns the limit from a root file system (with proc and sys, as
// the tests fake it) and resource limits.
func detect(root fs.FS, rl Rlimits) Limit {
	var best Limit
	consider := func(bytes uint64, source string) {
		if bytes > 0 && (best.Bytes == 0 || bytes < best.Bytes) {
			best = Limit{Bytes: bytes, Source: source}
		}
	}
	info := procFields(root, "proc/meminfo")
	consider(info["MemTotal"], "this machine's memory")
	consider(cgroupLimit(root), "the memory limit of this process's cgroup")
	status := procFields(root, "proc/self/status")
	consider(leftOf(rl.AS, status["VmSize"]), "what ulimit -v (RLIMIT_AS) leaves")
	consider(leftOf(rl.Data, status["VmData"]), "what ulimit -d (RLIMIT_DATA) leaves")
	return best
}

// leftOf returns what a limit leaves beyond what is used (at least 1 byte
// when the limit is set, so that a limit already reached still counts).
func leftOf(limit, used uint64) uint64 {
	switch {
	case limit == 0:
		return 0
	case used >= limit:
		return 1
	}
	return limit - used
}

// procFields reads the "Name: value kB" lines of a /proc file into bytes.
func procFields(root fs.FS, name string) map[string]uint64 {
	f, err := root.Open(name)
	if err != nil {
		return nil
	}
	defer f.Close()
	m := map[string]uint64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 || !strings.HasSuffix(fields[0], ":") {
			continue
		}
		v, err := strconv.ParseUint(fields[1], 10, 64)
		if err != nil {
			continue
		}
		if len(fields) > 2 && fields[2] == "kB" {
			if v > math.MaxUint64>>10 {
				continue
			}
			v <<= 10
		}
		m[strings.TrimSuffix(fields[0], ":")] = v
	}
	return m
}

// cgroupLimit returns the smallest memory limit of the process's cgroups,
// v2 and v1, and of their ancestors up to the mount point, 0 if none.
func cgroupLimit(root fs.FS) uint64 {
	data, err := fs.ReadFile(root, "proc/self/cgroup")
	if err != nil {
		return 0
	}
	mounts := cgroupMounts(root)
	var limit uint64
	for _, line := range strings.Split(string(data), "\n") {
		// hierarchy-ID:controller-list:cgroup-path
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var m *mount
		var file string
		switch {
		case parts[0] == "0" && parts[1] == "":
			m, file = mounts.v2, "memory.max"
		case hasController(parts[1], "memory"):
			m, file = mounts.v1, "memory.limit_in_bytes"
		}
		if m == nil {
			continue
		}
		if l := limitUpTo(root, m, parts[2], file); l > 0 && (limit == 0 || l < limit) {
			limit = l
		}
	}
	return limit
}

func hasController(list, name string) bool {
	for _, c := range strings.Split(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// mount is where a cgroup hierarchy is mounted: the mount point, and the
// cgroup path of the mount's root (not "/" inside some containers).
type mount struct {
	point, root string
}

type cgroupMountSet struct {
	v1, v2 *mount // the v1 memory hierarchy, and the v2 one
}

// cgroupMounts finds the cgroup mounts in /proc/self/mountinfo.
func cgroupMounts(root fs.FS) cgroupMountSet {
	var set cgroupMountSet
	data, err := fs.ReadFile(root, "proc/self/mountinfo")
	if err != nil {
		return set
	}
	for _, line := range strings.Split(string(data), "\n") {
		// ID parent major:minor root mount-point options [optional...] - fstype source super-options
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 1 {
			continue
		}
		m := &mount{point: unescape(f[4]), root: unescape(f[3])}
		switch {
		case g[0] == "cgroup2" && set.v2 == nil:
			set.v2 = m
		case g[0] == "cgroup" && len(g) >= 3 && hasController(g[2], "memory") && set.v1 == nil:
			set.v1 = m
		}
	}
	return set
}

// unescape decodes the octal escapes (\040 for a space) of mountinfo.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// limitUpTo returns the smallest limit in file from the cgroup's directory
// up to the mount point, 0 if none is set.
func limitUpTo(root fs.FS, m *mount, cgroup, file string) uint64 {
	rel := cgroup
	if m.root != "/" {
		var ok bool
		if rel, ok = strings.CutPrefix(cgroup, m.root); !ok {
			return 0 // a cgroup outside the mounted part of the hierarchy
		}
	}
	dir := path.Join(strings.TrimPrefix(m.point, "/"), rel)
	top := path.Clean(strings.TrimPrefix(m.point, "/"))
	var limit uint64
	for {
		if l := readLimit(root, path.Join(dir, file)); l > 0 && (limit == 0 || l < limit) {
			limit = l
		}
		if dir == top || dir == "." || dir == "/" || !strings.HasPrefix(dir, top) {
			return limit
		}
		dir = path.Dir(dir)
	}
}

// readLimit reads a cgroup limit file: a number of bytes, or "max" (v2) or a
// number near 2^63 (v1) for none.
func readLimit(root fs.FS, name string) uint64 {
	data, err := fs.ReadFile(root, name)
	if err != nil {
		return 0
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
	if err != nil || v >= 1<<62 {
		return 0
	}
	return v
}

// Apply detects the limit and sets the Go runtime's soft memory limit to
// 90% of it (the rest for memory the Go runtime does not count or cannot
// return at once), unless the GOMEMLIMIT variable is set. It returns the
// limit.
func Apply() Limit {
	l := Detect()
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set && l.Bytes > 0 {
		debug.SetMemoryLimit(int64(min(l.Bytes/10*9, math.MaxInt64)))
	}
	return l
}

// Check returns an error if need bytes exceed the limit: what names the
// request (a flag and its value) and fix says what to do. The error is one
// line.
func (l Limit) Check(what string, need uint64, fix string) error {
	if l.Bytes == 0 || need <= l.Bytes {
		return nil
	}
	return fmt.Errorf("%s needs about %s, more than %s (%s): %s", what, Size(need), Size(l.Bytes), l.Source, fix)
}

// Size formats a number of bytes with a binary unit.
func Size(b uint64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
}
