package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// DefaultRoot is the directory that holds the run directories of all labs.
const DefaultRoot = "/run/rocelab"

// RootOr returns root, or DefaultRoot when root is "".
func RootOr(root string) string {
	if root == "" {
		return DefaultRoot
	}
	return root
}

// File names inside a lab's run directory.
const (
	StateFile = "state.json"
	LockFile  = "lock"
)

// Kind is what an Object is.
type Kind string

// Kinds of objects a lab records.
const (
	KindNetns     Kind = "netns"     // a named network namespace (Name)
	KindVeth      Kind = "veth"      // a veth pair: Name in NetNS, Peer in PeerNetNS
	KindLink      Kind = "link"      // any other interface: Name in NetNS
	KindProcess   Kind = "process"   // a node process (PID, StartTime)
	KindContainer Kind = "container" // a container (Name is its ID or name)
	KindPart      Kind = "part"      // a machine's share of a lab that spans machines (Name is the machine, Agent its agent)
)

// Status is where an object is in its lifecycle.
type Status string

// Statuses.
const (
	// Intent: recorded before creation; the object may or may not exist.
	Intent Status = "intent"
	// Created: the object was created (and may since have vanished).
	Created Status = "created"
)

// Object is one thing a lab created, or is about to create.
type Object struct {
	// ID is assigned by Intend, unique and increasing within a lab.
	ID     int    `json:"id"`
	Kind   Kind   `json:"kind"`
	Status Status `json:"status"`
	// Node and Port name the topology element the object belongs to.
	Node string `json:"node,omitempty"`
	Port string `json:"port,omitempty"`
	// Name is the namespace, interface or container name.
	Name string `json:"name,omitempty"`
	// NetNS is the namespace the interface or process lives in ("" = the
	// root namespace).
	NetNS string `json:"netns,omitempty"`
	// Peer and PeerNetNS are a veth's other end.
	Peer      string `json:"peer,omitempty"`
	PeerNetNS string `json:"peer_netns,omitempty"`
	// Agent is the URL of the agent that made a part.
	Agent string `json:"agent,omitempty"`
	// PID and StartTime identify a process (StartTime in clock ticks since
	// boot, field 22 of /proc/PID/stat): a PID alone may be recycled.
	PID       int    `json:"pid,omitempty"`
	StartTime uint64 `json:"start_time,omitempty"`
	// Time is when the object was recorded.
	Time time.Time `json:"time"`
}

// File is the content of state.json.
type File struct {
	Lab     string    `json:"lab"`
	Created time.Time `json:"created"`
	// Info holds small facts the deploy wants to find again (topology
	// file, scale, API socket path).
	Info    map[string]string `json:"info,omitempty"`
	NextID  int               `json:"next_id"`
	Objects []Object          `json:"objects"`
}

// Dir is the run directory of lab under root.
func Dir(root, lab string) string { return filepath.Join(root, lab) }

// List returns the names of the labs that have a run directory under
// root, sorted. A missing root means no labs.
func List(root string) ([]string, error) {
	ents, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list labs: %w", err)
	}
	var labs []string
	for _, e := range ents {
		if e.IsDir() && ValidName(e.Name()) == nil {
			labs = append(labs, e.Name())
		}
	}
	slices.Sort(labs)
	return labs, nil
}

// Exists reports whether lab has a state file under root.
func Exists(root, lab string) bool {
	_, err := os.Stat(filepath.Join(Dir(root, lab), StateFile))
	return err == nil
}

// Read returns lab's state file without taking the lock (a consistent
// snapshot, thanks to the atomic writes).
func Read(root, lab string) (*File, error) {
	b, err := os.ReadFile(filepath.Join(Dir(root, lab), StateFile))
	if err != nil {
		return nil, fmt.Errorf("read state of lab %s: %w", lab, err)
	}
	var f File
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("decode state of lab %s: %w", lab, err)
	}
	return &f, nil
}

// writeAtomic writes b to path through a temporary file, fsync and rename.
func writeAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".state-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
