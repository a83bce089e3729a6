package node_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/lab/emulation/jobs"

	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/lab/emulation/datapath/emu"
	"github.com/rocelab/rocelab/lab/emulation/node"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
)

// TestGroup runs two switch nodes on one loop over in-memory ports: each
// forwards through its own ports, answers on its own socket with its own
// ports' telemetry (the loop's counters on the first member only, the
// clock on each), and
// /shutdown on either stops both.
func TestGroup(t *testing.T) {
	dir := t.TempDir()
	sw1 := switchConfig(filepath.Join(dir, "sw1.sock"))
	sw2 := switchConfig(filepath.Join(dir, "sw2.sock"))
	sw2.Name = "sw2"
	for i := range sw2.Ports {
		sw2.Ports[i].IfName = strings.Replace(sw2.Ports[i].IfName, "sw1", "sw2", 1)
	}
	w := emu.NewMemWaiter()
	a0, a1, b0, b1 := w.NewPort(), w.NewPort(), w.NewPort(), w.NewPort()
	ios := []node.IO{{Ports: []emu.PortIO{a0, a1}, Waiter: w}, {Ports: []emu.PortIO{b0, b1}}}
	g, err := node.NewGroup([]node.Config{sw1, sw2}, ios, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- g.Run(ctx) }()
	c1, c2 := nodeapi.NewClient(sw1.Socket), nodeapi.NewClient(sw2.Socket)
	defer c1.Close()
	defer c2.Close()
	waitHealthy(t, c1)
	waitHealthy(t, c2)

	// sw2's capture and fault sit on sw2's ports, not on the loop's first.
	pcap := filepath.Join(dir, "sw2-p2.pcap")
	if _, err := c2.StartCapture(t.Context(), nodeapi.CaptureRequest{Port: "sw2-p2", File: pcap, MaxFrames: 2}); err != nil {
		t.Fatal(err)
	}
	in := roce(t, "02:00:00:00:00:20", "02:00:00:00:00:10", "10.0.1.1", 1000, 0)
	a0.Inject(in)
	b0.Inject(in, in)
	// Written hands over what was written since it was last called.
	var outA, outB int
	eventually(t, "1 frame out of sw1's port 2, 2 out of sw2's", func() bool {
		outA, outB = outA+len(a1.Written()), outB+len(b1.Written())
		return outA == 1 && outB == 2
	})
	eventually(t, "sw2's capture of 2 frames done", func() bool {
		st, err := c2.StopCapture(t.Context(), "sw2-p2")
		return err == nil && st.Done && st.Frames == 2
	})
	checkPcap(t, pcap, len(in))
	if _, err := c2.AddFault(t.Context(), "sw2-p2", spec(t, "loss 100%")); err != nil {
		t.Fatal(err)
	}
	a0.Inject(in)
	b0.Inject(in)
	eventually(t, "sw1 forwards its second frame", func() bool {
		outA, outB = outA+len(a1.Written()), outB+len(b1.Written())
		return outA == 2
	})
	if outB += len(b1.Written()); outB != 2 {
		t.Errorf("sw2 forwarded %d frames through its 100%% loss, want 2 (the ones before it)", outB)
	}

	for _, tc := range []struct {
		c        *nodeapi.Client
		name     string
		tx, sent float64 // frames the loop wrote, packets the model sent (the fault dropped the difference)
		withLoop bool
	}{{c1, "sw1", 2, 2, true}, {c2, "sw2", 2, 3, false}} {
		s, err := tc.c.Telemetry(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		me := telemetry.Label{Name: "node", Value: tc.name}
		if got := telemetry.Sum(s, "emu_tx_frames_total", me, telemetry.Label{Name: "port", Value: "1"}); got != tc.tx {
			t.Errorf("%s: emu_tx_frames_total{port=1} = %v, want %v", tc.name, got, tc.tx)
		}
		if got := telemetry.Sum(s, "switch_port_tx_packets_total", telemetry.Label{Name: "port", Value: "1"}); got != tc.sent {
			t.Errorf("%s: switch_port_tx_packets_total{port=1} = %v, want %v", tc.name, got, tc.sent)
		}
		ports, loops := map[string]bool{}, 0
		for _, smp := range s {
			if smp.Name == "emu_rx_frames_total" {
				ports[smp.Label("ifname")] = true
				if smp.Label("node") != tc.name {
					t.Errorf("%s reports %s's port %s", tc.name, smp.Label("node"), smp.Label("ifname"))
				}
			}
			if smp.Name == "emu_events_total" || smp.Name == "node_goroutines" {
				loops++
			}
		}
		// Every member reports its clock once: real-unit rates divide by
		// the rate of their own node's fabric time.
		for _, name := range []string{"emu_fabric_seconds_total", "emu_scale_factor"} {
			var got []telemetry.Sample
			for _, smp := range s {
				if smp.Name == name {
					got = append(got, smp)
				}
			}
			if len(got) != 1 || got[0].Label("node") != tc.name || got[0].Value <= 0 {
				t.Errorf("%s reports %s as %v, want once, node=%s, above 0", tc.name, name, got, tc.name)
			}
		}
		if len(ports) != 2 || !ports[tc.name+"-p1"] || !ports[tc.name+"-p2"] {
			t.Errorf("%s reports the ports %v, want its own two", tc.name, ports)
		}
		if (loops == 2) != tc.withLoop || (loops != 0) != tc.withLoop {
			t.Errorf("%s reports the loop's and the process's counters %d times, want them: %v", tc.name, loops, tc.withLoop)
		}
	}

	if err := c2.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Errorf("Run: %v", err)
	}
	for _, sock := range []string{sw1.Socket, sw2.Socket} {
		if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("socket %s left behind: %v", sock, err)
		}
	}
}

