package deploy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rocelab/rocelab/lab/emulation/base/state"
	"github.com/rocelab/rocelab/topologies"
)

// TopologyFile is the copy of its topology file a lab keeps in its run
// directory, so that what is resolved against it later (fault targets)
// sees the lab as deployed, whatever happened to the file since.
const TopologyFile = "topology.yaml"

// Topology returns lab's topology as deployed, addressed for the lab.
func Topology(lab *Lab) (*topologies.Topology, error) {
	data, err := os.ReadFile(filepath.Join(lab.Dir, TopologyFile))
	if err != nil {
		return nil, fmt.Errorf("lab %s: its topology (deployed by an older rocelab? destroy and deploy it again): %w", lab.Name, err)
	}
	t, err := topologies.Parse(filepath.Base(lab.Source), data)
	if err != nil {
		return nil, fmt.Errorf("lab %s: its topology: %w", lab.Name, err)
	}
	if err := t.Address(lab.Name); err != nil {
		return nil, fmt.Errorf("lab %s: its topology: %w", lab.Name, err)
	}
	return t, nil
}

// TargetLab returns the lab a target that starts at node belongs to: the
// lab FindNode finds node in, or — when no lab has such a node — the lab
// named, or the only lab, so that the target's resolver can say what the
// lab has instead.
func TargetLab(root, lab, node string) (*Lab, error) {
	l, _, err := FindNode(root, lab, node)
	if err == nil || !errors.Is(err, ErrNoNode) {
		return l, err
	}
	names := []string{lab}
	if lab == "" {
		if names, err = state.List(state.RootOr(root)); err != nil {
			return nil, err
		}
	}
	if len(names) != 1 {
		return nil, fmt.Errorf("node %s: %w in any lab", node, ErrNoNode)
	}
	return readLab(root, names[0])
}
