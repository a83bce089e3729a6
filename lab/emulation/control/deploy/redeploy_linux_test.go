package deploy_test

import (
	"context"
	"testing"

	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
)

// TestAgain: a lab deployed again from its books gets the topology, scale,
// seed, node groups and exact links it had, and deploys.
func TestAgain(t *testing.T) {
	requireRoot(t)
	root, lab := runRoot(t), labName(t, "again")
	first := deployLab(t, "laptop", lab, root, deploy.Options{Scale: 150, Seed: 9, NodeGroups: 1, ExactLinks: true})
	o, runtime, err := deploy.Again(root, lab)
	if err != nil {
		t.Fatal(err)
	}
	if o.Scale != 150 || o.Seed != 9 || o.NodeGroups != 1 || !o.ExactLinks || o.LabName != lab || runtime != first.Runtime ||
		o.Topology == nil || len(o.Topology.Nodes) != 10 {
		t.Fatalf("again: scale %d seed %d groups %d exact %v lab %q runtime %q nodes %d; want 150 9 1 true %q %q 10",
			o.Scale, o.Seed, o.NodeGroups, o.ExactLinks, o.LabName, runtime, len(o.Topology.Nodes), lab, first.Runtime)
	}
	if _, err := deploy.Destroy(context.Background(), root, lab); err != nil {
		t.Fatal(err)
	}
	o.Binary = binary(t)
	again, err := deploy.Deploy(t.Context(), o)
	if err != nil {
		t.Fatalf("deploy again: %v", err)
	}
	if again.Scale != 150 || again.Seed != 9 || again.Nodes[0].Group == "" {
		t.Errorf("deployed again at scale %d, seed %d, group %q; want 150, 9, a group", again.Scale, again.Seed, again.Nodes[0].Group)
	}
	if _, _, err := deploy.Again(root, "no-such-lab"); err == nil {
		t.Error("Again of a lab that is not deployed: no error")
	}
}
