package compliance

import (
	"encoding/binary"

	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/wire"
)

// word is the IUT's 8-byte word at offset off of its buffer, in its byte
// order (the tester shares the IUT's machine).
func (c *Conn) word(off uint64) uint64 { return binary.NativeEndian.Uint64(c.Mem(off, 8)) }

func (c *Conn) setWord(off, v uint64) { c.Fill(off, binary.NativeEndian.AppendUint64(nil, v)) }

// Atomic sends an atomic request (CmpSwap or FetchAdd) at psn on the IUT's
// buffer at offset off.
func (c *Conn) Atomic(op wire.Opcode, psn uint32, off uint64, swapAdd, compare uint64) {
	p := c.Req(op, psn)
	p.VA, p.RKey, p.DMALen, p.AckReq = c.QP.Buf.Addr+off, c.QP.Buf.RKey, 8, true
	p.SetAtomicETH(swapAdd, compare)
	c.t.Send(p, nil)
}

// atomicAck expects the IUT's ATOMIC Acknowledge at psn and returns the
// original value it carries.
func (c *Conn) atomicAck(psn uint32, what string) uint64 {
	in, skipped := c.t.Expect(30*us, "ATOMIC Acknowledge for "+what, c.mineOp(wire.OpAtomicAcknowledge))
	for _, s := range c.mineOf(wire.OpAcknowledge, skipped) {
		c.t.Errorf("%s: an ACK/NAK (%s) came before the ATOMIC Acknowledge", what, wire.SyndromeString(s.P.Syndrome))
	}
	c.checkCommon(in)
	if in.P.PSN != psn || !in.P.HasAETH || in.P.Syndrome&0x60 != wire.SyndromeClassACK {
		c.t.Errorf("%s: ATOMIC Acknowledge PSN %#x AETH %v %s, want PSN %#x and an ACK", what, in.P.PSN, in.P.HasAETH, wire.SyndromeString(in.P.Syndrome), psn)
	}
	return in.P.AtomicAck()
}

