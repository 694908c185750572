package main

import (
	"encoding/json"
	"flag"
	"net"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
)

// The environments in which a runner can start the workers
// (--environment_type): a container of the Beam Go SDK image (docker, the
// default of Dataflow, Flink and Spark), a process started by the runner
// (process: the SDK's boot program, named by --environment_config, which
// fetches the worker binary and runs it), workers in this process
// (loopback), or a worker pool already running (external).
var environments = []string{"docker", "process", "loopback", "external"}

// checkEnvironment refuses, as a usage error, the combinations of runner
// and environment that the Beam SDK would panic on or fail on late, and
// gives a job whose workers run elsewhere this binary as their worker
// binary when it can serve as one.
func checkEnvironment(runner string) error {
	env := strings.ToLower(*jobopts.EnvironmentType)
	if env != "" && !slices.Contains(environments, env) {
		return usagef("--environment_type %q: want one of %s", *jobopts.EnvironmentType, strings.Join(environments, ", "))
	}
	config := strings.TrimSpace(*jobopts.EnvironmentConfig)
	switch {
	case runner == "dataflow" && env != "" && env != "docker":
		return usagef("--runner dataflow --environment_type %s: Dataflow runs the workers in its own containers; leave --environment_type unset", env)
	case runner == "direct" && env != "":
		return usagef("--runner direct --environment_type %s: the direct runner runs the workers in this process; leave --environment_type unset", env)
	case env == "process":
		var payload struct {
			Command string `json:"command"`
		}
		if err := json.Unmarshal([]byte(config), &payload); err != nil || payload.Command == "" {
			return usagef(`--environment_type process needs --environment_config '{"command":"/path/to/boot"}': the Beam Go SDK's boot program, which fetches --worker_binary and runs it`)
		}
		if runner == "prism" { // started here: the command must be here
			if st, err := os.Stat(payload.Command); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
				return usagef("--environment_config: %s is not an executable file", payload.Command)
			}
		}
	case env == "external" && config == "":
		return usagef("--environment_type external needs --environment_config HOST:PORT, the address of a running worker pool")
	case env == "external" && runner == "prism":
		// Prism, in this process, panics on a worker pool it cannot reach.
		c, err := net.DialTimeout("tcp", config, 5*time.Second)
		if err != nil {
			return usagef("--environment_config %s: no worker pool answers there: %v", config, err)
		}
		c.Close()
	}
	if slices.Contains([]string{"flink", "spark", "universal"}, runner) && strings.TrimSpace(*jobopts.Endpoint) == "" {
		return usagef("--runner %s needs --endpoint HOST:PORT: the address of a Beam job server (for Flink or Spark, Beam's job server for that runner, pointed at the cluster)", runner)
	}
	remote := runner != "direct" && env != "loopback" && (runner != "prism" || env != "")
	if remote && *jobopts.WorkerBinary == "" {
		// Without --worker_binary the SDK compiles the workers from the
		// source of the main package, which a built binary does not
		// have. On linux/amd64, the platform of the SDK's containers,
		// this binary is the worker binary (dimebeam's main runs the
		// worker when a runner starts it).
		var arm bool // Dataflow's Arm machines
		for _, name := range []string{"worker_machine_type", "machine_type"} {
			if f := flag.Lookup(name); f != nil && strings.HasPrefix(f.Value.String(), "t2a") {
				arm = true
			}
		}
		if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" || arm {
			return usagef("--runner %s: the workers need --worker_binary, a build of dimebeam for their platform (e.g. GOOS=linux GOARCH=amd64 go build ./cmd/dimebeam)", runner)
		}
		self, err := os.Executable()
		if err != nil {
			return usagef("--runner %s: give --worker_binary, a linux/amd64 build of dimebeam (this binary's path: %v)", runner, err)
		}
		*jobopts.WorkerBinary = self
	}
	return nil
}
