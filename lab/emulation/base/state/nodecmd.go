package state

import (
	"os"
	"path/filepath"
)

// NodeBinary is the name of the slim executable that runs one lab node.
const NodeBinary = "rocelab-node"

// NodeExecutable is the program NodeCommand runs for binary: what a node
// process's /proc/PID/exe names, which is how a process recorded before
// its PID was known is found again.
func NodeExecutable(binary string) string { return NodeCommand(binary)[0] }

// NodeCommand returns the command line that runs a node from the
// configuration at cfgPaths (several: a group of nodes on one loop):
// rocelab-node beside the rocelab executable binary when it is there (a
// process ready in milliseconds), else `binary node`.
func NodeCommand(binary string, cfgPaths ...string) []string {
	var argv []string
	slim := filepath.Join(filepath.Dir(binary), NodeBinary)
	if fi, err := os.Stat(slim); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		argv = []string{slim}
	} else {
		argv = []string{binary, "node"}
	}
	for _, p := range cfgPaths {
		argv = append(argv, "--config", p)
	}
	return argv
}
