package endpoint

import (
	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/wire"
	"github.com/rocelab/rocelab/wire/metaroce"
)

// HelloRetries is how many times a Hello is sent before the QP falls back
// to RoCEv2.
const HelloRetries = 4

// negotiation is the in-band MetaRoCE agreement of a QP. A QP configured
// for MetaRoCE whose peer's ConnInfo offers CapMetaRoCE sends a Hello at
// RTS and holds its send queue; the peer, if it also wants MetaRoCE,
// answers HelloAck and switches. Either a HelloAck or the peer's own Hello
// concludes the agreement. After HelloRetries unanswered Hellos (one per
// QP timeout) the QP falls back to RoCEv2. A QP that does not want
// MetaRoCE, or whose peer did not offer it, never sends MetaRoCE packets.
type negotiation struct {
	done  bool
	tries int
	timer clock.Timer
}

func (g *negotiation) start(qp *QP) {
	if qp.cfg.Mode != ModeMetaRoCE || qp.remote.Caps&metaroce.CapMetaRoCE == 0 {
		g.conclude(qp, ModeRoCEv2)
		return
	}
	if g.done {
		return
	}
	g.send(qp)
}

func (g *negotiation) send(qp *QP) {
	if g.tries >= HelloRetries && !qp.nic.mut(MutNoFallback) {
		qp.ctr.fallbacks++
		g.conclude(qp, ModeRoCEv2)
		return
	}
	g.tries++
	qp.sendHello(metaroce.OpHello)
	g.timer = qp.nic.sched.AfterFunc(qp.cfg.Timeout, func() {
		g.timer = nil
		if !g.done && qp.state == StateRTS {
			g.send(qp)
		}
	})
}

// conclude fixes the QP's mode and releases its send queue.
func (g *negotiation) conclude(qp *QP, m Mode) {
	g.stop()
	if g.done {
		return
	}
	g.done = true
	qp.mode = m
	if m == ModeMetaRoCE && qp.cfg.Paths > 1 && qp.remote.Caps&metaroce.CapMultipath != 0 || m == ModeMetaRoCE && qp.cfg.Paths > 1 {
		_ = qp.req.setPaths(qp.cfg.Paths)
	}
	if qp.state == StateRTS {
		qp.nic.activate(qp)
	}
}

func (g *negotiation) stop() {
	if g.timer != nil {
		g.timer.Stop()
		g.timer = nil
	}
}

// onHello handles Hello and HelloAck.
func (g *negotiation) onHello(qp *QP, p *wire.Packet) {
	var h metaroce.Hello
	if p.Raw == nil || metaroce.DecodeHello(p.Payload(), &h) != nil {
		qp.ctr.rxDropped++
		return
	}
	if qp.cfg.Mode != ModeMetaRoCE && qp.nic.mut(MutHelloInRoCEv2) && wire.Opcode(p.Opcode) == metaroce.OpHello {
		qp.sendHello(metaroce.OpHelloAck)
	}
	if qp.cfg.Mode != ModeMetaRoCE || h.Caps&metaroce.CapMetaRoCE == 0 {
		return // a plain RoCEv2 endpoint ignores the opcode, as real NICs do
	}
	if wire.Opcode(p.Opcode) == metaroce.OpHello {
		qp.sendHello(metaroce.OpHelloAck)
	}
	if qp.state == StateRTS && !g.done {
		g.conclude(qp, ModeMetaRoCE)
	} else if qp.state == StateRTR {
		qp.mode = ModeMetaRoCE
	}
}

func (qp *QP) sendHello(op wire.Opcode) {
	n := qp.nic
	h := metaroce.Hello{Version: metaroce.HelloVersion, Paths: uint8(qp.cfg.Paths), Caps: qp.Info().Caps}
	var buf [metaroce.HelloLen]byte
	p := qp.header(op, n.opts.CtrlDSCP, false, qp.pathPort(0, 0), qp.cfg.PSN)
	qp.ctr.hellosTx++
	n.sendCtrl(n.finish(p, true, metaroce.AppendHello(buf[:0], &h), nil, 0))
}