var atomicCases = []Case{
	{ID: "atomic/fetch-add", Mode: endpoint.ModeRoCEv2, Title: "FetchAdd: one PSN, an ATOMIC Acknowledge with the original value, the word added to modulo 2^64",
		Cites: []string{"MR-12.1", "MR-12.4", "MR-10.1"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{})
			c.setWord(0x100, 5)
			c.Atomic(wire.OpFetchAdd, c.PSN, 0x100, 3, 0)
			if o := c.atomicAck(c.PSN, "FetchAdd 3 on 5"); o != 5 {
				t.Errorf("FetchAdd 3 on 5 answered original %d, want 5", o)
			}
			if w := c.word(0x100); w != 8 {
				t.Errorf("the word is %d after FetchAdd 3 on 5, want 8", w)
			}
			c.Atomic(wire.OpFetchAdd, psnAdd(c.PSN, 1), 0x100, ^uint64(9), 0) // -10
			if o := c.atomicAck(psnAdd(c.PSN, 1), "FetchAdd -10 on 8"); o != 8 || c.word(0x100) != ^uint64(1) {
				t.Errorf("FetchAdd -10 on 8: original %d, word %#x; want 8 and 2^64-2", o, c.word(0x100))
			}
			// The next request's ACK names the PSN after the atomics.
			c.Write(psnAdd(c.PSN, 2), c.QP.Buf.Addr, c.QP.Buf.RKey, pattern(8, 1), true)
			if a := c.ack(30 * us); a.P.PSN != psnAdd(c.PSN, 2) || a.P.MSN != 3 {
				t.Errorf("ACK after two atomics and a WRITE: PSN %#x MSN %d, want %#x and 3", a.P.PSN, a.P.MSN, psnAdd(c.PSN, 2))
			}
		}},
	{ID: "atomic/cmp-swap", Mode: endpoint.ModeRoCEv2, Title: "CmpSwap writes the swap data only when the word equals the compare data; both answer the original",
		Cites: []string{"MR-12.1", "MR-12.4"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{})
			c.setWord(0x200, 42)
			c.Atomic(wire.OpCompareSwap, c.PSN, 0x200, 7, 42)
			if o := c.atomicAck(c.PSN, "CmpSwap 42→7 on 42"); o != 42 || c.word(0x200) != 7 {
				t.Errorf("CmpSwap 42→7 on 42: original %d, word %d; want 42 and 7", o, c.word(0x200))
			}
			c.Atomic(wire.OpCompareSwap, psnAdd(c.PSN, 1), 0x200, 9, 42)
			if o := c.atomicAck(psnAdd(c.PSN, 1), "CmpSwap 42→9 on 7"); o != 7 || c.word(0x200) != 7 {
				t.Errorf("CmpSwap 42→9 on 7: original %d, word %d; want 7 and 7 (unchanged)", o, c.word(0x200))
			}
		}},
	{ID: "atomic/duplicate", Mode: endpoint.ModeRoCEv2, Title: "a duplicate atomic request is answered with the saved original and not run again",
		Cites: []string{"MR-12.3"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{})
			c.setWord(0x300, 100)
			c.Atomic(wire.OpFetchAdd, c.PSN, 0x300, 1, 0)
			c.Atomic(wire.OpFetchAdd, psnAdd(c.PSN, 1), 0x300, 1, 0)
			first := c.atomicAck(c.PSN, "the first FetchAdd")
			second := c.atomicAck(psnAdd(c.PSN, 1), "the second FetchAdd")
			// Both again, as a requester that lost the acknowledges resends.
			c.Atomic(wire.OpFetchAdd, c.PSN, 0x300, 1, 0)
			c.Atomic(wire.OpFetchAdd, psnAdd(c.PSN, 1), 0x300, 1, 0)
			if o := c.atomicAck(c.PSN, "the first FetchAdd resent"); o != first {
				t.Errorf("the resent FetchAdd answered %d, want the saved %d", o, first)
			}
			if o := c.atomicAck(psnAdd(c.PSN, 1), "the second FetchAdd resent"); o != second {
				t.Errorf("the resent second FetchAdd answered %d, want the saved %d", o, second)
			}
			if first != 100 || second != 101 || c.word(0x300) != 102 {
				t.Errorf("two FetchAdds of 1 on 100, each sent twice: originals %d, %d, word %d; want 100, 101, 102", first, second, c.word(0x300))
			}
		}},
	{ID: "atomic/refused", Mode: endpoint.ModeRoCEv2, Title: "a misaligned atomic is NAKed invalid request, one on a region without atomic access remote access error; nothing changes",
		Cites: []string{"MR-12.2"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{})
			c.setWord(0x400, 1)
			c.setWord(0x408, 1)
			c.Atomic(wire.OpFetchAdd, c.PSN, 0x404, 1, 0)
			c.expectNAK(wire.SyndromeNAKInvalidRequest, c.PSN, "FetchAdd at an address 4 bytes off alignment")
			if c.word(0x400) != 1 || c.word(0x408) != 1 {
				t.Errorf("a refused misaligned FetchAdd changed memory")
			}
			d := t.Connect(ConnOpts{NoRemoteAtomic: true})
			d.setWord(0x400, 1)
			d.Atomic(wire.OpCompareSwap, d.PSN, 0x400, 9, 1)
			d.expectNAK(wire.SyndromeNAKRemoteAccess, d.PSN, "CmpSwap on a region without remote-atomic access")
			if d.word(0x400) != 1 {
				t.Errorf("a refused CmpSwap changed the word to %d", d.word(0x400))
			}
		}},
	{ID: "atomic/request", Mode: endpoint.ModeRoCEv2, Title: "the IUT's atomic: one packet with the AtomicETH; the acknowledge's original lands in the local buffer before the completion",
		Cites: []string{"MR-12.1", "MR-1.1"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{})
			c.Post(WR{WRID: 12, Op: "fetch_add", Offset: 0x500, Len: 8, RemoteAddr: 0x7000_0008, RKey: 0x77, SwapAdd: 0x1234})
			in, skipped := t.Expect(30*us, "the FetchAdd request", c.mineOp(wire.OpFetchAdd))
			if len(c.mineOf(wire.OpCompareSwap, skipped)) > 0 {
				t.Errorf("a fetch_add WR sent a CmpSwap")
			}
			c.checkCommon(in)
			swap, _ := in.P.AtomicETH()
			if in.P.VA != 0x7000_0008 || in.P.RKey != 0x77 || swap != 0x1234 || in.P.DSCP != 26 || !in.P.AckReq {
				t.Errorf("FetchAdd VA %#x R_Key %#x add %#x DSCP %d AckReq %v; want 0x70000008, 0x77, 0x1234, 26, set", in.P.VA, in.P.RKey, swap, in.P.DSCP, in.P.AckReq)
			}
			if wc, _ := c.WaitCompletion(10 * us); wc != nil {
				t.Fatalf("the atomic completed before its acknowledge: %+v", *wc)
			}
			a := c.hdr(wire.OpAtomicAcknowledge, in.P.PSN, 26, true)
			a.Syndrome, a.MSN = wire.SyndromeACK(0x1F), 1
			a.SetAtomicAck(0xFEEDFACE_CAFEF00D)
			t.Send(a, nil)
			wc, _ := c.WaitCompletion(30 * us)
			if wc == nil || wc.WRID != 12 || wc.Status != "success" || wc.Opcode != "FETCH_ADD" || wc.ByteLen != 8 {
				t.Fatalf("completion %v, want WR 12 FETCH_ADD success of 8 bytes", wc)
			}
			if w := c.word(0x500); w != 0xFEEDFACE_CAFEF00D {
				t.Errorf("the local buffer holds %#x, want the acknowledge's original 0xfeedfacecafef00d", w)
			}
		}},
	{ID: "atomic/after-read", Mode: endpoint.ModeRoCEv2, Title: "an ATOMIC Acknowledge follows the READ responses queued before it, in their traffic class",
		Cites: []string{"MR-12.5", "MR-12.1"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{MTU: 1024})
			c.Fill(8192, pattern(3000, 0x21))
			c.setWord(0x600, 9)
			p := c.Req(wire.OpReadRequest, c.PSN)
			p.VA, p.RKey, p.DMALen, p.AckReq = c.QP.Buf.Addr+8192, c.QP.Buf.RKey, 3000, true
			t.Send(p, nil)
			c.Atomic(wire.OpFetchAdd, psnAdd(c.PSN, 3), 0x600, 1, 0)
			var got []*In
			for _, in := range t.Settle(60 * us) {
				if c.Mine(in) {
					got = append(got, in)
				}
			}
			want := []wire.Opcode{wire.OpReadResponseFirst, wire.OpReadResponseMiddle, wire.OpReadResponseLast, wire.OpAtomicAcknowledge}
			if len(got) != len(want) {
				t.Fatalf("a 3-packet READ then a FetchAdd: the IUT sent %s, want three READ responses and an ATOMIC Acknowledge", describe(got))
			}
			for i, in := range got {
				if wire.Opcode(in.P.Opcode) != want[i] || in.P.PSN != psnAdd(c.PSN, i) || in.P.DSCP != got[0].P.DSCP {
					t.Errorf("frame %d: %v PSN %#x DSCP %d, want %v PSN %#x DSCP %d", i, wire.Opcode(in.P.Opcode), in.P.PSN, in.P.DSCP, want[i], psnAdd(c.PSN, i), got[0].P.DSCP)
				}
			}
			if o := got[3].P.AtomicAck(); o != 9 || c.word(0x600) != 10 {
				t.Errorf("FetchAdd 1 on 9 behind a READ: original %d, word %d; want 9 and 10", o, c.word(0x600))
			}
		}},
}
