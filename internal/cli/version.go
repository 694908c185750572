package cli

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"golang.org/x/sys/cpu"

	"github.com/dime-project/dime/internal/linalg"
)

// buildVersion is what dime version prints: the module's version, the
// commit, the toolchain, the build tags, the linear-algebra backend and the
// CPU it runs on, so that a bug report can say what ran.
type buildVersion struct {
	Version   string   `json:"version"`          // module version, "(devel)" for a build in a checkout
	Commit    string   `json:"commit,omitempty"` // vcs.revision, when the build stamped it
	Time      string   `json:"commit_time,omitempty"`
	Modified  bool     `json:"modified,omitempty"` // the checkout had uncommitted changes
	GoVersion string   `json:"go_version"`
	Platform  string   `json:"platform"`             // GOOS/GOARCH
	Arch      string   `json:"arch_level,omitempty"` // GOAMD64, GOARM64, ...
	Tags      []string `json:"build_tags"`
	Cgo       bool     `json:"cgo"`
	Backend   string   `json:"linalg_backend"` // gonum or openblas
	Kernels   []string `json:"kernels"`        // the dense kernels in use (linalg.Kernels)
	CPU       []string `json:"cpu_features"`   // of the machine, among those that matter to dense kernels
}

// readBuildVersion reads the binary's build information.
func readBuildVersion() buildVersion {
	v := buildVersion{Version: "(unknown)", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH,
		Tags: []string{}, Backend: linalg.Current().String(), Kernels: linalg.Kernels(), CPU: cpuFeatures()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		v.Commit = commit
		return v
	}
	v.Version = bi.Main.Version
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		case "-tags":
			if s.Value != "" {
				v.Tags = strings.Split(s.Value, ",")
			}
		case "CGO_ENABLED":
			v.Cgo = s.Value == "1"
		case "GOAMD64", "GOARM64", "GOARM", "GO386", "GOPPC64", "GORISCV64", "GOMIPS", "GOMIPS64":
			v.Arch = s.Key + "=" + s.Value
		}
	}
	if v.Commit == "" {
		v.Commit = commit
	}
	return v
}

// commit is the commit a build without version control information was
// made from, set by the linker where the build has no git checkout (a
// container build from a source archive):
//
//	go build -ldflags "-X github.com/dime-project/dime/internal/cli.commit=$(git rev-parse HEAD)" ./cmd/dime
//
// The commit Go stamps from a checkout takes precedence.
var commit string

// cpuFeatures lists the SIMD features of the CPU that dense kernels (BLAS,
// feature maps) can use. They say what the machine offers; which the
// kernels use depends on the backend (OpenBLAS picks its kernels for the
// CPU at load time) and on the GOAMD64 level of the build.
func cpuFeatures() []string {
	var fs []string
	add := func(name string, has bool) {
		if has {
			fs = append(fs, name)
		}
	}
	switch runtime.GOARCH {
	case "amd64", "386":
		add("sse4.2", cpu.X86.HasSSE42)
		add("avx", cpu.X86.HasAVX)
		add("avx2", cpu.X86.HasAVX2)
		add("fma", cpu.X86.HasFMA)
		add("avx512f", cpu.X86.HasAVX512F)
	case "arm64":
		add("asimd", cpu.ARM64.HasASIMD)
		add("fphp", cpu.ARM64.HasFPHP)
		add("sve", cpu.ARM64.HasSVE)
	}
	if fs == nil {
		fs = []string{}
	}
	return fs
}

// line is the first line of dime version, in the manner of go version.
func (v buildVersion) line() string {
	return fmt.Sprintf("dime %s %s %s", v.Version, v.GoVersion, v.Platform)
}

func (v buildVersion) write(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintln(&b, v.line())
	if v.Commit != "" {
		mod := ""
		if v.Modified {
			mod = " (modified)"
		}
		when := ""
		if v.Time != "" {
			when = " " + v.Time
		}
		fmt.Fprintf(&b, "commit   %s%s%s\n", v.Commit, when, mod)
	} else {
		fmt.Fprintln(&b, "commit   unknown (not stamped: build in a git checkout with -buildvcs=true)")
	}
	tags := "none"
	if len(v.Tags) > 0 {
		tags = strings.Join(v.Tags, ",")
	}
	cgo := "cgo off"
	if v.Cgo {
		cgo = "cgo on"
	}
	fmt.Fprintf(&b, "build    tags %s, %s", tags, cgo)
	if v.Arch != "" {
		fmt.Fprintf(&b, ", %s", v.Arch)
	}
	fmt.Fprintf(&b, "\nlinalg   %s\n", v.Backend)
	fmt.Fprintf(&b, "kernels  %s\n", strings.Join(v.Kernels, " "))
	cpus := "none detected"
	if len(v.CPU) > 0 {
		cpus = strings.Join(v.CPU, " ")
	}
	fmt.Fprintf(&b, "cpu      %s\n", cpus)
	_, err := io.WriteString(w, b.String())
	return err
}

func runVersion(e *env, args []string) error {
	fs := newFlagSet(e, "version", "[--json]")
	asJSON := fs.Bool("json", false, "print one JSON object instead of lines")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("version takes no arguments, got %q", pos[0])
	}
	v := readBuildVersion()
	if *asJSON {
		return writeJSON(e.stdout, v)
	}
	return v.write(e.stdout)
}
