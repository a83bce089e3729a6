package deploy_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/lab/emulation/datapath/afpacket"
	"github.com/rocelab/rocelab/topologies"
	"github.com/rocelab/rocelab/wire"
	"github.com/rocelab/rocelab/wire/capture"
)

// incastScale dilates incast's 100G links to 50 Mb/s (about 5,700 frames
// of 1 KiB per second): far below what the senders inject, so the
// receiver's port congests and the switch pauses the senders.
const incastScale = 2000

// injectWrites sends RoCEv2 RDMA WRITE Only frames (1 KiB, DSCP 26,
// ECT(0), valid ICRC) from sender's BE NIC to receiver's through the
// switch, from inside sender's namespace, for d.
func injectWrites(t *testing.T, l *deploy.Lab, tp *topologies.Topology, sender, receiver string, d time.Duration) int {
	t.Helper()
	sp, rp := tp.Node(sender).Ports[0], tp.Node(receiver).Ports[0]
	var ns string
	for _, n := range l.Nodes {
		if n.Name == sender {
			ns = n.NetNS
		}
	}
	c, err := afpacket.Open(ns, sp.IfName, &afpacket.Config{NoPromisc: true})
	if err != nil {
		t.Error(err)
		return 0
	}
	defer c.Close()
	p := wire.Packet{Kind: wire.KindRoCE, DSCP: 26, ECN: 2,
		SrcIP: sp.Addr.Addr(), DstIP: rp.Addr.Addr(), SrcPort: 49152 + uint16(len(sender)),
		Opcode: uint8(wire.OpWriteOnly), DestQP: 0x100, RKey: 0x1234, DMALen: 1024}
	copy(p.SrcMAC[:], sp.MAC)
	copy(p.DstMAC[:], sp.Peer.MAC)
	payload := bytes.Repeat([]byte{0x5a}, 1024)
	const batch = 16
	frames := make([][]byte, batch)
	sent := 0
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(time.Millisecond) {
		for i := range frames {
			p.PSN = uint32(sent+i) & 0xFFFFFF
			p.VA = uint64(sent+i) * 1024
			frames[i], err = wire.AppendFrame(frames[i][:0], &p, payload)
			if err != nil {
				t.Error(err)
				return sent
			}
		}
		n, err := c.WriteBatch(frames)
		sent += n
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("%s: write: %v", sender, err)
			return sent
		}
	}
	return sent
}

// TestCaptureIncast drives an incast through the incast topology's switch
// process (eight senders inject WRITEs at many times the dilated line
// rate), captures its receiver-facing and one sender-facing port, and
// checks the captures: RoCEv2 that tshark decodes, every ICRC correct by
// the project's own codec, and PFC pauses sent towards the sender.
func TestCaptureIncast(t *testing.T) {
	requireRoot(t)
	testenv.RequireTool(t, "tshark")
	root := runRoot(t)
	lab := labName(t, "capinc")
	tp, err := topologies.Builtin("incast")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deploy.Destroy(context.Background(), root, lab) })
	l, err := deploy.Deploy(t.Context(), deploy.Options{Topology: tp, LabName: lab, Root: root, Binary: binary(t), Scale: incastScale})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	type result struct {
		res deploy.CaptureResult
		err error
	}
	caps := map[string]*result{"sw1:p9": {}, "sw1:p1": {}}
	var wg sync.WaitGroup
	for target, r := range caps {
		file := filepath.Join(dir, strings.ReplaceAll(target, ":", "-")+".pcap")
		wg.Go(func() {
			r.res, r.err = deploy.Capture(t.Context(), root, lab, target, deploy.CaptureOptions{File: file, Duration: 3 * time.Second})
		})
	}
	time.Sleep(300 * time.Millisecond) // the captures start
	var iw sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for i := 1; i <= 8; i++ {
		iw.Go(func() {
			n := injectWrites(t, l, tp, "sender"+strconv.Itoa(i), "receiver", 1500*time.Millisecond)
			mu.Lock()
			total += n
			mu.Unlock()
		})
	}
	iw.Wait()
	wg.Wait()
	t.Logf("injected %d frames", total)
	for target, r := range caps {
		if r.err != nil {
			t.Fatalf("capture %s: %v", target, r.err)
		}
		t.Logf("%s: %d frames in %s", target, r.res.Frames, r.res.File)
		// A capture is the lab's traffic: private (0600 less the umask).
		if st, err := os.Stat(r.res.File); err != nil || st.Mode().Perm()&0o077 != 0 {
			t.Errorf("capture %s: mode %v (%v), want no access for group or others", r.res.File, st.Mode().Perm(), err)
		}
	}

	// The receiver's port sends the WRITEs on; the sender's receives them
	// and sends PFC pauses back.
	for target, wantPFC := range map[string]bool{"sw1:p9": false, "sw1:p1": true} {
		file := caps[target].res.File
		roce, ok, bad := checkICRC(t, file)
		if roce == 0 || bad != 0 || ok != roce {
			t.Errorf("%s: %d RoCEv2 frames, %d with a correct ICRC, %d bad", target, roce, ok, bad)
		}
		out, err := exec.Command("tshark", "-r", file, "-T", "fields", "-e", "infiniband.bth.opcode", "-e", "macc.cbfc.enbv", "-e", "ip.dsfield.dscp").Output()
		if err != nil {
			t.Fatalf("tshark %s: %v", file, err)
		}
		var ib, pfc int
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Split(line, "\t")
			if len(f) > 0 && f[0] == "10" {
				ib++
				if len(f) < 3 || f[2] != "26" {
					t.Errorf("%s: DSCP of a WRITE: %q", target, line)
					break
				}
			}
			if len(f) > 1 && f[1] != "" {
				pfc++
			}
		}
		t.Logf("%s: tshark: %d RDMA WRITE Only (opcode 10), %d PFC frames", target, ib, pfc)
		if ib == 0 || ib != roce {
			t.Errorf("%s: tshark decoded %d WRITEs, the capture has %d RoCEv2 frames", target, ib, roce)
		}
		if wantPFC && pfc == 0 {
			t.Errorf("%s: no PFC frames towards the sender during the incast", target)
		}
	}
}

// checkICRC counts the RoCEv2 frames of a capture and how many of them
// carry a correct ICRC (capture.Read's check).
func checkICRC(t *testing.T, file string) (roce, ok, bad int) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	err = capture.Read(f, func(d *capture.Decoded) error {
		if d.Packet.Kind != wire.KindRoCE {
			return nil
		}
		roce++
		switch d.ICRC {
		case capture.ICRCOK:
			ok++
		case capture.ICRCBad:
			bad++
		}
		return nil
	})
	if err != nil {
		t.Fatalf("read %s: %v", file, err)
	}
	return roce, ok, bad
}
