package fabric

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/switchmodel"
	"github.com/rocelab/rocelab/topologies"
)

func testPorts(n int, rate clock.Rate, delay clock.Duration, mtu int) []*topologies.Port {
	out := make([]*topologies.Port, n)
	for i := range out {
		out[i] = &topologies.Port{Name: "p", Index: i + 1, Rate: rate, Delay: delay, MTU: mtu}
	}
	return out
}

// wantDefaultBE is default-be on 100G ports of 1 µs and IP MTU 4200, spelled out.
func wantDefaultBE() switchmodel.Config {
	c := switchmodel.Config{
		BufferBytes: 32_000_000,
		MTU:         4200 + 18,
		CNPClass:    6,
		PFC: switchmodel.PFCConfig{
			LosslessPriorities: switchmodel.TCs(3),
			Alpha:              1.0 / 8,
			XOnOffset:          3 << 10,
			// 3 × 100G × 1 µs / 8 + 2 × (4200 + 38)
			Headroom: 37_500 + 8_476,
			Reserved: 4 << 10,
			Quanta:   0xFFFF,
			Watchdog: switchmodel.WatchdogConfig{
				Detect:  200 * clock.Millisecond,
				Recover: 200 * clock.Millisecond,
				Action:  switchmodel.WatchdogDrop,
			},
		},
		Sched: switchmodel.SchedConfig{
			Strict:  switchmodel.TCs(6, 7),
			Weights: [8]int{1, 1, 1, 1, 1, 1, 0, 0},
			Quantum: 4218 + 4 + 8 + 12,
		},
		Trim: switchmodel.TrimConfig{Bytes: 64, Priority: 7, DSCP: 63},
	}
	c.DSCPToTC[26], c.DSCPToTC[48], c.DSCPToTC[56] = 3, 6, 7
	for i := range c.PCPToTC {
		c.PCPToTC[i] = uint8(i)
	}
	wred := switchmodel.ECNConfig{Enabled: true, Kmin: 400_000, Kmax: 1_600_000, Pmax: 0.2, AtDequeue: true, RefRate: 100 * clock.Gbps}
	for tc := range c.ECN {
		c.ECN[tc].AtDequeue = true
	}
	c.ECN[0], c.ECN[3] = wred, wred
	return c
}

