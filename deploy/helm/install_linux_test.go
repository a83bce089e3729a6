package helm

import (
	"testing"

	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/cluster/agent/agenttest"
)

// TestNodeReady makes a machine of the harness a Kubernetes node — a
// kubelet and containerd on this machine — and waits for it to be Ready.
func TestNodeReady(t *testing.T) {
	testenv.RequireRoot(t)
	k8sBinaries(t)
	requireNodeTools(t)
	testenv.Exclusive(t)
	u := agenttest.New(t, 1)
	cp := u.StartControlPlane(t)
	StartNode(t, u, u.Machines[0], cp)
}
