package memlimit

import (
	"os"
	"strings"
	"testing"
	"testing/fstest"
)

const gib = 1 << 30

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

// machine is a /proc with 16 GiB of memory and a process of 800 MiB of
// address space, 300 MiB of data.
func machine() fstest.MapFS {
	return fstest.MapFS{
		"proc/meminfo":     file("MemTotal:       16777216 kB\nMemFree:         1000 kB\n"),
		"proc/self/status": file("Name:\tdime\nVmSize:\t  819200 kB\nVmData:\t  307200 kB\n"),
	}
}

func with(fs fstest.MapFS, files map[string]string) fstest.MapFS {
	for k, v := range files {
		fs[k] = file(v)
	}
	return fs
}

const (
	mountV2 = "24 1 0:21 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n"
	mountV1 = "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755\n" +
		"35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n" +
		"32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
)

func TestDetect(t *testing.T) {
	cases := []struct {
		name   string
		fs     fstest.MapFS
		rl     Rlimits
		bytes  uint64
		source string
	}{
		{"machine", machine(), Rlimits{}, 16 * gib, "machine"},
		{"nothing known", fstest.MapFS{}, Rlimits{}, 0, ""},
		{"cgroup v2, limit on the parent", with(machine(), map[string]string{
			"proc/self/cgroup":                              "0::/user.slice/app.scope\n",
			"proc/self/mountinfo":                           mountV2,
			"sys/fs/cgroup/user.slice/app.scope/memory.max": "max\n",
			"sys/fs/cgroup/user.slice/memory.max":           "2147483648\n",
		}), Rlimits{}, 2 * gib, "cgroup"},
		{"cgroup v2, own limit below the parent's", with(machine(), map[string]string{
			"proc/self/cgroup":                              "0::/user.slice/app.scope\n",
			"proc/self/mountinfo":                           mountV2,
			"sys/fs/cgroup/user.slice/app.scope/memory.max": "1073741824\n",
			"sys/fs/cgroup/user.slice/memory.max":           "2147483648\n",
		}), Rlimits{}, 1 * gib, "cgroup"},
		{"cgroup v2 namespace (a container)", with(machine(), map[string]string{
			"proc/self/cgroup":               "0::/\n",
			"proc/self/mountinfo":            mountV2,
			"sys/fs/cgroup/memory.max":       "3221225472\n",
			"sys/fs/cgroup/memory.max.other": "1\n",
		}), Rlimits{}, 3 * gib, "cgroup"},
		{"cgroup v1", with(machine(), map[string]string{
			"proc/self/cgroup":    "5:cpu,cpuacct:/docker/abc\n4:memory:/docker/abc\n0::/\n",
			"proc/self/mountinfo": mountV1,
			"sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes": "536870912\n",
			"sys/fs/cgroup/memory/docker/memory.limit_in_bytes":     "9223372036854771712\n",
		}), Rlimits{}, gib / 2, "cgroup"},
		{"cgroup v1 unlimited", with(machine(), map[string]string{
			"proc/self/cgroup":    "4:memory:/process_api/9f0d\n",
			"proc/self/mountinfo": mountV1,
			"sys/fs/cgroup/memory/process_api/9f0d/memory.limit_in_bytes": "9223372036854771712\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes":                  "9223372036854771712\n",
		}), Rlimits{}, 16 * gib, "machine"},
		{"cgroup v1 mounted at the container's cgroup", with(machine(), map[string]string{
			"proc/self/cgroup":                           "4:memory:/docker/abc\n",
			"proc/self/mountinfo":                        "35 31 0:32 /docker/abc /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes": "1073741824\n",
		}), Rlimits{}, gib, "cgroup"},
		{"a mount point with a space", with(machine(), map[string]string{
			"proc/self/cgroup":    "0::/a\n",
			"proc/self/mountinfo": "24 1 0:21 / /cg\\040v2 rw - cgroup2 cgroup2 rw\n",
			"cg v2/a/memory.max":  "1073741824\n",
		}), Rlimits{}, gib, "cgroup"},
		{"ulimit -v", machine(), Rlimits{AS: 3000000 << 10}, 3000000<<10 - 819200<<10, "ulimit -v"},
		{"ulimit -v already used up", machine(), Rlimits{AS: 500 << 20}, 1, "ulimit -v"},
		{"ulimit -d", machine(), Rlimits{Data: 1 << 30, AS: 8 << 30}, 1<<30 - 307200<<10, "ulimit -d"},
	}
	for _, c := range cases {
		l := detect(c.fs, c.rl)
		if l.Bytes != c.bytes || !strings.Contains(l.Source, c.source) {
			t.Errorf("%s: %d bytes from %q, want %d from %s", c.name, l.Bytes, l.Source, c.bytes, c.source)
		}
	}
}

func TestCheck(t *testing.T) {
	l := Limit{Bytes: 3 * gib / 2, Source: "what ulimit -v (RLIMIT_AS) leaves"}
	if err := l.Check("--features 64", gib, "lower it"); err != nil {
		t.Error(err)
	}
	err := l.Check("--features 4096", 9*gib, "lower --features")
	want := "--features 4096 needs about 9.0 GiB, more than 1.5 GiB (what ulimit -v (RLIMIT_AS) leaves): lower --features"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	if err := (Limit{}).Check("anything", 1<<62, ""); err != nil {
		t.Errorf("no limit known: %v", err)
	}
}

// TestDetectHere reads this machine: some limit is always known on Linux
// (MemTotal).
func TestDetectHere(t *testing.T) {
	l := Detect()
	t.Logf("%s (%s)", Size(l.Bytes), l.Source)
	if l.Bytes == 0 && machineHasProc() {
		t.Error("no limit found, but /proc/meminfo exists")
	}
}

func machineHasProc() bool {
	_, err := os.Stat("/proc/meminfo")
	return err == nil
}
