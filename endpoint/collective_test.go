package endpoint_test

import (
	"fmt"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/endpoint/collective"
	"github.com/rocelab/rocelab/endpoint/rdmacomm"
)

// runCollective runs op over comm to completion in e.
func runCollective(t testing.TB, e *sim.Engine, comm *collective.Comm, op collective.Op, size int64, warmup, iters int) collective.Result {
	t.Helper()
	var res collective.Result
	called := 0
	comm.Run(op, size, warmup, iters, func(r collective.Result, err error) {
		if err != nil {
			t.Fatalf("%v of %d B: %v", op, size, err)
		}
		res = r
		called++
	})
	e.Run()
	if called != 1 {
		t.Fatalf("%v of %d B: done called %d times", op, size, called)
	}
	return res
}

// TestCollectiveOverRDMA runs every collective, checked element by
// element, over the RDMA adapter on a star of Raw NICs, in both modes,
// then a payload-free all-reduce.
func TestCollectiveOverRDMA(t *testing.T) {
	const n = 5
	for _, mode := range []endpoint.Mode{endpoint.ModeRoCEv2, endpoint.ModeMetaRoCE} {
		for _, op := range []collective.Op{collective.AllReduce, collective.AllGather, collective.ReduceScatter, collective.AllToAll} {
			t.Run(fmt.Sprintf("%v/%v", mode, op), func(t *testing.T) {
				s := newStar(t, starOpts{n: n, raw: true})
				pairs := rdmacomm.Ring
				if op == collective.AllToAll {
					pairs = rdmacomm.All
				}
				tr, err := rdmacomm.New(rdmacomm.Options{NICs: s.nics, Pairs: pairs,
					QP: endpoint.QPConfig{Mode: mode, CC: "dcqcn", Paths: 4}})
				if err != nil {
					t.Fatal(err)
				}
				comm, err := collective.New(s.e, tr, collective.Config{Ranks: n, SliceBytes: 10000, Window: 4, Check: true, Seed: 3})
				if err != nil {
					t.Fatal(err)
				}
				for _, size := range []int64{0, 12, 4100, 300_001} {
					res := runCollective(t, s.e, comm, op, size, 1, 2)
					if !res.Checked || res.Wrong != 0 {
						t.Errorf("size %d: checked %t, %d wrong", size, res.Checked, res.Wrong)
					}
				}
				for _, qp := range tr.QPs() {
					if qp.Mode() != mode || qp.State() != endpoint.StateRTS {
						t.Errorf("qp %#x: mode %v state %v", qp.QPN(), qp.Mode(), qp.State())
					}
				}
			})
		}
	}
	t.Run("payload-free", func(t *testing.T) {
		s := newStar(t, starOpts{n: n})
		tr, err := rdmacomm.New(rdmacomm.Options{NICs: s.nics, QP: endpoint.QPConfig{Mode: endpoint.ModeMetaRoCE, Paths: 4}})
		if err != nil {
			t.Fatal(err)
		}
		comm, err := collective.New(s.e, tr, collective.Config{Ranks: n})
		if err != nil {
			t.Fatal(err)
		}
		res := runCollective(t, s.e, comm, collective.AllReduce, 64<<20, 0, 1)
		// 5 ranks at 100G: busbw cannot exceed 12.5 GB/s; a real fabric
		// run lands well above half of it.
		if res.BusBW <= 6 || res.BusBW > 12.5 {
			t.Errorf("payload-free all-reduce busbw %.2f GB/s, want in (6, 12.5]", res.BusBW)
		}
		t.Logf("payload-free 64 MiB all-reduce on 5×100G: %.1f us, busbw %.2f GB/s", res.TimeUs, res.BusBW)
	})
}

// TestAdapterErrors: writes the adapter cannot carry fail at once.
func TestAdapterErrors(t *testing.T) {
	s := newStar(t, starOpts{n: 3})
	if _, err := rdmacomm.New(rdmacomm.Options{NICs: []*endpoint.NIC{s.nics[0], s.nics[0]}}); err == nil {
		t.Error("two ranks on one NIC accepted")
	}
	tr, err := rdmacomm.New(rdmacomm.Options{NICs: s.nics})
	if err != nil {
		t.Fatal(err)
	}
	tr.Listen(1, nil, 100, func(int, int, int, uint32) {})
	for _, w := range []collective.Write{
		{From: 0, To: 2, Len: 1},   // ring of 3: 0 and 2 are neighbours, but 2 has no region
		{From: 0, To: 1, Len: 101}, // out of range
		{From: 0, To: 1, Off: -1, Len: 1},
	} {
		if err := tr.Write(w, func(error) { t.Error("done called") }); err == nil {
			t.Errorf("write %+v accepted", w)
		}
	}
	var _ clock.Duration
}

