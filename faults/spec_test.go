package faults

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rocelab/rocelab/core/clock"
)

func TestParseSpec(t *testing.T) {
	us := clock.Microsecond
	for _, c := range []struct {
		in   string
		want Spec
		text string // String() of the result
	}{
		{"loss 1%", Spec{Params: BernoulliLoss{P: 0.01}}, "loss 1%"},
		{"loss 0.5", Spec{Params: BernoulliLoss{P: 0.5}}, "loss 50%"},
		{"loss random 2%", Spec{Params: BernoulliLoss{P: 0.02}}, "loss 2%"},
		{"loss 1% burst 4", Spec{Params: BurstLoss(0.01, 4)}, ""},
		{"loss gemodel 1% 30% 80% 0.1%", Spec{Params: GilbertElliott{P: 0.01, R: 0.3, LossBad: 0.8, LossGood: 0.001}}, "loss gemodel 1% 30% 80% 0.1%"},
		{"loss gemodel 5%", Spec{Params: GilbertElliott{P: 0.05, R: 0.95, LossBad: 1}}, "loss gemodel 5% 95% 100% 0%"},
		{"corrupt 0.1% bits 3", Spec{Params: Corruption{P: 0.001, Bits: 3}}, "corrupt 0.1% bits 3"},
		{"delay 10us jitter 2us dist normal", Spec{Params: Delay{Delay: 10 * us, Jitter: 2 * us, Dist: DistNormal}}, "delay 10us jitter 2us dist normal"},
		{"delay 10us 2us", Spec{Params: Delay{Delay: 10 * us, Jitter: 2 * us}}, "delay 10us jitter 2us dist uniform"},
		{"delay 1.5ms jitter 100ns distribution pareto alpha 4 reorder 5% hold 20us",
			Spec{Params: Delay{Delay: 1500 * us, Jitter: 100 * clock.Nanosecond, Dist: DistPareto, Alpha: 4, Reorder: 0.05, Hold: 20 * us}},
			"delay 1.5ms jitter 100ns dist pareto alpha 4 reorder 5% hold 20us"},
		{"reorder 5%", Spec{Params: Delay{Reorder: 0.05}}, "reorder 5%"},
		{"dup 3%", Spec{Params: Duplication{P: 0.03}}, "duplicate 3%"},
		{"rate 100G", Spec{Params: RateLimit{Rate: 100 * clock.Gbps, Queue: DefaultRateQueue}}, "rate 100G"},
		{"rate 25Gbps queue 64KiB", Spec{Params: RateLimit{Rate: 25 * clock.Gbps, Queue: 65536}}, "rate 25G queue 65536"},
		// issue 51: rates and sizes as topologies take them and rocelab prints them
		{"rate 1T", Spec{Params: RateLimit{Rate: 1000 * clock.Gbps, Queue: DefaultRateQueue}}, "rate 1000G"},
		{"rate 400Gb/s", Spec{Params: RateLimit{Rate: 400 * clock.Gbps, Queue: DefaultRateQueue}}, "rate 400G"},
		{"rate 400 Gb/s queue 2.74 MB", Spec{Params: RateLimit{Rate: 400 * clock.Gbps, Queue: 2_740_000}}, "rate 400G queue 2740000"},
		{"down", Spec{Params: Flap{}}, "down"},
		{"flap period 100ms down 20ms", Spec{Params: Flap{Period: 100 * clock.Millisecond, Down: 20 * clock.Millisecond}}, "flap period 100ms down 20ms"},
		{"storm", Spec{Params: PFCStorm{Prio: 3, Quanta: 0xFFFF, Interval: 10 * us}}, "storm prio 3 quanta 65535 interval 10us"},
		{"storm quanta 65535 interval 10us prio 4 for 1ms", Spec{Params: PFCStorm{Prio: 4, Quanta: 0xFFFF, Interval: 10 * us, For: clock.Millisecond}}, ""},
		{"ecn-off match dscp 26", Spec{Params: ECNOff{}, Match: Match{DSCP: 1 << 26}}, "ecn-off match dscp 26"},
		{"pfc-off prio 3", Spec{Params: PFCOff{Prio: 3}}, "pfc-off prio 3"},
		{"pfc-off 2", Spec{Params: PFCOff{Prio: 2}}, "pfc-off prio 2"},
		{"dscp-map 26:0 48:46", Spec{Params: NewDSCPMap([2]uint8{26, 0}, [2]uint8{48, 46})}, "dscp-map 26:0 48:46"},
		{"loss 10% match proto roce,cnp pcp 3,4", Spec{Params: BernoulliLoss{P: 0.1}, Match: Match{Proto: ProtoRoCE | ProtoCNP, PCP: 1<<3 | 1<<4}}, "loss 10% match pcp 3,4 proto roce,cnp"},
		{"elephant dst 10.0.0.9 rate 40G on 1ms off 1ms", Spec{Params: func() Traffic {
			m := DefaultTraffic(netip.MustParseAddr("10.0.0.9"))
			m.Rate, m.On, m.Off = 40*clock.Gbps, clock.Millisecond, clock.Millisecond
			return m
		}()}, ""},
		{"incast dst fd00::9 burst 64KB period 100us size 4096", Spec{Params: func() Traffic {
			m := DefaultTraffic(netip.MustParseAddr("fd00::9"))
			m.Incast, m.Burst, m.Period, m.Size = true, 64000, 100*us, 4096
			return m
		}()}, ""},
	} {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseSpec(c.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
				t.Errorf("-want +got:\n%s", diff)
			}
			if c.text != "" && got.String() != c.text {
				t.Errorf("String() = %q, want %q", got.String(), c.text)
			}
			// String parses back to the same Spec.
			again, err := ParseSpec(got.String())
			if err != nil {
				t.Fatalf("reparse %q: %v", got.String(), err)
			}
			if again.String() != got.String() {
				t.Errorf("round trip: %q → %q", got.String(), again.String())
			}
		})
	}
}

func TestParseSpecErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "empty fault spec"},
		{"lose 1%", `unknown fault kind "lose"`},
		{"loss", "want a probability"},
		{"loss 1x", "want a percentage"},
		{"loss 150%", "out of [0%, 100%]"},
		{"loss 1% burst 0.5", "mean burst length ≥ 1"},
		{"loss 1% bursts 4", `unknown parameter "bursts"`},
		{"loss gemodel", "1 to 4 probabilities"},
		{"loss gemodel 1% 2% 3% 4% 5%", "1 to 4 probabilities"},
		{"delay", "want a delay"},
		{"delay 10", "needs a unit"},
		{"delay 10us jitter", "jitter: missing value"},
		{"delay 10us dist normal", "needs a jitter"},
		{"delay 10us jitter 2us dist gamma", "want uniform, normal or pareto"},
		{"delay 10us jitter 2us dist pareto alpha 2", "Pareto shape > 2"},
		{"delay 10us hold 5us", "give reorder first"},
		{"delay 10us jitter 1us jitter 2us", "jitter given twice"},
		{"rate 100", "needs a unit"},
		{"rate 0", "must be positive"},
		{"rate 400GB/s", "is bytes"},
		{"rate fast", "want a number and a unit"},
		{"rate 100G queue 0", "positive size"},
		{"down now", "takes no parameters"},
		{"flap period 100ms", "missing down"},
		{"flap period 10ms down 20ms", "0 < down ≤ period"},
		{"storm prio 9", "0..7"},
		{"storm quanta 70000", "0..65535"},
		{"storm interval 0s", "interval must be positive"},
		{"pfc-off", "want one priority"},
		{"dscp-map 26", "FROM:TO"},
		{"dscp-map 26:64", "0..63"},
		{"dscp-map 26:1 26:2", "rewritten twice"},
		{"elephant rate 10G", "missing dst"},
		{"elephant dst nohost", "not an IP address"},
		{"elephant dst 10.0.0.1 on 1ms", "on and off go together"},
		{"incast dst 10.0.0.1 period 1ms", "missing burst"},
		{"loss 1% match", "want at least one of"},
		{"loss 1% match dscp 99", "0..63"},
		{"loss 1% match proto tcp", `unknown protocol "tcp"`},
		{"loss 1% match color red", `unknown clause "color"`},
	} {
		_, err := ParseSpec(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseSpec(%q) = %v, want an error containing %q", c.in, err, c.want)
		}
	}
}

// TestSpecNewErrors: building needs what the model needs, and a
// generator takes no match.
func TestSpecNewErrors(t *testing.T) {
	for _, c := range []struct {
		spec string
		env  Env
		want string
	}{
		{"loss 1%", Env{}, "no random source"},
		{"delay 1us", Env{Rand: rng(1)}, "no scheduler"},
		{"elephant dst 10.0.0.1", Env{Sched: nil}, "no scheduler"},
	} {
		s, err := ParseSpec(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.New(c.env); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.spec, err, c.want)
		}
	}
}

func TestSpecText(t *testing.T) {
	var s Spec
	if err := s.UnmarshalText([]byte("loss 2% match dscp 26")); err != nil {
		t.Fatal(err)
	}
	b, _ := s.MarshalText()
	if string(b) != "loss 2% match dscp 26" {
		t.Errorf("MarshalText = %q", b)
	}
	if err := s.UnmarshalText([]byte("loss")); err == nil {
		t.Error("bad spec accepted")
	}
}
