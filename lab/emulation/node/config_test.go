package node_test

import (
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/lab/emulation/node"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
	"github.com/rocelab/rocelab/switchmodel"
)

// switchConfig is a two-port switch node config; port i leads to
// 10.0.i.0/24.
func switchConfig(socket string) node.Config {
	sc := switchmodel.DefaultConfig()
	sc.ECMP.SprayDSCPs = []uint8{10}
	return node.Config{
		Kind: nodeapi.KindSwitch, Name: "sw1", Scale: 1000, Seed: 7, Socket: socket,
		Ports: []node.PortConfig{
			{IfName: "sw1-p1", MAC: "02:00:00:00:00:10", PeerMAC: "02:00:00:00:00:20", Rate: 100 * clock.Gbps, Delay: clock.Microsecond},
			{IfName: "sw1-p2", MAC: "02:00:00:00:00:11", PeerMAC: "02:00:00:00:00:21", Rate: 100 * clock.Gbps, Delay: clock.Microsecond},
		},
		Switch: &sc,
		Routes: []switchmodel.Route{
			{Prefix: netip.MustParsePrefix("10.0.0.0/24"), Ports: []int{0}},
			{Prefix: netip.MustParsePrefix("10.0.1.0/24"), Ports: []int{1}},
		},
	}
}

func TestConfigRoundTrip(t *testing.T) {
	c := switchConfig("/run/rocelab/x/sw1.sock")
	path := filepath.Join(t.TempDir(), "sw1.json")
	if err := c.Write(path); err != nil {
		t.Fatal(err)
	}
	got, err := node.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c, got, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(*node.Config)
		want   string // substring of the error; "" = valid
	}{
		{"valid", func(*node.Config) {}, ""},
		{"mutant on a switch", func(c *node.Config) { c.Mutant = "ignore-pfc" }, "endpoint nodes only"},
		{"endpoint without NICs", func(c *node.Config) { c.Kind = nodeapi.KindEndpoint; c.Switch = nil; c.Routes = nil }, "0 NICs for 2 ports"},
		{"unknown kind", func(c *node.Config) { c.Kind = "router" }, `kind "router"`},
		{"no switch", func(c *node.Config) { c.Switch = nil }, "without a switch config"},
		{"scale", func(c *node.Config) { c.Scale = 0 }, "scale 0"},
		{"relative socket", func(c *node.Config) { c.Socket = "sw1.sock" }, "absolute"},
		{"bad peer mac", func(c *node.Config) { c.Ports[1].PeerMAC = "nope" }, "peer_mac"},
		{"own mac optional", func(c *node.Config) { c.Ports[0].MAC = "" }, ""},
		{"rate", func(c *node.Config) { c.Ports[0].Rate = 0 }, "rate must be positive"},
		{"route port", func(c *node.Config) { c.Routes[0].Ports = []int{2} }, "port 2 out of range"},
		{"no ports", func(c *node.Config) { c.Ports = nil; c.Routes = nil }, "no ports"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := switchConfig("/run/x.sock")
			c.change(&cfg)
			err := cfg.Validate()
			switch {
			case c.want == "" && err != nil:
				t.Errorf("Validate: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("Validate: %v, want an error with %q", err, c.want)
			}
		})
	}
}

// TestConfigMutant: an endpoint node accepts a mutant by name (tests only)
// and refuses an unknown one.
func TestConfigMutant(t *testing.T) {
	c := endpointConfig("/run/x", 1, []string{hostMAC(2, 0)})
	c.Mutant = "ignore-pfc"
	if err := c.Validate(); endpoint.MutantsBuilt && err != nil {
		t.Errorf("mutant ignore-pfc: %v", err)
	} else if !endpoint.MutantsBuilt && (err == nil || !strings.Contains(err.Error(), "-tags rocelab_mutants")) {
		t.Errorf("mutant ignore-pfc in a build without mutants: %v, want it refused", err)
	}
	c.Mutant = "no-such-defect"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "unknown mutant") {
		t.Errorf("unknown mutant: %v", err)
	}
}
