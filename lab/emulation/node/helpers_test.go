package node_test

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/node"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
	"github.com/rocelab/rocelab/wire"
	"github.com/rocelab/rocelab/wire/wiretest"
)

// roce builds a RoCEv2 write-only frame of payload bytes, ECT(0), DSCP 26,
// from 10.0.0.1 to dst.
func roce(t testing.TB, srcMAC, dstMAC string, dst string, payload int, psn uint32) []byte {
	t.Helper()
	p := wiretest.RoCE(wiretest.HostIP(1), netip.MustParseAddr(dst))
	p.SrcMAC, p.DstMAC = mustMAC(t, srcMAC), mustMAC(t, dstMAC)
	p.SrcPort, p.Opcode, p.DestQP, p.PSN = 0xC001, uint8(wire.OpWriteOnly), 0x11, psn
	p.RKey, p.DMALen = 1, uint32(payload)
	return wiretest.Frame(t, p, payload)
}

func mustMAC(t testing.TB, s string) [6]byte {
	t.Helper()
	hw, err := net.ParseMAC(s)
	if err != nil {
		t.Fatal(err)
	}
	return [6]byte(hw)
}

// waitHealthy polls the node's API until it answers.
func waitHealthy(t *testing.T, c *nodeapi.Client) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		_, err := c.Health(ctx)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("node never became healthy: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// eventually polls cond every 10 ms for up to 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// runNode runs n until the test ends or stop is called; stop returns Run's
// error.
func runNode(t *testing.T, n *node.Node) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- n.Run(ctx) }()
	var err error
	done := false
	stop = func() error {
		if !done {
			cancel()
			err, done = <-errc, true
		}
		return err
	}
	t.Cleanup(func() { stop() })
	return stop
}
