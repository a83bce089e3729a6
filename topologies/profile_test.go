package topologies

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rocelab/rocelab/core/clock"
)

func TestDefaultBE(t *testing.T) {
	p, ok := BuiltinProfile(DefaultBE)
	if !ok {
		t.Fatal("no default-be")
	}
	if p.DSCP[26] != 3 || p.DSCP[48] != 6 || p.DSCP[0] != 0 {
		t.Errorf("DSCP map: 26→%d 48→%d", p.DSCP[26], p.DSCP[48])
	}
	if !p.PFC.Lossless[3] || p.PFC.LosslessCount() != 1 {
		t.Errorf("lossless %v", p.PFC.Lossless)
	}
	if !p.Scheduler.Strict[6] || p.Scheduler.Strict[3] || p.Scheduler.Weights[3] != 1 {
		t.Errorf("scheduler %+v", p.Scheduler)
	}
	if p.PFC.Alpha != 0.125 || p.PFC.Reserve != 4096 || p.PFC.XONOffset != 3072 || !p.PFC.HeadroomAuto {
		t.Errorf("pfc %+v", p.PFC)
	}
	// WRED scales with rate from 400KB/1600KB at 100G.
	kmin, kmax := p.ECN[3].At(400 * clock.Gbps)
	if kmin != 1_600_000 || kmax != 6_400_000 {
		t.Errorf("ECN at 400G = %d, %d", kmin, kmax)
	}
	kmin, kmax = p.ECN[3].At(25 * clock.Gbps)
	if kmin != 100_000 || kmax != 400_000 {
		t.Errorf("ECN at 25G = %d, %d", kmin, kmax)
	}
	// Headroom: 3 × 400G × 1us = 150000 bytes, plus two 4200-byte frames with overhead.
	if got := p.PFC.HeadroomFor(400*clock.Gbps, clock.Microsecond, 4200); got != 150_000+2*(4200+38) {
		t.Errorf("HeadroomFor = %d", got)
	}
	fe, _ := BuiltinProfile(DefaultFE)
	if fe.PFC.Enabled() {
		t.Error("default-fe has lossless classes")
	}
}

func TestProfileOverride(t *testing.T) {
	src := `name: p
profiles:
  shallow:
    buffer: 8MiB
    dscp: {10: 2}
    ecn:
      0: off
      3: {kmin: 50KB, kmax: 200KB, mark: enqueue, scale: off}
    pfc:
      lossless: [3, 4]
      xoff: 400KB
      headroom: 100KB
      watchdog: {detect: 50ms, recover: 100ms, action: ignore}
    scheduler:
      strict: [7]
      weights: {3: 4, 6: 2}
    trim: {tc: 1, threshold: 1MB, size: 128}
    queue-limit: {0: 2MB}
    ecmp: {hash: 5-tuple+qp, spray: [24, 26], spray-mode: random}
  child: {base: shallow, pfc: off}
nodes:
  h1: {kind: host, frontend: false}
  h2: {kind: host, frontend: false}
  s1: {kind: switch, role: rtsw, profile: shallow}
  s2: {kind: switch, role: rtsw, profile: child}
links:
  - h1:gpu0 -- s1
  - h2:gpu0 -- s2
  - s1 -- s2
`
	topo, err := Parse("p.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	p := topo.Node("s1").Profile
	want, _ := BuiltinProfile(DefaultBE)
	want.Name = "shallow"
	want.Buffer = 8 << 20
	want.DSCP[10] = 2
	want.ECN[0].Enabled = false
	want.ECN[3] = ECN{Enabled: true, Kmin: 50_000, Kmax: 200_000, Pmax: 0.2, Mark: MarkEnqueue}
	want.PFC.Lossless[4] = true
	want.PFC.Mode, want.PFC.XOFF = ThresholdStatic, 400_000
	want.PFC.HeadroomAuto, want.PFC.Headroom = false, 100_000
	want.PFC.Watchdog = Watchdog{Enabled: true, Detect: 50 * clock.Millisecond, Recover: 100 * clock.Millisecond, Action: WatchdogIgnore}
	want.Scheduler = Scheduler{Strict: [NumTC]bool{7: true}, Weights: [NumTC]int{1, 1, 1, 4, 1, 1, 2, 0}}
	want.Trim = &Trim{TC: 1, Threshold: 1_000_000, Size: 128, To: 7}
	want.QueueLimit[0] = 2_000_000
	want.ECMP = ECMP{QPAware: true, Spray: []int{24, 26}, SprayRandom: true}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("profile (-want +got):\n%s", diff)
	}
	if got := topo.Node("s1").Port("p1").Headroom; got != 100_000 {
		t.Errorf("fixed headroom on port = %d", got)
	}
	child := topo.Node("s2").Profile
	if child.PFC.Enabled() || child.Buffer != 8<<20 || child.Name != "child" {
		t.Errorf("child profile: lossless %v buffer %d", child.PFC.Lossless, child.Buffer)
	}
	if topo.Node("s2").Port("p1").Headroom != 0 {
		t.Error("headroom on a switch without PFC")
	}
	if e := topo.Node("s1").Port("p1").ECN(3); e.Kmin != 50_000 {
		t.Errorf("absolute ECN thresholds scaled: %+v", e)
	}
}
