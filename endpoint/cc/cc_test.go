package cc_test

import (
	"strings"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/endpoint/cc"
	"github.com/rocelab/rocelab/endpoint/cc/credit"
	"github.com/rocelab/rocelab/endpoint/cc/dcqcn"
	"github.com/rocelab/rocelab/endpoint/cc/none"
)

func TestRegistry(t *testing.T) {
	r := cc.NewRegistry(none.Algorithm(), dcqcn.Algorithm(), credit.Algorithm())
	if got := strings.Join(r.Names(), ","); got != "credit,dcqcn,none" {
		t.Errorf("names %q", got)
	}
	if _, err := r.Get("timely"); err == nil || !strings.Contains(err.Error(), "known: [credit dcqcn none]") {
		t.Errorf("Get(timely) err = %v", err)
	}
	env := cc.Env{Sched: sim.New(1), LineRate: 100 * clock.Gbps, MTU: 4096, SendGrant: func(cc.Grant) {}}
	for _, tc := range []struct {
		name     string
		receiver bool
	}{{"none", false}, {"dcqcn", false}, {"credit", true}} {
		a, err := r.Get(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		s, err := a.NewSender(env)
		if err != nil || s.Rate() != env.LineRate {
			t.Errorf("%s: sender %v, %v", tc.name, s, err)
		}
		rc, err := a.NewReceiver(env)
		if err != nil || (rc != nil) != tc.receiver {
			t.Errorf("%s: receiver %v, %v", tc.name, rc, err)
		}
	}
}

func TestNone(t *testing.T) {
	s, err := none.Algorithm().NewSender(cc.Env{LineRate: 400 * clock.Gbps})
	if err != nil {
		t.Fatal(err)
	}
	s.OnSend(1 << 20)
	s.OnFeedback(cc.Feedback{Kind: cc.CNP})
	if s.Rate() != 400*clock.Gbps || s.Allowance() != cc.Unlimited {
		t.Errorf("rate %v allowance %d", s.Rate(), s.Allowance())
	}
	if _, err := none.Algorithm().NewSender(cc.Env{LineRate: clock.Gbps, Params: map[string]string{"g": "1"}}); err == nil {
		t.Error("none accepted a parameter")
	}
}

func TestParsers(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		f    func(string) (int64, error)
	}{
		{"4096", 4096, cc.ParseBytes},
		{"64KiB", 65536, cc.ParseBytes},
		{"10MB", 10_000_000, cc.ParseBytes},
		{"1.5kB", 1500, cc.ParseBytes},
		{"55us", int64(55 * clock.Microsecond), dur},
		{"55µs", int64(55 * clock.Microsecond), dur},
		{"1.5ms", int64(1500 * clock.Microsecond), dur},
		{"20ps", 20, dur},
		{"100G", int64(100 * clock.Gbps), rate},
		{"5Mbps", int64(5 * clock.Mbps), rate},
		{"50Mb/s", int64(50 * clock.Mbps), rate},
		{"2.5G", int64(2500 * clock.Mbps), rate},
		{"800bps", 800, rate},
		{"400 Gb/s", int64(400 * clock.Gbps), rate},
		{"1T", int64(1000 * clock.Gbps), rate},
	} {
		got, err := tc.f(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("parse %q = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "abc", "10XB", "-5"} {
		if _, err := cc.ParseBytes(in); err == nil {
			t.Errorf("ParseBytes(%q) succeeded", in)
		}
	}
	if _, err := cc.ParseDuration("55"); err == nil {
		t.Error("ParseDuration without unit succeeded")
	}
	p := cc.NewParams("x", map[string]string{"a": "1/4", "b": "7", "c": "zz"})
	if a := p.Float("a", 0, 0, 1); a != 0.25 {
		t.Errorf("a = %v", a)
	}
	if b := p.Int("b", 0, 0, 5); b != 0 {
		t.Errorf("out-of-range b = %d, want the default", b)
	}
	err := p.Err()
	if err == nil || !strings.Contains(err.Error(), "b=\"7\": must be in [0, 5]") || !strings.Contains(err.Error(), "unknown parameter(s) [c]") {
		t.Errorf("Err() = %v", err)
	}
}

func dur(s string) (int64, error) {
	d, err := cc.ParseDuration(s)
	return int64(d), err
}

func rate(s string) (int64, error) {
	r, err := cc.ParseRate(s)
	return int64(r), err
}

// TestSchemeRefusesBadParametersOnBothSides: every registered scheme parses
// its parameters before building either side, and refuses a missing
// scheduler where it needs one.
func TestSchemeRefusesBadParametersOnBothSides(t *testing.T) {
	bad := map[string]string{"no_such_parameter": "1"}
	for _, a := range []cc.Algorithm{none.Algorithm(), dcqcn.Algorithm(), credit.Algorithm()} {
		env := cc.Env{Sched: sim.New(1), LineRate: 100 * clock.Gbps, MTU: 4096, SendGrant: func(cc.Grant) {}, Params: bad}
		if _, err := a.NewSender(env); err == nil || !strings.Contains(err.Error(), "no_such_parameter") {
			t.Errorf("%s: sender took a bad parameter: %v", a.Name(), err)
		}
		if _, err := a.NewReceiver(env); err == nil || !strings.Contains(err.Error(), "no_such_parameter") {
			t.Errorf("%s: receiver took a bad parameter: %v", a.Name(), err)
		}
	}
	noSched := cc.Env{LineRate: 100 * clock.Gbps, MTU: 4096, SendGrant: func(cc.Grant) {}}
	for _, tc := range []struct {
		a    cc.Algorithm
		side string
	}{{dcqcn.Algorithm(), "sender"}, {credit.Algorithm(), "receiver"}} {
		var err error
		if tc.side == "sender" {
			_, err = tc.a.NewSender(noSched)
		} else {
			_, err = tc.a.NewReceiver(noSched)
		}
		if err == nil || !strings.Contains(err.Error(), tc.a.Name()+": no scheduler") {
			t.Errorf("%s %s without a scheduler: %v", tc.a.Name(), tc.side, err)
		}
	}
}
