package flowsim

import (
	"strings"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/topologies"
	"github.com/rocelab/rocelab/wire"
)

// TestHierarchicalByHand runs a hierarchical all-reduce of 512 KiB over
// testdata/one-switch.yaml's 4 GPUs in groups of 2 and checks each
// phase's time against the one worked out by hand. No two flows share a
// link, so every write goes at 400 Gb/s; a write of B payload bytes puts
// w(B) bytes on the wire, lands after its path's propagation (2 µs) and
// one frame's store-and-forward at the switch, and completes 2 µs later.
// Every phase is a ring of 2 ranks, one write a step: the reduce-scatter
// and the all-gather one step of 256 KiB, the cross-group all-reduce of
// 256 KiB two steps of 128 KiB; a step waits for the previous one's
// arrival, and a phase ends with its last write's completion.
func TestHierarchicalByHand(t *testing.T) {
	l, err := Build(oneSwitch(t), Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	j, err := l.Hierarchical(HierSpec{GroupSize: 2, Size: 512 << 10})
	if err != nil {
		t.Fatal(err)
	}
	l.RunUntil(clock.Time(clock.Second))
	if !j.Done() || j.Err() != nil {
		t.Fatalf("done %v, err %v", j.Done(), j.Err())
	}
	const rate = 400 * clock.Gbps
	mtu := 4096 // endpoint.PayloadMTU(4200)
	ser := func(payload int) clock.Duration {
		return rate.Serialize(wire.MessageOnWire(payload, mtu, wire.RETHLen) + wire.ImmDtLen)
	}
	frame := rate.Serialize(wire.OnWireBytes(wire.EthernetLen + wire.IPv4MinLen + wire.UDPLen + wire.BTHLen + mtu + wire.ICRCLen))
	oneWay := 2*clock.Microsecond + frame
	back := 2 * clock.Microsecond
	step := func(payload int) clock.Duration { return ser(payload) + oneWay }
	want := [3]clock.Duration{
		step(256<<10) + back,
		2*step(128<<10) + back,
		step(256<<10) + back,
	}
	r := j.Result()
	for i := range want {
		// Ends are rounded up to the picosecond: a few of slack.
		if d := r.Phases[i] - want[i]; d < -2 || d > 2 {
			t.Errorf("phase %d took %v, by hand %v", i+1, r.Phases[i], want[i])
		}
	}
	if r.Time != r.Phases[0]+r.Phases[1]+r.Phases[2] || r.Ranks != 4 || r.Size != 512<<10 {
		t.Errorf("result %+v", r)
	}
}

// TestHierarchicalRefuses checks the specifications a hierarchical
// all-reduce cannot run, each refused with the reason.
func TestHierarchicalRefuses(t *testing.T) {
	l, err := Build(oneSwitch(t), Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		spec HierSpec
		want string
	}{
		{HierSpec{GroupSize: 3}, "not at least two groups of 3"},
		{HierSpec{GroupSize: 4}, "not at least two groups of 4"},
		{HierSpec{GroupSize: 2, Size: 4}, "size below 8 bytes"},
		{HierSpec{GroupSize: 2, Ranks: []string{"host1:gpu0", "host1:gpu1", "host2:gpu0", "host9:gpu0"}}, `no back-end NIC "host9:gpu0"`},
		{HierSpec{GroupSize: 2, Mode: "tcp"}, "tcp"},
	} {
		_, err := l.Hierarchical(tc.spec)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.spec, err, tc.want)
		}
	}
}

func oneSwitch(t *testing.T) *topologies.Topology {
	t.Helper()
	tp, err := topologies.Load("testdata/one-switch.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return tp
}
