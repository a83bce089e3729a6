package node_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gopacket/gopacket/pcapgo"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/lab/emulation/datapath/emu"
	"github.com/rocelab/rocelab/lab/emulation/node"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
	"github.com/rocelab/rocelab/wire"
)

// TestAPI runs a switch node over in-memory ports and drives it through
// its Unix-socket API: health, info, telemetry, a capture, errors and
// shutdown.
func TestAPI(t *testing.T) {
	dir := t.TempDir()
	socket := filepath.Join(dir, "sw1.sock")
	cfg := switchConfig(socket)
	w := emu.NewMemWaiter()
	p0, p1 := w.NewPort(), w.NewPort()
	n, err := node.New(cfg, node.IO{Ports: []emu.PortIO{p0, p1}, Waiter: w}, nil)
	if err != nil {
		t.Fatal(err)
	}
	stop := runNode(t, n)
	c := nodeapi.NewClient(socket)
	defer c.Close()
	waitHealthy(t, c)
	ctx := t.Context()

	fi, err := os.Stat(socket)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v, want 0600", fi.Mode().Perm())
	}
	h, err := c.Health(ctx)
	if err != nil || h.Status != "ok" || h.Name != "sw1" || h.Kind != nodeapi.KindSwitch {
		t.Errorf("Health = %+v, %v", h, err)
	}

	pcap := filepath.Join(dir, "p2.pcap")
	st, err := c.StartCapture(ctx, nodeapi.CaptureRequest{Port: "sw1-p2", File: pcap, MaxFrames: 2})
	if err != nil {
		t.Fatal(err)
	}
	if st.Dir != "both" || st.Done {
		t.Errorf("capture started as %+v", st)
	}
	if _, err := c.StartCapture(ctx, nodeapi.CaptureRequest{Port: "1", File: pcap}); !isStatus(err, 409) {
		t.Errorf("second capture on the port: %v, want 409", err)
	}
	if _, err := c.StartCapture(ctx, nodeapi.CaptureRequest{Port: "nope", File: pcap}); !isStatus(err, 400) {
		t.Errorf("capture on an unknown port: %v, want 400", err)
	}
	if _, err := c.StopCapture(ctx, "sw1-p1"); !isStatus(err, 404) {
		t.Errorf("stopping no capture: %v, want 404", err)
	}

	in := roce(t, "02:00:00:00:00:20", "02:00:00:00:00:10", "10.0.1.1", 1000, 0)
	p0.Inject(in, in, in)
	eventually(t, "3 frames out of port 2", func() bool {
		s, err := c.Telemetry(ctx)
		return err == nil && telemetry.Sum(s, "switch_port_tx_packets_total", telemetry.Label{Name: "port", Value: "1"}) == 3 &&
			telemetry.Sum(s, "emu_tx_frames_total", telemetry.Label{Name: "port", Value: "1"}) == 3
	})
	s, err := c.Telemetry(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := telemetry.Sum(s, "emu_rx_frames_total", telemetry.Label{Name: "ifname", Value: "sw1-p1"}); got != 3 {
		t.Errorf("emu_rx_frames_total{ifname=sw1-p1} = %v, want 3", got)
	}
	for _, smp := range s {
		if (smp.Name == "emu_scale_factor" || smp.Name == "emu_dilation_factor") && (smp.Kind != telemetry.Gauge || smp.Value != 1000) {
			t.Errorf("%s sample %+v", smp.Name, smp)
		}
	}
	// Asked for some names, the node sends those samples only.
	at, few, err := c.TelemetryAt(ctx, "switch_port_tx_packets_total", "emu_scale_factor")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]int{}
	for _, smp := range few {
		names[smp.Name]++
	}
	if len(names) != 2 || names["emu_scale_factor"] != 1 || at <= 0 ||
		telemetry.Sum(few, "switch_port_tx_packets_total", telemetry.Label{Name: "port", Value: "1"}) != 3 {
		t.Errorf("TelemetryAt(two names) at %v = %d samples of %v", at, len(few), names)
	}
	// The process's goroutines, for a soak to watch: at least the loop's
	// and the API server's.
	if g := telemetry.Sum(s, "node_goroutines", telemetry.Label{Name: "node", Value: "sw1"}); g < 2 {
		t.Errorf("node_goroutines{node=sw1} = %v, want the process's count (>= 2)", g)
	}

	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Scale != 1000 || len(info.Ports) != 2 || info.Ports[1].PeerMAC != "02:00:00:00:00:21" || info.Routes != 2 ||
		len(info.Captures) != 1 || !info.Captures[0].Done || info.Captures[0].Frames != 2 {
		t.Errorf("Info = %+v", info)
	}
	st, err = c.StopCapture(ctx, "sw1-p2")
	if err != nil || !st.Done || st.Frames != 2 || st.Error != "" {
		t.Errorf("StopCapture = %+v, %v", st, err)
	}
	checkPcap(t, pcap, len(in))

	if err := c.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Errorf("Run: %v", err)
	}
	if _, err := os.Stat(socket); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left behind: %v", err)
	}
	if _, err := c.Health(ctx); err == nil {
		t.Error("Health answered after shutdown")
	}
}

// checkPcap reads the capture: two forwarded frames, MACs rewritten, TTL
// decremented, one 100G serialization time apart in fabric time.
func checkPcap(t *testing.T, path string, frameLen int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var stamps []time.Time
	for {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			break
		}
		var p wire.Packet
		if err := p.Decode(data); err != nil {
			t.Fatal(err)
		}
		if p.SrcMAC != mustMAC(t, "02:00:00:00:00:11") || p.DstMAC != mustMAC(t, "02:00:00:00:00:21") || p.TTL != 63 {
			t.Errorf("captured %s", p.Summary())
		}
		stamps = append(stamps, ci.Timestamp)
	}
	if len(stamps) != 2 {
		t.Fatalf("capture holds %d frames, want 2", len(stamps))
	}
	ser := (100 * clock.Gbps).Serialize(wire.OnWireBytes(frameLen))
	if gap := stamps[1].Sub(stamps[0]); gap < time.Duration(ser/clock.Nanosecond)-time.Nanosecond || gap > time.Duration(ser/clock.Nanosecond)+time.Nanosecond {
		t.Errorf("captured frames %v apart, want the serialization time %v", gap, ser)
	}
}

func isStatus(err error, code int) bool {
	var e *nodeapi.APIError
	return errors.As(err, &e) && e.Status == code
}
