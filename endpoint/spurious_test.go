package endpoint_test

import (
	"testing"

	"github.com/rocelab/rocelab/endpoint"
)

// TestSelectiveRepeatResendsOnlyLost is a regression test for MetaRoCE's
// loss inference on one path: with 1% of the data packets lost on the wire
// (sender → switch; acknowledgements are not lost), every loss is inferred
// from a later packet of the same FIFO path, so the sender must resend
// about one packet per loss and never a packet the receiver already has.
// Over-eager inference (resending packets that are still in flight or
// arrived) shows as retransmits far above the drops and as duplicates at
// the receiver.
func TestSelectiveRepeatResendsOnlyLost(t *testing.T) {
	const total = 32 << 20
	for _, msg := range []int{64 << 10, 1 << 20} {
		s := newStar(t, starOpts{n: 2, loss: 0.01, seed: 5})
		for _, l := range s.lossy[1:] {
			l.p = 0 // only NIC 0 → switch loses: data, not SACKs
		}
		cfg := endpoint.QPConfig{Mode: endpoint.ModeMetaRoCE, Paths: 1}
		a, b := connect(t, s.nics[0], s.nics[1], cfg, cfg)
		s.e.Run()
		lmr, err := a.pd.RegMRLen(total, allAccess)
		if err != nil {
			t.Fatal(err)
		}
		rmr, err := b.pd.RegMRLen(total, allAccess)
		if err != nil {
			t.Fatal(err)
		}
		posted, done := 0, 0
		post := func() {
			off := uint64(posted * msg)
			if err := a.qp.PostSend(endpoint.SendWR{WRID: uint64(posted), Opcode: endpoint.WRWrite, Signaled: true,
				Local:      endpoint.SGE{Addr: lmr.Addr + off, Length: uint32(msg), LKey: lmr.LKey},
				RemoteAddr: rmr.Addr + off, RKey: rmr.RKey}); err != nil {
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
		for range min(16, total/msg) {
			post()
		}
		s.e.Run()
		if done != total/msg {
			t.Fatalf("msg %d: %d of %d messages completed", msg, done, total/msg)
		}
		drops := s.lossy[0].drops
		st, rs := a.qp.Stats(), b.qp.Stats()
		t.Logf("msg %7d: drops %d retransmits %d lost %d timeouts %d receiver duplicates %d",
			msg, drops, st.Retransmits, st.Lost, st.Timeouts, rs.Duplicates)
		if drops < 50 {
			t.Fatalf("msg %d: only %d drops; the test needs losses to mean anything", msg, drops)
		}
		if st.Retransmits > 3*drops {
			t.Errorf("msg %d: %d retransmits for %d lost packets (more than 3×)", msg, st.Retransmits, drops)
		}
		if st.Retransmits < drops {
			t.Errorf("msg %d: %d retransmits for %d lost packets: a loss was not resent", msg, st.Retransmits, drops)
		}
		if rs.Duplicates != 0 || st.Timeouts != 0 {
			t.Errorf("msg %d: %d duplicates at the receiver, %d timeouts: want 0 and 0 with loss only on the data direction of one FIFO path",
				msg, rs.Duplicates, st.Timeouts)
		}
	}
}
