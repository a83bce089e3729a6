package endpoint_test

import (
	"fmt"
	"testing"

	"github.com/rocelab/rocelab/endpoint"
)

// goodput moves total bytes from a to b as WRITEs of msg bytes (depth
// outstanding) and returns the goodput in Gb/s; the memory is verified.
func goodput(t *testing.T, mode endpoint.Mode, loss float64, op endpoint.WROpcode, total, msg int) (float64, endpoint.QPStats) {
	t.Helper()
	s := newStar(t, starOpts{n: 2, raw: true, loss: loss, seed: 3})
	a, b := connect(t, s.nics[0], s.nics[1], endpoint.QPConfig{Mode: mode, Paths: 4}, endpoint.QPConfig{Mode: mode, Paths: 4})
	s.e.Run()
	src := randBytes(9, total)
	dst := make([]byte, total)
	var lmr, rmr *endpoint.MR
	if op == endpoint.WRRead {
		lmr, rmr = mustMR(t, a.pd, dst, allAccess), mustMR(t, b.pd, src, allAccess)
	} else {
		lmr, rmr = mustMR(t, a.pd, src, allAccess), mustMR(t, b.pd, dst, allAccess)
	}
	posted, done := 0, 0
	post := func() {
		off := posted * msg
		err := a.qp.PostSend(endpoint.SendWR{WRID: uint64(posted), Opcode: op, Signaled: true,
			Local:      endpoint.SGE{Addr: lmr.Addr + uint64(off), Length: uint32(msg), LKey: lmr.LKey},
			RemoteAddr: rmr.Addr + uint64(off), RKey: rmr.RKey})
		if err != nil {
			t.Fatal(err)
		}
		posted++
	}
	a.scq.OnCompletion(func(wc endpoint.WC) {
		if wc.Status != endpoint.StatusSuccess {
			t.Fatalf("completion %v: %v", wc.Status, wc.Err)
		}
		done++
		if posted < total/msg {
			post()
		}
	})
	start := s.e.Now()
	for range min(16, total/msg) {
		post()
	}
	s.e.Run()
	if done != total/msg {
		t.Fatalf("%d of %d messages completed; state %v %v; stats %+v\n%s\n%s", done, total/msg, a.qp.State(), a.qp.Err(), a.qp.Stats(), a.qp.DebugState(), b.qp.DebugState())
	}
	el := s.e.Now().Sub(start)
	if i := firstDiff(src, dst); i >= 0 {
		t.Fatalf("memory differs at byte %d", i)
	}
	return float64(total) * 8 / el.Seconds() / 1e9, a.qp.Stats()
}

func TestLoss(t *testing.T) {
	const total, msg = 32 << 20, 1 << 20
	res := map[string]float64{}
	for _, op := range []endpoint.WROpcode{endpoint.WRWrite, endpoint.WRRead} {
		for _, mode := range []endpoint.Mode{endpoint.ModeRoCEv2, endpoint.ModeMetaRoCE} {
			for _, loss := range []float64{0, 0.001, 0.01} {
				if op == endpoint.WRRead && loss == 0.001 {
					continue
				}
				g, st := goodput(t, mode, loss, op, total, msg)
				key := fmt.Sprintf("%v/%v/%g", op, mode, loss)
				res[key] = g
				t.Logf("%-28s goodput %6.2f Gb/s  retx %6d timeouts %3d rewinds %5d lost %5d", key, g, st.Retransmits, st.Timeouts, st.Rewinds, st.Lost)
			}
		}
	}
	base := res["RDMA_WRITE/metaroce/0"]
	if g := res["RDMA_WRITE/metaroce/0.01"]; g < 0.9*base {
		t.Errorf("MetaRoCE at 1%% loss: %.2f Gb/s, below 90%% of its lossless %.2f", g, base)
	}
	if g := res["RDMA_WRITE/rocev2/0.01"]; g > 0.8*res["RDMA_WRITE/rocev2/0"] {
		t.Errorf("go-back-N at 1%% loss kept %.2f of %.2f Gb/s: expected a collapse", g, res["RDMA_WRITE/rocev2/0"])
	}
}
