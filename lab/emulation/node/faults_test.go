package node_test

import (
	"path/filepath"
	"testing"

	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/faults"
	"github.com/rocelab/rocelab/lab/emulation/datapath/emu"
	"github.com/rocelab/rocelab/lab/emulation/node"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
	"github.com/rocelab/rocelab/wire"
)

// TestFaultAPI puts faults on a switch node's egress through its API:
// 100% loss drops what the port forwards and clearing it restores the
// pass-through; a PFC storm sends pause frames (with the PFC address) out
// of the port; bad requests are refused.
func TestFaultAPI(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "sw1.sock")
	w := emu.NewMemWaiter()
	p0, p1 := w.NewPort(), w.NewPort()
	n, err := node.New(switchConfig(socket), node.IO{Ports: []emu.PortIO{p0, p1}, Waiter: w}, nil)
	if err != nil {
		t.Fatal(err)
	}
	runNode(t, n)
	c := nodeapi.NewClient(socket)
	defer c.Close()
	waitHealthy(t, c)
	ctx := t.Context()

	for _, bad := range []nodeapi.FaultRequest{
		{Target: "sw1-p2", Spec: faults.Spec{}},
		{Target: "sw1-p2", Spec: faults.Spec{Params: faults.BernoulliLoss{P: 2}}},
		{Target: "p9", Spec: spec(t, "loss 1%")},
		{Target: "", Spec: spec(t, "down")},
	} {
		if _, err := c.AddFault(ctx, bad.Target, bad.Spec); !isStatus(err, 400) {
			t.Errorf("AddFault(%q, %q) = %v, want 400", bad.Target, bad.Spec, err)
		}
	}
	fi, err := c.AddFault(ctx, "sw1-p2", spec(t, "loss 100%"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.ID != "f1" || fi.Kind != "loss" || len(fi.Ports) != 1 || fi.Ports[0] != "sw1-p2" || fi.Targets[0] != "sw1:p2" {
		t.Errorf("AddFault = %+v", fi)
	}
	// A fault that hit nothing yet says 0, not nothing.
	if v, ok := fi.Packets["dropped"]; !ok || v != 0 || len(fi.Packets) != 2 {
		t.Errorf("new fault's packets %v, want matched=0 dropped=0", fi.Packets)
	}
	in := roce(t, "02:00:00:00:00:20", "02:00:00:00:00:10", "10.0.1.1", 1000, 0)
	p0.Inject(in, in, in)
	eventually(t, "3 frames dropped by the fault", func() bool {
		s, err := c.Telemetry(ctx)
		return err == nil && telemetry.Sum(s, "fault_packets_total", telemetry.Label{Name: "event", Value: "dropped"}, telemetry.Label{Name: "target", Value: "sw1:p2"}) == 3
	})
	var out []emu.Written
	written := func() int { out = append(out, p1.Written()...); return len(out) }
	if got := written(); got != 0 {
		t.Errorf("%d frames written through 100%% loss", got)
	}
	list, err := c.Faults(ctx)
	if err != nil || len(list) != 1 || list[0].Packets["dropped"] != 3 {
		t.Errorf("Faults = %+v, %v", list, err)
	}
	if _, err := c.RemoveFault(ctx, "f7"); !isStatus(err, 404) {
		t.Errorf("RemoveFault(f7) = %v, want 404", err)
	}
	if _, err := c.RemoveFault(ctx, "f1"); err != nil {
		t.Fatal(err)
	}
	p0.Inject(in, in, in)
	eventually(t, "3 frames forwarded after the fault was removed", func() bool { return written() == 3 })

	st, err := c.AddFault(ctx, "p2", spec(t, "storm prio 3 interval 10us"))
	if err != nil {
		t.Fatal(err)
	}
	if st.ID != "f2" {
		t.Errorf("storm id %s, want f2", st.ID)
	}
	eventually(t, "storm frames", func() bool { return written() > 8 })
	if _, err := c.AddFault(ctx, "all", spec(t, "delay 10us")); err != nil {
		t.Fatal(err)
	}
	if n, err := c.ClearFaults(ctx); err != nil || n != 2 {
		t.Errorf("ClearFaults = %d, %v; want 2", n, err)
	}
	var pfc int
	for _, wr := range out[3:] {
		var p wire.Packet
		if err := p.Decode(wr.Frame); err != nil {
			t.Fatal(err)
		}
		if p.Kind == wire.KindPFC && p.DstMAC == wire.PFCDstMAC && p.ClassEnable == 1<<3 {
			pfc++
		}
	}
	if pfc == 0 {
		t.Error("the storm wrote no PFC XOFF for priority 3 to the PFC address")
	}
	if list, err := c.Faults(ctx); err != nil || len(list) != 0 {
		t.Errorf("after ClearFaults: %+v, %v", list, err)
	}
}

// spec parses text, as the CLI does before it calls the node.
func spec(t *testing.T, text string) faults.Spec {
	t.Helper()
	s, err := faults.ParseSpec(text)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
