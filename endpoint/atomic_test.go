package endpoint_test

import (
	"encoding/binary"
	"testing"

	"github.com/rocelab/rocelab/endpoint"
)

const atomicAccess = allAccess | endpoint.AccessRemoteAtomic

// TestAtomics runs FetchAdd and CmpSwap (hit and miss) on a remote word
// and checks the word and the original values the requester gets, and the
// errors: a misaligned address (NAK invalid request), a region without
// remote-atomic access (NAK remote access), a local buffer not 8 bytes and
// a MetaRoCE QP (refused at post). With and without frame bytes: the
// simulator (no memory in payload-free regions) runs the same exchange.
func TestAtomics(t *testing.T) {
	s := newStar(t, starOpts{n: 2, raw: true})
	a, b := connect(t, s.nics[0], s.nics[1], endpoint.QPConfig{}, endpoint.QPConfig{})
	s.e.Run()
	local := mustMR(t, a.pd, make([]byte, 64), atomicAccess)
	remoteBuf := make([]byte, 64)
	remote := mustMR(t, b.pd, remoteBuf, atomicAccess)
	noAtomic := mustMR(t, b.pd, make([]byte, 64), allAccess)
	binary.NativeEndian.PutUint64(remoteBuf[8:], 5)
	for i, c := range []struct {
		name        string
		op          endpoint.WROpcode
		at          uint64
		rkey        uint32
		swap, cmp   uint64
		want        endpoint.Status
		orig, after uint64
	}{
		{"fetch-add", endpoint.WRAtomicFetchAdd, 8, remote.RKey, 3, 0, endpoint.StatusSuccess, 5, 8},
		{"cmp-swap hit", endpoint.WRAtomicCmpSwp, 8, remote.RKey, 100, 8, endpoint.StatusSuccess, 8, 100},
		{"cmp-swap miss", endpoint.WRAtomicCmpSwp, 8, remote.RKey, 7, 8, endpoint.StatusSuccess, 100, 100},
		{"fetch-add wraps", endpoint.WRAtomicFetchAdd, 8, remote.RKey, ^uint64(99), 0, endpoint.StatusSuccess, 100, 0},
		{"misaligned", endpoint.WRAtomicFetchAdd, 12, remote.RKey, 1, 0, endpoint.StatusRemoteInvalidRequest, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []endpoint.WC
			a.scq.OnCompletion(func(wc endpoint.WC) { got = append(got, wc) })
			into := local.Addr + uint64(8*i)
			if err := a.qp.PostSend(endpoint.SendWR{WRID: uint64(i), Opcode: c.op, Signaled: true,
				Local:      endpoint.SGE{Addr: into, Length: 8, LKey: local.LKey},
				RemoteAddr: remote.Addr + c.at, RKey: c.rkey, SwapAdd: c.swap, Compare: c.cmp}); err != nil {
				t.Fatal(err)
			}
			s.e.Run()
			if len(got) != 1 || got[0].Status != c.want {
				t.Fatalf("%v: completions %+v, want one %v", c.op, got, c.want)
			}
			if c.want != endpoint.StatusSuccess {
				return
			}
			wantOp := endpoint.WCFetchAdd
			if c.op == endpoint.WRAtomicCmpSwp {
				wantOp = endpoint.WCCompSwap
			}
			if got[0].Opcode != wantOp || got[0].ByteLen != 8 {
				t.Errorf("completion %v of %d bytes, want %v of 8", got[0].Opcode, got[0].ByteLen, wantOp)
			}
			if o := binary.NativeEndian.Uint64(local.Buf[8*i:]); o != c.orig {
				t.Errorf("original value %d, want %d", o, c.orig)
			}
			if w := binary.NativeEndian.Uint64(remoteBuf[8:]); w != c.after {
				t.Errorf("remote word %d after, want %d", w, c.after)
			}
		})
	}

	t.Run("no atomic access", func(t *testing.T) {
		a, _ := connect(t, s.nics[0], s.nics[1], endpoint.QPConfig{}, endpoint.QPConfig{})
		s.e.Run()
		var got []endpoint.WC
		a.scq.OnCompletion(func(wc endpoint.WC) { got = append(got, wc) })
		l := mustMR(t, a.pd, make([]byte, 8), atomicAccess)
		if err := a.qp.PostSend(endpoint.SendWR{Opcode: endpoint.WRAtomicFetchAdd, Signaled: true,
			Local: endpoint.SGE{Addr: l.Addr, Length: 8, LKey: l.LKey}, RemoteAddr: noAtomic.Addr, RKey: noAtomic.RKey, SwapAdd: 1}); err != nil {
			t.Fatal(err)
		}
		s.e.Run()
		if len(got) != 1 || got[0].Status != endpoint.StatusRemoteAccess {
			t.Errorf("a FetchAdd on a region without remote-atomic access: %+v, want remote access error", got)
		}
	})

	t.Run("refused at post", func(t *testing.T) {
		meta, _ := connect(t, s.nics[0], s.nics[1], endpoint.QPConfig{Mode: endpoint.ModeMetaRoCE}, endpoint.QPConfig{Mode: endpoint.ModeMetaRoCE})
		s.e.Run()
		l := mustMR(t, a.pd, make([]byte, 16), atomicAccess)
		for name, c := range map[string]struct {
			qp  *endpoint.QP
			len uint32
		}{"MetaRoCE": {meta.qp, 8}, "4-byte buffer": {a.qp, 4}, "16-byte buffer": {a.qp, 16}} {
			if err := c.qp.PostSend(endpoint.SendWR{Opcode: endpoint.WRAtomicCmpSwp, Local: endpoint.SGE{Addr: l.Addr, Length: c.len, LKey: l.LKey},
				RemoteAddr: remote.Addr, RKey: remote.RKey}); err == nil {
				t.Errorf("%s: an atomic was posted, want an error", name)
			}
		}
	})
}

