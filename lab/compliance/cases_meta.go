package compliance

import (
	"bytes"
	"slices"

	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/wire"
	"github.com/rocelab/rocelab/wire/metaroce"
)

// sacks returns the SACKs to the tester among ins.
func (c *Conn) sacks(ins []*In) []*In { return c.mineOf(metaroce.OpSACK, ins) }

// sack waits for one SACK and decodes it.
func (c *Conn) sack(what string) (*In, metaroce.SACK) {
	in, _ := c.t.Expect(30*us, "SACK ("+what+")", c.mineOp(metaroce.OpSACK))
	return in, c.t.SACKOf(in)
}

// onlyHoleResent ends a selective-repeat case, after the tester's SACK
// named one hole: within the settle time the IUT resends that PSN and no
// other, and a SACK of everything up to last, triggered by the hole,
// completes the write.
func (c *Conn) onlyHoleResent(hole, last uint32) {
	t := c.t
	var resent []uint32
	for _, in := range t.Settle(120 * us) {
		if IsRequest(in) {
			resent = append(resent, in.P.PSN)
		}
	}
	if !slices.Equal(resent, []uint32{hole}) {
		t.Fatalf("resent PSNs %x, want only the hole %#x", resent, hole)
	}
	c.SACK(last, hole, 0)
	if wc, _ := c.WaitCompletion(20 * us); wc == nil || wc.Status != "success" {
		t.Errorf("completion %+v, want success", wc)
	}
}

// bitmapPSNs lists the PSNs a SACK's bitmap names.
func bitmapPSNs(cum uint32, s *metaroce.SACK) []uint32 {
	var out []uint32
	for i := range 32 * s.Words {
		if s.Has(i) {
			out = append(out, psnAdd(cum, 2+i))
		}
	}
	return out
}

