package compliance

import (
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/wire/cm"
)

// The Communication Manager cases (docs/metaroce-spec.md §13): the tester
// is the IUT's CM peer on QP1; the IUT's consumer is the adapter's (it
// accepts every request and confirms every reply). CM is the same in both
// modes, so every case is a rocev2 case.
var cmCases = []Case{
	{ID: "cm/req-rep", Mode: endpoint.ModeRoCEv2, Title: "a REQ for a listened service gets a REP naming the REQ's LocalCommID, same TID, the new QP; the RTU establishes it",
		Cites: []string{"MR-13.1", "MR-13.4"},
		Run: func(t *T) {
			p := t.CMPeer()
			p.listen()
			tid := p.tid()
			p.send(tid, p.req(0x1001, cmPort))
			m := p.expect(cmPrompt, cm.AttrREP)
			rep := p.rep(m)
			if m.H.TID != tid || rep.RemoteCommID != 0x1001 || rep.LocalCommID == 0 || rep.LocalQPN == 0 {
				t.Errorf("REP TID %#x, %s, QPN %#x; want TID %#x, remote 0x1001, a local ID and a QPN", m.H.TID, ids(rep.LocalCommID, rep.RemoteCommID), rep.LocalQPN, tid)
			}
			if e := p.waitEvent(cmPrompt, "connect-request"); e.QPN != rep.LocalQPN || e.RemoteQPN != testerQPN {
				t.Errorf("the REP names QP %#x, the consumer's QP is %#x (it heard the tester's as %#x, want %#x)", rep.LocalQPN, e.QPN, e.RemoteQPN, testerQPN)
			}
			p.send(tid, &cm.RTU{LocalCommID: 0x1001, RemoteCommID: rep.LocalCommID})
			p.waitEvent(cmPrompt, "established")
			p.quiet(2*cmTimeout, cm.AttrREP, "after the RTU")
		}},
	{ID: "cm/req-unlistened", Mode: endpoint.ModeRoCEv2, Title: "a REQ for a service nobody listens on gets REJ reason 8 at once, and no connection",
		Cites: []string{"MR-13.2"},
		Run: func(t *T) {
			p := t.CMPeer()
			p.listen()
			tid := p.tid()
			p.send(tid, p.req(0x1002, cmOtherPort))
			m := p.expect(cmPrompt, cm.AttrREJ)
			var rej cm.REJ
			t.must(cm.DecodeREJ(m.Data, &rej), "decode REJ")
			if m.H.TID != tid || rej.RemoteCommID != 0x1002 || rej.Reason != cm.RejectInvalidServiceID {
				t.Errorf("REJ TID %#x, remote %#x, reason %d; want TID %#x, remote 0x1002, reason 8 (invalid service ID)", m.H.TID, rej.RemoteCommID, rej.Reason, tid)
			}
			p.poll()
			if n := p.count("connect-request"); n != 0 {
				t.Errorf("the consumer heard %d connect requests for a service it does not listen on", n)
			}
		}},
	{ID: "cm/dup-req", Mode: endpoint.ModeRoCEv2, Title: "a REQ sent again after the REP gets the same REP again and makes no second connection",
		Cites: []string{"MR-13.3"},
		Run: func(t *T) {
			p := t.CMPeer()
			p.listen()
			tid := p.tid()
			first := p.accepted(0x1003, tid)
			p.send(tid, p.req(0x1003, cmPort))
			again := p.rep(p.expect(cmPrompt, cm.AttrREP))
			if again.LocalCommID != first.LocalCommID || again.LocalQPN != first.LocalQPN || again.RemoteCommID != 0x1003 {
				t.Errorf("the second REP: %s QPN %#x; the first: %s QPN %#x", ids(again.LocalCommID, again.RemoteCommID), again.LocalQPN, ids(first.LocalCommID, first.RemoteCommID), first.LocalQPN)
			}
			p.send(tid, &cm.RTU{LocalCommID: 0x1003, RemoteCommID: first.LocalCommID})
			p.waitEvent(cmPrompt, "established")
			p.poll()
			if n := p.count("connect-request"); n != 1 {
				t.Errorf("the consumer heard %d connect requests for one REQ sent twice, want 1", n)
			}
		}},
	{ID: "cm/rtu-lost", Timeouts: true, Mode: endpoint.ModeRoCEv2, Title: "a REP whose RTU does not come is sent again after the CM timeout; the RTU stops it",
		Cites: []string{"MR-13.4"},
		Run: func(t *T) {
			p := t.CMPeer()
			p.listen()
			tid := p.tid()
			p.send(tid, p.req(0x1004, cmPort))
			m := p.expect(cmPrompt, cm.AttrREP)
			first := p.rep(m)
			again := p.expect(2*cmTimeout, cm.AttrREP)
			if gap := again.At.Sub(m.At); gap < cmTimeout-t.Jitter() || gap > cmTimeout+cmPrompt+t.Jitter() {
				t.Errorf("the REP came again %v after the first, want the CM timeout (%v)", gap, cmTimeout)
			}
			if r := p.rep(again); again.H.TID != tid || r.LocalCommID != first.LocalCommID || r.RemoteCommID != 0x1004 {
				t.Errorf("the REP sent again: TID %#x, %s; want the first's", again.H.TID, ids(r.LocalCommID, r.RemoteCommID))
			}
			p.send(tid, &cm.RTU{LocalCommID: 0x1004, RemoteCommID: first.LocalCommID})
			p.waitEvent(cmPrompt, "established")
			p.quiet(2*cmTimeout, cm.AttrREP, "after the RTU")
		}},
	{ID: "cm/dreq", Mode: endpoint.ModeRoCEv2, Title: "a DREQ gets a DREP with the IDs swapped and the same TID, again if the DREP was lost",
		Cites: []string{"MR-13.5"},
		Run: func(t *T) {
			p := t.CMPeer()
			p.listen()
			rep := p.established(0x1005)
			for i := range 2 {
				tid := p.tid()
				p.send(tid, &cm.DREQ{LocalCommID: 0x1005, RemoteCommID: rep.LocalCommID, RemoteQPN: rep.LocalQPN})
				m := p.expect(cmPrompt, cm.AttrDREP)
				var d cm.DREP
				t.must(cm.DecodeDREP(m.Data, &d), "decode DREP")
				if m.H.TID != tid || d.LocalCommID != rep.LocalCommID || d.RemoteCommID != 0x1005 {
					t.Errorf("DREP %d: TID %#x, %s; want TID %#x, %s", i+1, m.H.TID, ids(d.LocalCommID, d.RemoteCommID), tid, ids(rep.LocalCommID, 0x1005))
				}
			}
			p.waitEvent(cmPrompt, "disconnected")
			if n := p.count("disconnected"); n != 1 {
				t.Errorf("%d disconnected events, want 1", n)
			}
		}},
	{ID: "cm/connect", Mode: endpoint.ModeRoCEv2, Title: "the IUT's REQ names its QP, the service and its retries; a REP is confirmed by an RTU with both IDs and the TID",
		Cites: []string{"MR-13.6", "MR-13.9", "MR-13.10"},
		Run: func(t *T) {
			p := t.CMPeer()
			c := p.connect(cmPort)
			m := p.expect(cmPrompt, cm.AttrREQ)
			var req cm.REQ
			t.must(cm.DecodeREQ(m.Data, &req), "decode REQ")
			if req.LocalCommID != c.ID || req.LocalQPN != c.QPN || req.ServiceID != cm.ServiceID(cm.PortSpaceTCP, cmPort) || req.MaxCMRetries != cmRetries {
				t.Errorf("REQ local %#x QPN %#x service %#x max retries %d; want local %#x, QPN %#x, service %#x, %d retries", req.LocalCommID,
					req.LocalQPN, req.ServiceID, req.MaxCMRetries, c.ID, c.QPN, cm.ServiceID(cm.PortSpaceTCP, cmPort), cmRetries)
			}
			var ip cm.IPPrivate
			if _, err := cm.DecodeIPPrivate(req.Private, &ip); err != nil || ip.Src != p.iutIP || ip.Dst != p.ip {
				t.Errorf("REQ private data: IP CM header %+v (%v), want %v → %v", ip, err, p.iutIP, p.ip)
			}
			p.send(m.H.TID, &cm.REP{LocalCommID: 0x2001, RemoteCommID: c.ID, LocalQPN: testerQPN, StartingPSN: 0x2000, TargetAckDelay: 15})
			r := p.expect(cmPrompt, cm.AttrRTU)
			var rtu cm.RTU
			t.must(cm.DecodeRTU(r.Data, &rtu), "decode RTU")
			if r.H.TID != m.H.TID || rtu.LocalCommID != c.ID || rtu.RemoteCommID != 0x2001 {
				t.Errorf("RTU TID %#x, %s; want TID %#x, %s", r.H.TID, ids(rtu.LocalCommID, rtu.RemoteCommID), m.H.TID, ids(c.ID, 0x2001))
			}
			if e := p.waitEvent(cmPrompt, "replied"); e.RemoteQPN != testerQPN {
				t.Errorf("the consumer heard the tester's QP as %#x, want %#x", e.RemoteQPN, testerQPN)
			}
			p.quiet(2*cmTimeout, cm.AttrREQ, "after the REP")
			p.send(p.tid(), &cm.DREQ{LocalCommID: 0x2001, RemoteCommID: c.ID})
			p.expect(cmPrompt, cm.AttrDREP)
		}},
	{ID: "cm/req-retry", Timeouts: true, Mode: endpoint.ModeRoCEv2, Title: "an unanswered REQ is sent again every CM timeout, MaxCMRetries times, then given up",
		Cites: []string{"MR-13.6"},
		Run: func(t *T) {
			p := t.CMPeer()
			c := p.connect(cmPort)
			first := p.expect(cmPrompt, cm.AttrREQ)
			reqs := []*mad{first}
			for _, m := range p.collect((cmRetries + 2) * cmTimeout) {
				if m.H.Attr == cm.AttrREQ {
					reqs = append(reqs, m)
				}
			}
			if len(reqs) != 1+cmRetries {
				t.Errorf("%d REQs, want 1 and %d retries", len(reqs), cmRetries)
			}
			for i := 1; i < len(reqs); i++ {
				var req cm.REQ
				t.must(cm.DecodeREQ(reqs[i].Data, &req), "decode REQ")
				if gap := reqs[i].At.Sub(reqs[i-1].At); gap < cmTimeout-t.Jitter() || gap > cmTimeout+cmPrompt+t.Jitter() {
					t.Errorf("REQ %d came %v after the one before, want the CM timeout (%v)", i+1, gap, cmTimeout)
				}
				if reqs[i].H.TID != first.H.TID || req.LocalCommID != c.ID {
					t.Errorf("REQ %d: TID %#x local %#x, want the first's (%#x, %#x)", i+1, reqs[i].H.TID, req.LocalCommID, first.H.TID, c.ID)
				}
			}
			p.waitEvent(cmPrompt, "unreachable")
		}},
	{ID: "cm/mra", Timeouts: true, Mode: endpoint.ModeRoCEv2, Title: "an MRA for the REQ holds its resend for the service timeout it asks",
		Cites: []string{"MR-13.7"},
		Run: func(t *T) {
			p := t.CMPeer()
			c := p.connect(cmPort)
			m := p.expect(cmPrompt, cm.AttrREQ)
			const st = 8 // 4.096 µs × 2^8 ≈ 1.05 ms
			wait := cmMRAWait(st)
			sent := t.Now()
			p.send(m.H.TID, &cm.MRA{LocalCommID: 0x3001, RemoteCommID: c.ID, MessageMRAed: 0, ServiceTimeout: st})
			p.quiet(wait-t.Jitter(), cm.AttrREQ, "within the MRA's service timeout")
			due := sent.Add(wait + cmTimeout)
			again := p.expect(max(due.Sub(t.Now()), 0)+cmPrompt, cm.AttrREQ)
			if gap := again.At.Sub(sent); gap < wait-t.Jitter() {
				t.Errorf("the REQ was sent again %v after the MRA, within its service timeout (%v)", gap, wait)
			}
			p.send(m.H.TID, &cm.REJ{LocalCommID: 0x3001, RemoteCommID: c.ID, Reason: cm.RejectConsumer})
			p.waitEvent(cmPrompt, "rejected")
		}},
	{ID: "cm/sidr", Mode: endpoint.ModeRoCEv2, Title: "a SIDR_REQ for a listened UD service gets a valid SIDR_REP with its QP and Q_Key",
		Cites: []string{"MR-13.8"},
		Run: func(t *T) {
			p := t.CMPeer()
			p.listen()
			tid := p.tid()
			svc := cm.ServiceID(cm.PortSpaceUDP, cmPort)
			p.send(tid, &cm.SIDRREQ{RequestID: 0x4001, PKey: 0xFFFF, ServiceID: svc})
			m := p.expect(cmPrompt, cm.AttrSIDRREP)
			var rep cm.SIDRREP
			t.must(cm.DecodeSIDRREP(m.Data, &rep), "decode SIDR_REP")
			if m.H.TID != tid || rep.RequestID != 0x4001 || rep.Status != cm.SIDRValid || rep.QKey != cmQKey || rep.QPN == 0 || rep.ServiceID != svc {
				t.Errorf("SIDR_REP TID %#x request %#x status %d QPN %#x Q_Key %#x service %#x; want TID %#x, 0x4001, 0, a QPN, %#x, %#x",
					m.H.TID, rep.RequestID, rep.Status, rep.QPN, rep.QKey, rep.ServiceID, tid, cmQKey, svc)
			}
			if e := p.waitEvent(cmPrompt, "connect-request"); !e.UD || e.QPN != rep.QPN {
				t.Errorf("the consumer's request: UD %v QP %#x; the SIDR_REP names %#x", e.UD, e.QPN, rep.QPN)
			}
		}},
	{ID: "cm/sidr-unlistened", Mode: endpoint.ModeRoCEv2, Title: "a SIDR_REQ for a service nobody listens on gets status 1 (service ID not supported)",
		Cites: []string{"MR-13.8"},
		Run: func(t *T) {
			p := t.CMPeer()
			p.listen()
			tid := p.tid()
			p.send(tid, &cm.SIDRREQ{RequestID: 0x4002, PKey: 0xFFFF, ServiceID: cm.ServiceID(cm.PortSpaceUDP, cmOtherPort)})
			m := p.expect(cmPrompt, cm.AttrSIDRREP)
			var rep cm.SIDRREP
			t.must(cm.DecodeSIDRREP(m.Data, &rep), "decode SIDR_REP")
			if m.H.TID != tid || rep.RequestID != 0x4002 || rep.Status != cm.SIDRNoService {
				t.Errorf("SIDR_REP TID %#x request %#x status %d; want TID %#x, 0x4002, status 1", m.H.TID, rep.RequestID, rep.Status, tid)
			}
		}},
}
