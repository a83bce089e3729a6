package deploy_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns"
	"github.com/rocelab/rocelab/lab/emulation/base/state"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
)

// TestNamespacesSurviveIPNetnsAdd: a neighbour runs iproute2's `ip netns
// add` between a deploy and its destroy. iproute2 binds /run/netns onto
// itself when it is not a mount point yet, which covered the lab's
// namespaces: destroy then failed with EBUSY on every one, on every retry.
// rocelab makes /run/netns a mount point before its first namespace (as
// iproute2 does), so the neighbour's command changes nothing for the lab:
// destroy removes every namespace, and the neighbour's stays.
func TestNamespacesSurviveIPNetnsAdd(t *testing.T) {
	requireRoot(t)
	ip := testenv.RequireTool(t, "ip")
	root := runRoot(t)
	lab := labName(t, "ipnetns")
	deployLab(t, "incast", lab, root, deploy.Options{NodeGroups: 1})
	neighbour := fmt.Sprintf("rlneighbour-%d", os.Getpid())
	if out, err := exec.Command(ip, "netns", "add", neighbour).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add %s: %v\n%s", neighbour, err, out)
	}
	defer exec.Command(ip, "netns", "delete", neighbour).Run()
	rep, err := deploy.Destroy(context.Background(), root, lab)
	if err != nil || len(rep.Covered) > 0 {
		t.Fatalf("destroy after a neighbour's `ip netns add`: %v; covered %v", err, rep.Covered)
	}
	names, err := netns.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if l, _, ok := netns.Tag(n); ok && l == lab || strings.HasPrefix(n, state.NetnsName(lab, "")) {
			t.Errorf("namespace %s of the lab is still there", n)
		}
	}
	if !netns.Exists(neighbour) {
		t.Errorf("the neighbour's namespace %s is gone: the lab must not touch it", neighbour)
	}
}