// TestAllToAllOnDemand: an all-to-all over pairs connected on first use,
// with at most 3 pairs kept per rank, is exact in both modes; pairs are
// connected and destroyed as the ranks move on (every pair at least once,
// never more than the cap once idle ones could go), and no QP is left in
// ERROR by a write.
func TestAllToAllOnDemand(t *testing.T) {
	const n = 8
	for _, mode := range []endpoint.Mode{endpoint.ModeRoCEv2, endpoint.ModeMetaRoCE} {
		t.Run(mode.String(), func(t *testing.T) {
			s := newStar(t, starOpts{n: n, raw: true})
			tr, err := rdmacomm.New(rdmacomm.Options{NICs: s.nics, Pairs: rdmacomm.OnDemand, MaxPairs: 3,
				QP: endpoint.QPConfig{Mode: mode, Paths: 2}})
			if err != nil {
				t.Fatal(err)
			}
			if total, _ := tr.Connected(); total != 0 {
				t.Fatalf("%d pairs connected before any write", total)
			}
			comm, err := collective.New(s.e, tr, collective.Config{Ranks: n, SliceBytes: 4096, Window: 1, Check: true, Seed: 5})
			if err != nil {
				t.Fatal(err)
			}
			for _, size := range []int64{8 * 4096, 8*300_000 + 8} {
				res := runCollective(t, s.e, comm, collective.AllToAll, size, 1, 2)
				if !res.Checked || res.Wrong != 0 {
					t.Errorf("size %d: checked %t, %d wrong", size, res.Checked, res.Wrong)
				}
			}
			total, most := tr.Connected()
			t.Logf("%d pairs connected in all, at most %d to one rank now, %d QPs live", total, most, len(tr.QPs()))
			if total <= n*(n-1)/2 {
				t.Errorf("%d pairs connected: want more than the %d of a full mesh (pairs must be re-connected after eviction)", total, n*(n-1)/2)
			}
			if most > 3+2 {
				t.Errorf("a rank holds %d pairs, want about MaxPairs = 3", most)
			}
			for _, qp := range tr.QPs() {
				if qp.State() != endpoint.StateRTS {
					t.Errorf("qp %#x: state %v", qp.QPN(), qp.State())
				}
			}
		})
	}
}

// TestRetiredQPCounters: counters of destroyed QPs stay in the NIC's
// telemetry under qp="retired", so totals over every QP are right: an
// all-to-all over one pair per rank at a time sends as many data packets
// as over a full mesh.
func TestRetiredQPCounters(t *testing.T) {
	dataPackets := func(pairs rdmacomm.Pairs) (total, retired float64) {
		s := newStar(t, starOpts{n: 4})
		tr, err := rdmacomm.New(rdmacomm.Options{NICs: s.nics, Pairs: pairs, MaxPairs: 1,
			QP: endpoint.QPConfig{Mode: endpoint.ModeRoCEv2}})
		if err != nil {
			t.Fatal(err)
		}
		comm, err := collective.New(s.e, tr, collective.Config{Ranks: 4, Window: 1})
		if err != nil {
			t.Fatal(err)
		}
		runCollective(t, s.e, comm, collective.AllToAll, 4<<20, 0, 1)
		for _, n := range s.nics {
			n.Collect(func(sm telemetry.Sample) {
				if sm.Name == "qp_tx_packets_total" {
					total += sm.Value
					if sm.Label("qp") == "retired" {
						retired += sm.Value
					}
				}
			})
		}
		return total, retired
	}
	mesh, _ := dataPackets(rdmacomm.All)
	total, retired := dataPackets(rdmacomm.OnDemand)
	t.Logf("full mesh %v data packets; on demand %v (%v from retired QPs)", mesh, total, retired)
	if retired == 0 {
		t.Error("no retired QP counters after an all-to-all over 1 pair per rank")
	}
	if total != mesh {
		t.Errorf("on demand: %v data packets, full mesh %v", total, mesh)
	}
}