func TestSwitchConfig(t *testing.T) {
	g100 := testPorts(4, 100*clock.Gbps, clock.Microsecond, 4200)
	mixed := append(testPorts(2, 100*clock.Gbps, clock.Microsecond, 4200), testPorts(2, 400*clock.Gbps, clock.Microsecond, 4200)...)
	tests := []struct {
		name    string
		base    string
		ports   []*topologies.Port
		profile func(p *topologies.Profile)
		want    func(c *switchmodel.Config)
		wantErr string
	}{
		{name: "default-be"},
		{
			name: "default-fe", base: topologies.DefaultFE,
			want: func(c *switchmodel.Config) {
				c.BufferBytes = 16_000_000
				c.PFC.LosslessPriorities = 0
				c.PFC.Headroom = 0
			},
		},
		{
			name:    "buffer and MTU",
			ports:   append(testPorts(1, 100*clock.Gbps, clock.Microsecond, 1500), testPorts(1, 100*clock.Gbps, clock.Microsecond, 9000)...),
			profile: func(p *topologies.Profile) { p.Buffer = 20_000_000; p.PFC.Lossless = [8]bool{} },
			want: func(c *switchmodel.Config) {
				c.BufferBytes = 20_000_000
				c.MTU = 9018
				c.Sched.Quantum = 9018 + 24
				c.PFC.LosslessPriorities = 0
				c.PFC.Headroom = 0
			},
		},
		{
			name: "DSCP map and CNP class",
			profile: func(p *topologies.Profile) {
				p.DSCP[10] = 2
				p.DSCP[48] = 5
			},
			want: func(c *switchmodel.Config) { c.DSCPToTC[10], c.DSCPToTC[48], c.CNPClass = 2, 5, 5 },
		},
		{
			name: "ECN enqueue, absolute thresholds",
			profile: func(p *topologies.Profile) {
				p.ECN[5] = topologies.ECN{Enabled: true, Kmin: 1000, Kmax: 5000, Pmax: 1, Mark: topologies.MarkEnqueue}
			},
			want: func(c *switchmodel.Config) {
				c.ECN[5] = switchmodel.ECNConfig{Enabled: true, Kmin: 1000, Kmax: 5000, Pmax: 1}
			},
		},
		{
			name: "ECN off keeps thresholds",
			profile: func(p *topologies.Profile) {
				p.ECN[3].Enabled = false
			},
			want: func(c *switchmodel.Config) { c.ECN[3].Enabled = false },
		},
		{
			name:    "lossless set",
			profile: func(p *topologies.Profile) { p.PFC.Lossless = [8]bool{3: true, 4: true} },
			want:    func(c *switchmodel.Config) { c.PFC.LosslessPriorities = switchmodel.TCs(3, 4) },
		},
		{
			name: "dynamic threshold knobs",
			profile: func(p *topologies.Profile) {
				p.PFC.Alpha, p.PFC.XONOffset, p.PFC.Reserve, p.PFC.PauseQuanta = 0.5, 6000, 8000, 1000
			},
			want: func(c *switchmodel.Config) {
				c.PFC.Alpha, c.PFC.XOnOffset, c.PFC.Reserved, c.PFC.Quanta = 0.5, 6000, 8000, 1000
			},
		},
		{
			name: "static threshold",
			profile: func(p *topologies.Profile) {
				p.PFC.Mode, p.PFC.XOFF = topologies.ThresholdStatic, 1_000_000
			},
			want: func(c *switchmodel.Config) { c.PFC.Alpha, c.PFC.XOffThreshold = 0, 1_000_000 },
		},
		{
			name:    "fixed headroom",
			ports:   mixed,
			profile: func(p *topologies.Profile) { p.PFC.HeadroomAuto, p.PFC.Headroom = false, 100_000 },
			want:    func(c *switchmodel.Config) { c.PFC.Headroom = 100_000 },
		},
		{
			name:  "auto headroom on mixed ports is left to the model",
			ports: mixed,
			want:  func(c *switchmodel.Config) { c.PFC.Headroom = 0 },
		},
		{
			name:  "auto headroom uniform at 400G",
			ports: testPorts(3, 400*clock.Gbps, 2*clock.Microsecond, 4200),
			// 3 × 400G × 2 µs / 8 + 2 × 4238
			want: func(c *switchmodel.Config) { c.PFC.Headroom = 300_000 + 8_476 },
		},
		{
			name: "watchdog ignore",
			profile: func(p *topologies.Profile) {
				p.PFC.Watchdog = topologies.Watchdog{Enabled: true, Detect: clock.Millisecond, Recover: 5 * clock.Millisecond, Action: topologies.WatchdogIgnore}
			},
			want: func(c *switchmodel.Config) {
				c.PFC.Watchdog = switchmodel.WatchdogConfig{Detect: clock.Millisecond, Recover: 5 * clock.Millisecond, Action: switchmodel.WatchdogIgnore}
			},
		},
		{
			name:    "watchdog off",
			profile: func(p *topologies.Profile) { p.PFC.Watchdog.Enabled = false },
			want:    func(c *switchmodel.Config) { c.PFC.Watchdog.Detect = 0 },
		},
		{
			name: "scheduler",
			profile: func(p *topologies.Profile) {
				p.Scheduler.Strict = [8]bool{7: true}
				p.Scheduler.Weights = [8]int{4, 1, 1, 2, 1, 1, 8, 0}
			},
			want: func(c *switchmodel.Config) {
				c.Sched.Strict = switchmodel.TCs(7)
				c.Sched.Weights = [8]int{4, 1, 1, 2, 1, 1, 8, 0}
			},
		},
		{
			name:    "trim",
			profile: func(p *topologies.Profile) { p.Trim = &topologies.Trim{TC: 0, Size: 128, To: 6} },
			want: func(c *switchmodel.Config) {
				c.Trim = switchmodel.TrimConfig{Classes: switchmodel.TCs(0), Bytes: 128, Priority: 6, DSCP: 63}
				c.DSCPToTC[63] = 6 // trimmed headers keep their class at the next hop
			},
		},
		{
			name: "ecmp",
			profile: func(p *topologies.Profile) {
				p.ECMP = topologies.ECMP{QPAware: true, Spray: []int{24, 26}, SprayRandom: true}
			},
			want: func(c *switchmodel.Config) {
				c.ECMP = switchmodel.ECMPConfig{QPAware: true, SprayDSCPs: []uint8{24, 26}, SprayRandom: true}
			},
		},
		{
			name: "queue limit on every lossy class",
			profile: func(p *topologies.Profile) {
				for tc := range p.QueueLimit {
					if !p.PFC.Lossless[tc] {
						p.QueueLimit[tc] = 1_000_000
					}
				}
			},
			want: func(c *switchmodel.Config) { c.EgressQueueLimit = 1_000_000 },
		},

		{name: "trim threshold", profile: func(p *topologies.Profile) { p.Trim = &topologies.Trim{TC: 0, Size: 64, To: 7, Threshold: 1000} }, wantErr: "trims only packets the buffer refuses"},
		{name: "trim lossless class", profile: func(p *topologies.Profile) { p.Trim = &topologies.Trim{TC: 3, Size: 64, To: 7} }, wantErr: "trimmed classes must be lossy"},
		{name: "queue limit on one class", profile: func(p *topologies.Profile) { p.QueueLimit[0] = 1_000_000 }, wantErr: "one limit for all lossy queues"},
		{
			name: "queue limits differ",
			profile: func(p *topologies.Profile) {
				for tc := range p.QueueLimit {
					if !p.PFC.Lossless[tc] {
						p.QueueLimit[tc] = int64(1_000_000 + tc)
					}
				}
			},
			wantErr: "classes 0 and 1 differ",
		},
		{name: "queue limit on lossless class", profile: func(p *topologies.Profile) { p.QueueLimit[3] = 1_000_000 }, wantErr: "does not limit lossless queues"},
		{name: "zero fixed headroom", profile: func(p *topologies.Profile) { p.PFC.HeadroomAuto, p.PFC.Headroom = false, 0 }, wantErr: "reads 0 as auto"},
		{name: "pause quanta", profile: func(p *topologies.Profile) { p.PFC.PauseQuanta = 70000 }, wantErr: "pause quanta 70000"},
		{name: "static xoff missing", profile: func(p *topologies.Profile) { p.PFC.Mode = topologies.ThresholdStatic }, wantErr: "static threshold with xoff 0"},
		{name: "DSCP class", profile: func(p *topologies.Profile) { p.DSCP[3] = 9 }, wantErr: "DSCP 3 maps to class 9"},
		{name: "watchdog without detect", profile: func(p *topologies.Profile) { p.PFC.Watchdog.Detect = 0 }, wantErr: "detect 0s"},
		{name: "buffer too small", profile: func(p *topologies.Profile) { p.Buffer = 200_000 }, wantErr: "leaves no shared pool"},
		{name: "ECN kmin above kmax", profile: func(p *topologies.Profile) { p.ECN[3].Kmin = 2_000_000 }, wantErr: "ECN of TC3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := tt.base
			if base == "" {
				base = topologies.DefaultBE
			}
			p, ok := topologies.BuiltinProfile(base)
			if !ok {
				t.Fatalf("no profile %s", base)
			}
			if tt.profile != nil {
				tt.profile(p)
			}
			ports := tt.ports
			if ports == nil {
				ports = g100
			}
			got, err := SwitchConfig(p, ports)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := wantDefaultBE()
			if tt.want != nil {
				tt.want(&want)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("config (-want +got):\n%s", d)
			}
		})
	}
}

// TestNodeConfigBuiltins converts every switch of every shipped topology.
func TestNodeConfigBuiltins(t *testing.T) {
	for _, name := range topologies.BuiltinNames() {
		topo, err := topologies.Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range topo.Nodes {
			if n.Kind != topologies.KindSwitch {
				continue
			}
			c, err := NodeConfig(n)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			// Where the model gets one headroom value, it is the one the
			// topology planned for every port.
			if c.PFC.Headroom != 0 {
				for _, p := range n.Ports {
					if p.Headroom != c.PFC.Headroom {
						t.Errorf("%s/%s/%s: headroom %d, topology planned %d", name, n.Name, p.Name, c.PFC.Headroom, p.Headroom)
					}
				}
			}
		}
	}
	if _, err := NodeConfig(&topologies.Node{Name: "h", Kind: topologies.KindHost}); err == nil {
		t.Error("NodeConfig of a host: no error")
	}
}
