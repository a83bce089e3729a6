//go:build !linux

package lifecycle

import (
	"errors"
	"os/exec"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/base/proc"
	"github.com/rocelab/rocelab/lab/emulation/base/state"
	"github.com/rocelab/rocelab/lab/emulation/datapath/links"
)

var errUnsupported = errors.New("lifecycle: only implemented on Linux")

// Options tune Destroy and DestroyAll.
type Options struct {
	Root  string
	Grace time.Duration
	Only  func(lab string) bool
	// Executables are the programs that run node processes.
	Executables []string
}

// Report lists what Destroy and DestroyAll removed.
type Report struct {
	Labs    []string `json:"labs"`
	Removed []string `json:"removed"`
	Covered []string `json:"covered,omitempty"`
}

// Port names one end of a link in the topology.
type Port struct {
	Node, Port string
}

// CreateNetns records and creates the namespace of node.
func CreateNetns(l *state.Lab, node string) (string, error) { return "", errUnsupported }

// CreateVeth records and creates a veth pair.
func CreateVeth(l *state.Lab, v links.Veth, a, b Port) error { return errUnsupported }

// StartProcess records and starts a node process.
func StartProcess(l *state.Lab, node, ns string, cmd *exec.Cmd) (proc.Process, error) {
	return proc.Process{}, errUnsupported
}

// Rollback removes every object recorded in l.
func Rollback(l *state.Lab, grace time.Duration) error { return errUnsupported }

// Destroy removes lab.
func Destroy(lab string, o Options) (Report, error) { return Report{}, errUnsupported }

// DestroyAll destroys every lab.
func DestroyAll(o Options) (Report, error) { return Report{}, errUnsupported }