// TestGroupRefuses: a group holds switches of one clock only.
func TestGroupRefuses(t *testing.T) {
	dir := t.TempDir()
	sw1 := switchConfig(filepath.Join(dir, "sw1.sock"))
	other := switchConfig(filepath.Join(dir, "sw2.sock"))
	other.Name, other.Scale = "sw2", 2000
	seeded := switchConfig(filepath.Join(dir, "sw3.sock"))
	seeded.Name, seeded.Seed = "sw3", 99
	socketed := switchConfig(filepath.Join(dir, "sw4.sock"))
	socketed.Name, socketed.SocketLinks = "sw4", true
	w := emu.NewMemWaiter()
	ios := func() []node.IO {
		return []node.IO{{Ports: []emu.PortIO{w.NewPort(), w.NewPort()}, Waiter: w}, {Ports: []emu.PortIO{w.NewPort(), w.NewPort()}}}
	}
	for _, tc := range []struct {
		name string
		cfgs []node.Config
		ios  []node.IO
		want string
	}{
		{"no members", nil, nil, "0 configurations"},
		{"another scale", []node.Config{sw1, other}, ios(), "one loop runs one clock"},
		{"another seed", []node.Config{sw1, seeded}, ios(), "one loop runs one clock"},
		{"socket links on one member", []node.Config{sw1, socketed}, ios(), "one loop carries its links one way"},
		{"ports missing", []node.Config{sw1, other}, []node.IO{{Waiter: w}, {}}, "0 port I/Os for 2 ports"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := node.NewGroup(tc.cfgs, tc.ios, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewGroup: %v, want %q", err, tc.want)
			}
		})
	}
}