var metaCases = []Case{
	{ID: "meta/write-placement", Mode: endpoint.ModeMetaRoCE, Title: "MetaRoCE WRITE DATA: opcodes, placement header per packet, port range",
		Cites: []string{"MR-1.4", "MR-2.2", "MR-2.3", "MR-4.9"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{Mode: endpoint.ModeMetaRoCE, MTU: 1024})
			c.Fill(0, pattern(3072, 3))
			c.Post(WR{WRID: 4, Op: "write", Len: 3072, RemoteAddr: 0x7000, RKey: 0x99})
			got := c.requests(3, 50*us)
			for i, in := range got {
				c.checkCommon(in)
				h, data := t.PlacementOf(in)
				wantOp := metaroce.OpDataBase | []wire.Opcode{wire.OpWriteFirst, wire.OpWriteMiddle, wire.OpWriteLast}[i]
				wantFlags := []uint8{metaroce.PlaceFirst, 0, metaroce.PlaceLast}[i]
				if wire.Opcode(in.P.Opcode) != wantOp || h.Flags != wantFlags || h.Addr != 0x7000+uint64(i)*1024 || h.RKey != 0x99 || h.MsgLen != 3072 || in.P.PSN != psnAdd(c.RPSN, i) {
					t.Errorf("packet %d: opcode %#x PSN %#x placement %+v, want %#x flags %d addr %#x rkey 0x99 len 3072", i, in.P.Opcode, in.P.PSN, h, wantOp, wantFlags, 0x7000+i*1024)
				}
				if !bytes.Equal(data, pattern(3072, 3)[i*1024:(i+1)*1024]) {
					t.Errorf("packet %d carries the wrong bytes", i)
				}
				if in.P.SrcPort < 0xC000 {
					t.Errorf("packet %d from UDP port %#x, want 0xC000–0xFFFF", i, in.P.SrcPort)
				}
			}
			c.SACK(psnAdd(c.RPSN, 2), psnAdd(c.RPSN, 2), 0)
			if wc, _ := c.WaitCompletion(20 * us); wc == nil || wc.Status != "success" {
				t.Errorf("completion after the SACK: %+v", wc)
			}
			for _, in := range t.Collect(300 * us) {
				if IsRequest(in) {
					t.Errorf("PSN %#x resent after it was acknowledged", in.P.PSN)
				}
			}
		}},
	{ID: "meta/send-ssn", Mode: endpoint.ModeMetaRoCE, Title: "MetaRoCE SEND DATA carries the message's SSN and byte offset",
		Cites: []string{"MR-2.2", "MR-2.4"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{Mode: endpoint.ModeMetaRoCE, MTU: 1024})
			c.Post(WR{WRID: 1, Op: "send", Len: 2048})
			c.Post(WR{WRID: 2, Op: "write", Len: 10, RemoteAddr: 0x10, RKey: 1})
			c.Post(WR{WRID: 3, Op: "send_imm", Len: 10, Imm: 0xAB})
			got := c.requests(4, 50*us)
			type w struct {
				op   wire.Opcode
				ssn  uint32
				addr uint64
			}
			want := []w{{wire.OpSendFirst, 0, 0}, {wire.OpSendLast, 0, 1024}, {wire.OpWriteOnly, 0, 0x10}, {wire.OpSendOnlyImm, 1, 0}}
			for i, in := range got {
				h, _ := t.PlacementOf(in)
				if i == 2 {
					continue // a plain WRITE takes no SSN
				}
				if wire.Opcode(in.P.Opcode) != metaroce.OpDataBase|want[i].op || h.MsgSeq != want[i].ssn || h.Addr != want[i].addr {
					t.Errorf("packet %d: opcode %#x MsgSeq %d Addr %d, want %#x %d %d", i, in.P.Opcode, h.MsgSeq, h.Addr, metaroce.OpDataBase|want[i].op, want[i].ssn, want[i].addr)
				}
				if i == 3 && (h.Flags&metaroce.PlaceImm == 0 || h.Imm != 0xAB) {
					t.Errorf("SEND with immediate: flags %#x imm %#x", h.Flags, h.Imm)
				}
			}
		}},
	{ID: "meta/selective-repeat", Mode: endpoint.ModeMetaRoCE, Title: "a SACK with a hole: only the lost PSN is resent",
		Cites: []string{"MR-4.9", "MR-4.10"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{Mode: endpoint.ModeMetaRoCE, MTU: 1024})
			c.Post(WR{WRID: 1, Op: "write", Len: 8 * 1024, RemoteAddr: 0x1000, RKey: 3})
			c.requests(8, 50*us)
			p := func(i int) uint32 { return psnAdd(c.RPSN, i) }
			c.SACK(p(1), p(7), 0, p(3), p(4), p(5), p(6), p(7))
			c.onlyHoleResent(p(2), p(7))
		}},
	{ID: "meta/reorder-window", Mode: endpoint.ModeMetaRoCE, Prompt: true,
		Title: "a PSN overtaken on its path is not resent within the reordering window; a hole that stays is resent before the timeout",
		Cites: []string{"MR-4.10", "MR-4.20"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{Mode: endpoint.ModeMetaRoCE, MTU: 1024})
			c.Post(WR{WRID: 1, Op: "write", Len: 8 * 1024, RemoteAddr: 0x1000, RKey: 3})
			c.requests(8, 50*us)
			p := func(i int) uint32 { return psnAdd(c.RPSN, i) }
			// PSN+1 arrives first and PSN+0 right after it, as a
			// sprayed fabric delivers them: reordering, not loss.
			c.SACK(p(-1), p(1), 0, p(1))
			c.SACK(p(1), p(0), 0)
			for _, in := range t.Settle(20 * us) {
				if IsRequest(in) {
					t.Fatalf("PSN %#x resent after PSN+0 came one packet late; reordering within the window is not loss", in.P.PSN)
				}
			}
			// PSN+2 stays missing while PSN+3…7 arrive: lost once the
			// window passed, resent alone, well before the timeout.
			c.SACK(p(1), p(7), 0, p(3), p(4), p(5), p(6), p(7))
			var resent []uint32
			for _, in := range t.Settle(90 * us) {
				if IsRequest(in) {
					resent = append(resent, in.P.PSN)
				}
			}
			if !slices.Equal(resent, []uint32{p(2)}) {
				t.Fatalf("resent PSNs %x within 90 µs, want only the hole %#x (before the 200 µs timeout)", resent, p(2))
			}
			c.SACK(p(7), p(2), 0)
			if wc, _ := c.WaitCompletion(20 * us); wc == nil || wc.Status != "success" {
				t.Errorf("completion %+v, want success", wc)
			}
		}},
	{ID: "meta/trim-retransmit", Mode: endpoint.ModeMetaRoCE, Title: "a SACK with TRIM: that PSN is resent at once",
		Cites: []string{"MR-4.11"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{Mode: endpoint.ModeMetaRoCE, MTU: 1024})
			c.Post(WR{WRID: 1, Op: "write", Len: 4 * 1024, RemoteAddr: 0x1000, RKey: 3})
			c.requests(4, 50*us)
			c.SACK(c.RPSN, psnAdd(c.RPSN, 1), metaroce.SACKTrim)
			re := c.requests(1, 60*us)[0]
			if re.P.PSN != psnAdd(c.RPSN, 1) {
				t.Errorf("resent PSN %#x, want the trimmed %#x", re.P.PSN, psnAdd(c.RPSN, 1))
			}
		}},
	{ID: "meta/read-gap", Mode: endpoint.ModeMetaRoCE, Title: "a gap in READ responses: placed on arrival, the missing run re-requested",
		Cites: []string{"MR-4.12", "MR-4.5"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{Mode: endpoint.ModeMetaRoCE, MTU: 1024})
			c.Post(WR{WRID: 6, Op: "read", Offset: 0, Len: 4096, RemoteAddr: 0x20000, RKey: 5})
			rq := c.requests(1, 50*us)[0]
			if rq.P.Opcode != uint8(wire.OpReadRequest) || rq.P.DMALen != 4096 {
				t.Fatalf("READ request opcode %#x len %d", rq.P.Opcode, rq.P.DMALen)
			}
			data := pattern(4096, 0x66)
			ops := []wire.Opcode{wire.OpReadResponseFirst, wire.OpReadResponseMiddle, wire.OpReadResponseMiddle, wire.OpReadResponseLast}
			resp := func(i int) {
				h := metaroce.Placement{Addr: 0x20000 + uint64(i)*1024, MsgLen: 4096}
				if i == 0 {
					h.Flags = metaroce.PlaceFirst
				}
				if i == 3 {
					h.Flags = metaroce.PlaceLast
				}
				c.Data(ops[i], psnAdd(c.RPSN, i), h, data[i*1024:(i+1)*1024], false)
			}
			resp(0)
			resp(2)
			resp(3)
			re := c.requests(1, 60*us)[0]
			if re.P.Opcode != uint8(wire.OpReadRequest) || re.P.PSN != psnAdd(c.RPSN, 1) || re.P.VA != 0x20400 || re.P.DMALen != 1024 {
				t.Fatalf("re-request opcode %#x PSN %#x VA %#x len %d, want READ of the one missing response (PSN %#x VA 0x20400 len 1024)",
					re.P.Opcode, re.P.PSN, re.P.VA, re.P.DMALen, psnAdd(c.RPSN, 1))
			}
			resp(1)
			wc, _ := c.WaitCompletion(20 * us)
			if wc == nil || wc.WRID != 6 || wc.Status != "success" || !bytes.Equal(c.Mem(0, 4096), data) {
				t.Errorf("READ completion %+v; want wr 6 success with the data placed", wc)
			}
		}},
	{ID: "meta/out-of-order", Mode: endpoint.ModeMetaRoCE, Title: "out-of-order DATA placed on arrival; SACK cumulative PSN, bitmap and trigger",
		Cites: []string{"MR-2.5", "MR-2.6", "MR-5.11", "MR-5.13"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{Mode: endpoint.ModeMetaRoCE})
			p := func(i int) uint32 { return psnAdd(c.PSN, i) }
			w := func(i int) { c.MetaWrite(p(i), c.QP.Buf.Addr+uint64(i)*512, pattern(512, byte(i+1)), false) }
			check := func(what string, cum uint32, trig uint32, bits ...uint32) {
				in, s := c.sack(what)
				if in.P.PSN != cum || s.Trigger != trig || !slices.Equal(bitmapPSNs(in.P.PSN, &s), bits) || s.Flags != 0 {
					t.Errorf("%s: SACK C=%#x trigger %#x flags %#x bitmap %x, want C=%#x trigger %#x bitmap %x",
						what, in.P.PSN, s.Trigger, s.Flags, bitmapPSNs(in.P.PSN, &s), cum, trig, bits)
				}
			}
			w(1)
			check("after PSN+1", p(-1), p(1), p(1))
			if !bytes.Equal(c.Mem(512, 512), pattern(512, 2)) {
				t.Errorf("PSN+1 not placed on arrival")
			}
			w(3)
			check("after PSN+3", p(-1), p(3), p(1), p(3))
			w(0)
			check("after PSN+0", p(1), p(0), p(3))
			w(2)
			check("after PSN+2 filled the last hole", p(3), p(2))
			for i := range 4 {
				if !bytes.Equal(c.Mem(uint64(i)*512, 512), pattern(512, byte(i+1))) {
					t.Errorf("PSN+%d's data missing", i)
				}
			}
		}},
	{ID: "meta/duplicate", Mode: endpoint.ModeMetaRoCE, Title: "a duplicate DATA packet: SACK with DUP, not placed again",
		Cites: []string{"MR-2.6", "MR-5.14"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{Mode: endpoint.ModeMetaRoCE})
			c.MetaWrite(c.PSN, c.QP.Buf.Addr, pattern(64, 1), true)
			c.sack("first")
			c.MetaWrite(c.PSN, c.QP.Buf.Addr, pattern(64, 2), false)
			in, s := c.sack("duplicate")
			if s.Flags&metaroce.SACKDup == 0 || s.Trigger != c.PSN || in.P.PSN != c.PSN {
				t.Errorf("duplicate: SACK C=%#x trigger %#x flags %#x, want DUP for %#x", in.P.PSN, s.Trigger, s.Flags, c.PSN)
			}
			if !bytes.Equal(c.Mem(0, 64), pattern(64, 1)) {
				t.Errorf("the duplicate was placed again")
			}
		}},
	{ID: "meta/trimmed", Mode: endpoint.ModeMetaRoCE, Title: "a trimmed packet (DSCP 63): SACK with TRIM, nothing placed",
		Cites: []string{"MR-2.6", "MR-5.16"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{Mode: endpoint.ModeMetaRoCE})
			c.MetaWrite(c.PSN, c.QP.Buf.Addr, pattern(64, 1), true)
			c.sack("first")
			h := metaroce.Placement{Flags: metaroce.PlaceFirst | metaroce.PlaceLast, Addr: c.QP.Buf.Addr + 64, RKey: c.QP.Buf.RKey, MsgLen: 64}
			p := c.hdr(metaroce.OpDataBase|wire.OpWriteOnly, psnAdd(c.PSN, 1), 63, true)
			t.Send(p, metaroce.AppendPlacement(nil, &h))
			in, s := c.sack("trimmed")
			if s.Flags&metaroce.SACKTrim == 0 || s.Trigger != psnAdd(c.PSN, 1) || in.P.PSN != c.PSN {
				t.Errorf("trimmed: SACK C=%#x trigger %#x flags %#x, want TRIM for %#x", in.P.PSN, s.Trigger, s.Flags, psnAdd(c.PSN, 1))
			}
		}},
	{ID: "meta/sack-coalescing", Mode: endpoint.ModeMetaRoCE, Title: "in-order DATA: a SACK at the latest after 16 packets",
		Cites: []string{"MR-5.15"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{Mode: endpoint.ModeMetaRoCE})
			for i := range 40 {
				c.MetaWrite(psnAdd(c.PSN, i), c.QP.Buf.Addr+uint64(i)*64, pattern(64, byte(i)), false)
			}
			ss := c.sacks(t.Settle(30 * us))
			if len(ss) < 2 || ss[0].P.PSN != psnAdd(c.PSN, 15) || ss[1].P.PSN != psnAdd(c.PSN, 31) {
				var got []uint32
				for _, s := range ss {
					got = append(got, s.P.PSN)
				}
				t.Errorf("40 in-order packets got SACKs with C=%x, want %#x and %#x first", got, psnAdd(c.PSN, 15), psnAdd(c.PSN, 31))
			}
		}},
	{ID: "meta/read-ordering", Mode: endpoint.ModeMetaRoCE, Title: "a READ request waits for the WRITEs before it",
		Cites: []string{"MR-5.12"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{Mode: endpoint.ModeMetaRoCE})
			c.Fill(0, pattern(256, 1))
			rq := c.Req(wire.OpReadRequest, psnAdd(c.PSN, 1))
			rq.VA, rq.RKey, rq.DMALen, rq.AckReq = c.QP.Buf.Addr, c.QP.Buf.RKey, 256, true
			t.Send(rq, nil)
			for _, in := range t.Collect(20 * us) {
				if c.Mine(in) && in.P.Opcode >= uint8(metaroce.OpDataBase|wire.OpReadResponseFirst) {
					t.Fatalf("READ answered before the earlier PSN arrived")
				}
			}
			c.MetaWrite(c.PSN, c.QP.Buf.Addr, pattern(256, 2), false)
			in, _ := t.Expect(30*us, "READ response", func(in *In) bool {
				return c.Mine(in) && in.P.Opcode == uint8(metaroce.OpDataBase|wire.OpReadResponseOnly)
			})
			if _, data := t.PlacementOf(in); !bytes.Equal(data, pattern(256, 2)) || in.P.PSN != psnAdd(c.PSN, 1) {
				t.Errorf("READ response PSN %#x does not carry the data the earlier WRITE wrote", in.P.PSN)
			}
		}},
	{ID: "mp/spray", Mode: endpoint.ModeMetaRoCE, Title: "a 4-path QP sprays over 4 ports in 0xC000–0xFFFF; control on path 0",
		Cites: []string{"MR-1.4", "MR-6.1"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{Mode: endpoint.ModeMetaRoCE, Paths: 4, MTU: 1024})
			c.Post(WR{WRID: 1, Op: "write", Len: 16 * 1024, RemoteAddr: 0x1000, RKey: 3})
			ports := map[uint16]int{}
			for _, in := range c.requests(16, 50*us) {
				ports[in.P.SrcPort]++
				if in.P.SrcPort < 0xC000 {
					t.Errorf("port %#x outside 0xC000–0xFFFF", in.P.SrcPort)
				}
			}
			if len(ports) != 4 {
				t.Errorf("16 packets over %d ports %v, want 4", len(ports), ports)
			}
			if ports[c.Hello.P.SrcPort] == 0 {
				t.Errorf("HELLO from port %#x, which is none of the paths' %v", c.Hello.P.SrcPort, ports)
			}
		}},
	{ID: "mp/reselect", Timeouts: true, Mode: endpoint.ModeMetaRoCE, Title: "a timeout moves the path of una to a new port",
		Cites: []string{"MR-6.4", "MR-4.13"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{Mode: endpoint.ModeMetaRoCE, Paths: 2, MTU: 1024})
			c.Post(WR{WRID: 1, Op: "write", Len: 2 * 1024, RemoteAddr: 0x1000, RKey: 3})
			ports := map[uint16]bool{}
			first := c.requests(2, 50*us)
			for _, in := range first {
				ports[in.P.SrcPort] = true
			}
			again := c.requests(2, 400*us)
			re := again[0]
			moved := false
			for _, in := range again {
				if in.P.PSN == c.RPSN && !ports[in.P.SrcPort] && in.P.SrcPort >= 0xC000 {
					moved = true
				}
			}
			if !moved {
				t.Errorf("after the timeout PSNs %#x, %#x went on ports %#x, %#x (paths %v), want PSN %#x on a new port in 0xC000–0xFFFF",
					again[0].P.PSN, again[1].P.PSN, again[0].P.SrcPort, again[1].P.SrcPort, ports, c.RPSN)
			}
			if g := re.At.Sub(first[1].At); g < 150*us-t.Jitter() || g > 260*us+t.Jitter() {
				t.Errorf("retransmission %v after the last packet, want the 200us timeout", g)
			}
		}},
}
