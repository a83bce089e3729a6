package deploy_test

import (
	"testing"

	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/topologies"
)

// TestPingSwitch pings a switch's own addresses from a host: the FE
// switch's port facing the host (the host's gateway) and its port facing
// the storage node (the `rocelab exec --help` example, 198.19.0.8). The
// switch's control plane must answer; before it did, the echo requests were
// forwarded toward the other end of the port's link instead.
func TestPingSwitch(t *testing.T) {
	requireRoot(t)
	testenv.RequireTool(t, "ping")
	tp, err := topologies.Builtin("laptop")
	if err != nil {
		t.Fatal(err)
	}
	var gw, toStorage string
	for _, p := range tp.Node("rsw1").Ports {
		switch p.Peer.Node.Name {
		case "host1":
			gw = p.Addr.Addr().String()
		case "st1":
			toStorage = p.Addr.Addr().String()
		}
	}
	// The exec help's example pings this address from host1.
	if toStorage != "198.19.0.8" {
		t.Errorf("rsw1's port to st1 is %s; the `rocelab exec --help` example pings 198.19.0.8", toStorage)
	}
	root := runRoot(t)
	l := deployLab(t, "laptop", labName(t, "swping"), root, deploy.Options{})
	ping(t, root, l.Name, "host1", gw)
	ping(t, root, l.Name, "host1", toStorage)
	ping(t, root, l.Name, "st1", toStorage)
}