// TestGroupEndpoints runs two endpoint nodes cabled to each other in one
// group: checked RDMA between them, each NIC on its own socket.
func TestGroupEndpoints(t *testing.T) {
	dir := t.TempDir()
	w := emu.NewMemWaiter()
	pa, pb := w.NewPort(), w.NewPort()
	emu.Join(pa, pb)
	h1 := endpointConfig(dir, 1, []string{hostMAC(2, 0)})
	h2 := endpointConfig(dir, 2, []string{hostMAC(1, 0)})
	// One loop serves both: dilate more than testScale, so that a loaded
	// machine (or the race detector) keeps it on time.
	h1.Scale, h2.Scale = 5*testScale, 5*testScale
	defer runGroup(t, []node.Config{h1, h2}, []node.IO{{Ports: []emu.PortIO{pa}, Waiter: w}, {Ports: []emu.PortIO{pb}}})()
	a, b := nodeapi.NewClient(h1.Socket), nodeapi.NewClient(h2.Socket)
	defer a.Close()
	defer b.Close()
	waitHealthy(t, a)
	waitHealthy(t, b)
	for _, tc := range []struct {
		name string
		spec jobs.PerfSpec
	}{
		{"write", jobs.PerfSpec{Op: "write", Size: 65536, Iterations: 100, QPs: 2, Seed: 21}},
		{"send metaroce", jobs.PerfSpec{Op: "send", Size: 8192, Iterations: 100, Mode: endpoint.ModeMetaRoCE, Seed: 22}},
	} {
		rep, err := jobs.RunPerf(t.Context(), jobs.NICRef{Node: "h1", NIC: "gpu0", Client: a}, jobs.NICRef{Node: "h2", NIC: "gpu0", Client: b}, tc.spec, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if r := rep.Client; r.Messages != int64(tc.spec.Iterations*max(tc.spec.QPs, 1)) || !rep.Checked || rep.WrongBytes != 0 {
			t.Errorf("%s: %d messages, checked %v, %d wrong bytes", tc.name, r.Messages, rep.Checked, rep.WrongBytes)
		}
	}
	info, err := b.Info(t.Context())
	if err != nil || len(info.Ports) != 1 || info.Ports[0].MAC != hostMAC(2, 0) {
		t.Errorf("h2's Info: %+v, %v; want its own port and MAC", info, err)
	}
}

// TestGroupLinksInMemory: a link between two members of a group carries
// its frames in memory (its sockets see nothing; the receiving member
// counts them as in-loop frames), unless the members' Config.SocketLinks
// says to use the sockets.
func TestGroupLinksInMemory(t *testing.T) {
	for _, socketLinks := range []bool{false, true} {
		t.Run(map[bool]string{false: "in memory", true: "through the sockets"}[socketLinks], func(t *testing.T) {
			dir := t.TempDir()
			sw1 := switchConfig(filepath.Join(dir, "sw1.sock"))
			sw2 := switchConfig(filepath.Join(dir, "sw2.sock"))
			sw2.Name = "sw2"
			// sw1's port 2 is cabled to sw2's port 1.
			sw1.Ports[1].PeerMAC = "02:00:00:00:00:30"
			sw2.Ports[0].IfName, sw2.Ports[0].MAC, sw2.Ports[0].PeerMAC = "sw2-p1", "02:00:00:00:00:30", "02:00:00:00:00:11"
			sw2.Ports[1].IfName, sw2.Ports[1].MAC, sw2.Ports[1].PeerMAC = "sw2-p2", "02:00:00:00:00:31", "02:00:00:00:00:41"
			sw1.SocketLinks, sw2.SocketLinks = socketLinks, socketLinks
			w := emu.NewMemWaiter()
			a0, a1, b0, b1 := w.NewPort(), w.NewPort(), w.NewPort(), w.NewPort()
			emu.Join(a1, b0)
			ios := []node.IO{{Ports: []emu.PortIO{a0, a1}, Waiter: w}, {Ports: []emu.PortIO{b0, b1}}}
			defer runGroup(t, []node.Config{sw1, sw2}, ios)()
			c2 := nodeapi.NewClient(sw2.Socket)
			defer c2.Close()
			waitHealthy(t, c2)

			a0.Inject(roce(t, "02:00:00:00:00:20", "02:00:00:00:00:10", "10.0.1.1", 1000, 0), roce(t, "02:00:00:00:00:20", "02:00:00:00:00:10", "10.0.1.1", 1000, 1))
			var out int
			eventually(t, "2 frames out of sw2's port 2", func() bool {
				out += len(b1.Written())
				return out == 2
			})
			cable := len(a1.Written()) + len(b0.Written())
			s, err := c2.Telemetry(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			inLoop := telemetry.Sum(s, "emu_rx_inloop_frames_total", telemetry.Label{Name: "ifname", Value: "sw2-p1"})
			wantCable, wantInLoop := 0, 2.0
			if socketLinks {
				wantCable, wantInLoop = 2, 0
			}
			if cable != wantCable || inLoop != wantInLoop {
				t.Errorf("the cable's sockets carried %d frames and sw2 counted %v in-loop; want %d and %v", cable, inLoop, wantCable, wantInLoop)
			}
		})
	}
}

// runGroup builds the group of cfgs over ios and runs it; the function
// returned stops it and checks that Run ended without an error.
func runGroup(t *testing.T, cfgs []node.Config, ios []node.IO) (stop func()) {
	t.Helper()
	g, err := node.NewGroup(cfgs, ios, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() { errc <- g.Run(ctx) }()
	return func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
}
