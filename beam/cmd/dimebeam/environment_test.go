package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
)

// TestRunnerEnvironments checks that the combinations of --runner and
// --environment_type that the Beam SDK panics on (Dataflow in loopback,
// Prism with an unreachable worker pool) or fails on late give one line
// and exit status 2.
func TestRunnerEnvironments(t *testing.T) {
	dir := t.TempDir()
	gen(t, filepath.Join(dir, "a.parquet"), 100, 1)
	set := func(p *string, v string) {
		old := *p
		*p = v
		t.Cleanup(func() { *p = old })
	}
	type env struct{ typ, config, endpoint string }
	var cases []struct {
		runner string
		env    env
		want   string
	}
	add := func(runner string, e env, want string) {
		cases = append(cases, struct {
			runner string
			env    env
			want   string
		}{runner, e, want})
	}
	for _, typ := range []string{"process", "loopback", "external"} {
		add("dataflow", env{typ: typ, config: `{"command":"/bin/true"}`}, "Dataflow runs the workers in its own containers")
	}
	for _, typ := range []string{"docker", "process", "loopback", "external"} {
		add("direct", env{typ: typ, config: "localhost:1"}, "the direct runner runs the workers in this process")
	}
	for _, r := range []string{"flink", "spark", "universal"} {
		for _, typ := range []string{"", "docker", "loopback"} {
			add(r, env{typ: typ}, "needs --endpoint")
		}
	}
	add("flink", env{typ: "bogus", endpoint: "localhost:1"}, `--environment_type "bogus"`)
	add("prism", env{typ: "process"}, `needs --environment_config '{"command"`)
	add("flink", env{typ: "process", config: "/path/to/boot", endpoint: "localhost:1"}, `needs --environment_config '{"command"`)
	add("prism", env{typ: "process", config: `{"command":"/nonexistent/boot"}`}, "not an executable file")
	add("spark", env{typ: "external", endpoint: "localhost:1"}, "needs --environment_config HOST:PORT")
	add("prism", env{typ: "external", config: "localhost:1"}, "no worker pool answers there")
	for _, c := range cases {
		t.Run(c.runner+"/"+c.env.typ, func(t *testing.T) {
			set(jobopts.EnvironmentType, c.env.typ)
			set(jobopts.EnvironmentConfig, c.env.config)
			set(jobopts.Endpoint, c.env.endpoint)
			set(runners.Runner, c.runner)
			res := filepath.Join(t.TempDir(), "r.json")
			code, out, errs := runCmd(t, "--input", dir, "--x", "x0,x1", "--y", "y0,y1", "--output", res)
			if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", code, out, errs, c.want)
			}
		})
	}
}

// TestTempLocationRequired: a runner whose workers do not run in this
// process needs --temp_location, where the splits' sums are written; without
// it the sums (30 to 38 MB each at D = 256) would travel through the
// runner as elements. One line, exit 2, before any job is submitted; the
// same for dimebeam rank.
func TestTempLocationRequired(t *testing.T) {
	dir := t.TempDir()
	gen(t, filepath.Join(dir, "a.parquet"), 100, 1)
	for _, p := range []*string{jobopts.EnvironmentType, jobopts.EnvironmentConfig, jobopts.Endpoint, runners.Runner} {
		old := *p
		t.Cleanup(func() { *p = old })
	}
	*jobopts.EnvironmentType, *jobopts.EnvironmentConfig = "docker", ""
	*jobopts.Endpoint, *runners.Runner = "localhost:1", "flink"
	out := filepath.Join(t.TempDir(), "r.json")
	for _, c := range []struct {
		name string
		run  func(*testing.T, ...string) (int, string, string)
	}{{"dimebeam", runCmd}, {"dimebeam rank", runRank}} {
		code, stdout, errs := c.run(t, "--input", dir, "--x", "x0,x1", "--y", "y0,y1", "--output", out)
		if code != 2 || stdout != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "--temp_location is required") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and one line asking for --temp_location", c.name, code, stdout, errs)
		}
	}
}
