package perftest_test

import (
	"net/netip"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/endpoint/cc"
	"github.com/rocelab/rocelab/endpoint/cc/none"
	"github.com/rocelab/rocelab/endpoint/perftest"
	"github.com/rocelab/rocelab/switchmodel"
	"github.com/rocelab/rocelab/wire/pipe"
)

// pair is two NICs through one switch, 1 µs cables.
func pair(t *testing.T) (*sim.Engine, *endpoint.NIC, *endpoint.NIC) {
	e := sim.New(1)
	sw, err := switchmodel.New(switchmodel.Options{Name: "sw", Config: switchmodel.DefaultConfig(), Sched: e,
		Ports: []switchmodel.PortSpec{{Rate: 100 * clock.Gbps, Delay: clock.Microsecond}, {Rate: 100 * clock.Gbps, Delay: clock.Microsecond}}})
	if err != nil {
		t.Fatal(err)
	}
	var nics []*endpoint.NIC
	for i := range 2 {
		ip := netip.AddrFrom4([4]byte{10, 0, 0, byte(i + 1)})
		n, err := endpoint.NewNIC(endpoint.Options{Name: ip.String(), Sched: e, IP: ip, CC: cc.NewRegistry(none.Algorithm())})
		if err != nil {
			t.Fatal(err)
		}
		n.Attach(pipe.New(e, clock.Microsecond, sw.Port(i)))
		sw.Attach(i, pipe.New(e, clock.Microsecond, n))
		if err := sw.AddRoute(netip.PrefixFrom(ip, 32), i); err != nil {
			t.Fatal(err)
		}
		nics = append(nics, n)
	}
	return e, nics[0], nics[1]
}

func TestPerftest(t *testing.T) {
	tests := []struct {
		cfg          perftest.Config
		minBW, maxBW float64        // Gb/s
		minLat       clock.Duration // median
		maxLat       clock.Duration
	}{
		{cfg: perftest.Config{Op: perftest.Write, Size: 65536, Iterations: 2000}, minBW: 85, maxBW: 100},
		{cfg: perftest.Config{Op: perftest.Read, Size: 65536, Iterations: 2000, QPs: 2}, minBW: 85, maxBW: 100},
		{cfg: perftest.Config{Op: perftest.Send, Size: 4096, Iterations: 5000, QP: endpoint.QPConfig{Mode: endpoint.ModeMetaRoCE}}, minBW: 80, maxBW: 100},
		// 64 B WRITE: two 1 µs cables and two store-and-forward
		// serializations of ~10 ns: a one-way latency just over 2 µs.
		{cfg: perftest.Config{Op: perftest.Write, Latency: true, Size: 64, Iterations: 100}, minLat: 2 * clock.Microsecond, maxLat: 2100 * clock.Nanosecond},
		{cfg: perftest.Config{Op: perftest.Send, Latency: true, Size: 64, Iterations: 100}, minLat: 2 * clock.Microsecond, maxLat: 2100 * clock.Nanosecond},
		{cfg: perftest.Config{Op: perftest.Read, Latency: true, Size: 64, Iterations: 100}, minLat: 4 * clock.Microsecond, maxLat: 4200 * clock.Nanosecond},
	}
	for _, tc := range tests {
		name := tc.cfg.Op.String()
		if tc.cfg.Latency {
			name += "_lat"
		} else {
			name += "_bw"
		}
		t.Run(name, func(t *testing.T) {
			e, c, s := pair(t)
			pt, err := perftest.Start(e, c, s, tc.cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			e.Run()
			if !pt.Done() || pt.Err() != nil {
				t.Fatalf("done %v err %v", pt.Done(), pt.Err())
			}
			r := pt.Result()
			t.Logf("%+v", r)
			if !tc.cfg.Latency && (r.BWGbps < tc.minBW || r.BWGbps > tc.maxBW) {
				t.Errorf("BW %.2f Gb/s outside [%v, %v]", r.BWGbps, tc.minBW, tc.maxBW)
			}
			if tc.cfg.Latency && (r.LatMedian < tc.minLat || r.LatMedian > tc.maxLat) {
				t.Errorf("median latency %v outside [%v, %v]", r.LatMedian, tc.minLat, tc.maxLat)
			}
		})
	}
}
