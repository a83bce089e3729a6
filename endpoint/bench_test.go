package endpoint_test

import (
	"testing"
	"time"

	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/wire/pipe"
	"github.com/rocelab/rocelab/wire/wiretest"
)

// benchPair is two NICs cabled back to back by sim links (no switch).
func benchPair(b *testing.B, raw bool, mode endpoint.Mode) (*sim.Engine, *peer, *peer) {
	e := sim.New(1)
	mk := func(i int) *endpoint.NIC {
		n, err := endpoint.NewNIC(endpoint.Options{Name: "n", Sched: e, IP: wiretest.HostIP(i), Raw: raw, CC: endpoint.CCRegistry()})
		if err != nil {
			b.Fatal(err)
		}
		return n
	}
	x, y := mk(1), mk(2)
	x.Attach(pipe.New(e, hop, y))
	y.Attach(pipe.New(e, hop, x))
	a, c := connect(b, x, y, endpoint.QPConfig{Mode: mode}, endpoint.QPConfig{Mode: mode})
	e.Run()
	return e, a, c
}

// BenchmarkWritePackets measures data packets per second of wall time
// through a sender and a receiver NIC model: 4 KiB WRITE packets, ACKs
// and all.
func BenchmarkWritePackets(b *testing.B) {
	for _, bc := range []struct {
		name string
		raw  bool
		mode endpoint.Mode
	}{{"descriptor/rocev2", false, endpoint.ModeRoCEv2}, {"descriptor/metaroce", false, endpoint.ModeMetaRoCE},
		{"raw/rocev2", true, endpoint.ModeRoCEv2}, {"raw/metaroce", true, endpoint.ModeMetaRoCE}} {
		b.Run(bc.name, func(b *testing.B) {
			e, a, c := benchPair(b, bc.raw, bc.mode)
			const msg = 1 << 20
			var lmr, rmr *endpoint.MR
			if bc.raw {
				lmr = mustMR(b, a.pd, make([]byte, msg), allAccess)
				rmr = mustMR(b, c.pd, make([]byte, msg), allAccess)
			} else {
				lmr, _ = a.pd.RegMRLen(msg, allAccess)
				rmr, _ = c.pd.RegMRLen(msg, allAccess)
			}
			msgs := max(1, b.N/256)
			posted := 0
			post := func() {
				posted++
				_ = a.qp.PostSend(endpoint.SendWR{Opcode: endpoint.WRWrite, Signaled: true,
					Local: endpoint.SGE{Addr: lmr.Addr, Length: msg, LKey: lmr.LKey}, RemoteAddr: rmr.Addr, RKey: rmr.RKey})
			}
			a.scq.OnCompletion(func(endpoint.WC) {
				if posted < msgs {
					post()
				}
			})
			b.ResetTimer()
			start := time.Now()
			for range min(8, msgs) {
				post()
			}
			e.Run()
			el := time.Since(start)
			b.ReportMetric(float64(msgs*256)/el.Seconds(), "pkts/s")
			b.ReportMetric(float64(msgs*256)/float64(b.N), "pkts/op")
		})
	}
}