// TestAtomicsExecuteOnce runs 400 FetchAdds of 1 through 5% loss in each
// direction: requests and acknowledges are lost and retransmitted, and the
// responder must replay a duplicate's saved result rather than add again.
// The word ends at exactly 400 and the originals are 0..399, each once.
func TestAtomicsExecuteOnce(t *testing.T) {
	for _, raw := range []bool{true, false} {
		s := newStar(t, starOpts{n: 2, raw: raw, loss: 0.05, seed: 11})
		a, b := connect(t, s.nics[0], s.nics[1], endpoint.QPConfig{}, endpoint.QPConfig{})
		s.e.Run()
		const n = 400
		local := mustMR(t, a.pd, make([]byte, 8*n), atomicAccess)
		word := make([]byte, 8)
		remote := mustMR(t, b.pd, word, atomicAccess)
		var got []endpoint.WC
		a.scq.OnCompletion(func(wc endpoint.WC) { got = append(got, wc) })
		for i := range n {
			if err := a.qp.PostSend(endpoint.SendWR{WRID: uint64(i), Opcode: endpoint.WRAtomicFetchAdd, Signaled: true,
				Local: endpoint.SGE{Addr: local.Addr + uint64(8*i), Length: 8, LKey: local.LKey}, RemoteAddr: remote.Addr, RKey: remote.RKey, SwapAdd: 1}); err != nil {
				t.Fatal(err)
			}
			if i%16 == 15 {
				s.e.Run()
			}
		}
		s.e.Run()
		if len(got) != n {
			t.Fatalf("raw %v: %d completions, want %d", raw, len(got), n)
		}
		for _, wc := range got {
			if wc.Status != endpoint.StatusSuccess {
				t.Fatalf("raw %v: completion %+v", raw, wc)
			}
		}
		st := a.qp.Stats()
		if st.Retransmits == 0 {
			t.Errorf("raw %v: no retransmissions at 5%% loss: the test tests nothing", raw)
		}
		if !raw {
			continue // payload-free regions: nothing to add to
		}
		if w := binary.NativeEndian.Uint64(word); w != n {
			t.Errorf("the word is %d after %d FetchAdds of 1 (%d retransmitted packets): duplicates ran again or got lost", w, n, st.Retransmits)
		}
		seen := make([]bool, n)
		for i := range n {
			o := binary.NativeEndian.Uint64(local.Buf[8*i:])
			if o >= n || seen[o] {
				t.Fatalf("original value %d at FetchAdd %d: out of range or seen twice", o, i)
			}
			seen[o] = true
		}
	}
}
