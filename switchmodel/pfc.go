package switchmodel

import (
	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/wire"
)

// PFCFrameLen is the Len of the PFC frames the switch sends: the 64-byte
// minimum frame without its FCS, as wire.Packet.Len counts.
const PFCFrameLen = wire.MinFrameBytes - wire.FCSBytes

// checkXoff pauses the upstream of PG i once its shared use reaches the
// threshold or it has spilled into headroom.
func (pt *Port) checkXoff(i int) {
	g := &pt.pg[i]
	if !g.lossless || g.xoff {
		return
	}
	m := &pt.swRx.mmu
	sh := m.sharedOf(g)
	if g.hdrm == 0 && (sh == 0 || sh < m.threshold(0)) {
		return
	}
	g.xoff = true
	pt.ctl(i).xoffSince = pt.swRx.sched.Now()
	pt.signal(i, true)
	pt.armRefresh()
}

// checkXon resumes the upstream of a paused PG i once its headroom is empty
// and its shared use is XOnOffset below the threshold (or zero).
func (pt *Port) checkXon(i int) {
	g := &pt.pg[i]
	if !g.xoff || g.hdrm > 0 {
		return
	}
	m := &pt.swRx.mmu
	sh := m.sharedOf(g)
	if sh > 0 && sh+pt.swRx.cfg.PFC.XOnOffset > m.threshold(0) {
		return
	}
	g.xoff = false
	c := pt.ctl(i)
	c.xoffTotal += pt.swRx.sched.Now().Sub(c.xoffSince)
	pt.signal(i, false)
}

// signal queues PG i's pause state for the next PFC frame out of this port.
func (pt *Port) signal(i int, xoff bool) {
	pt.pg[i].signal = true
	pt.pfcPending = true
	if f := pt.sw.onPFC; f != nil {
		f(pt.idx, i, xoff)
	}
	pt.kick()
}

// buildPFC makes one frame carrying the current state of every PG with a
// pending signal: the XOFF quanta for a paused PG, 0 (XON) for the others.
func (pt *Port) buildPFC() *wire.Packet {
	f := &wire.Packet{
		Kind:      wire.KindPFC,
		Len:       PFCFrameLen,
		DstMAC:    wire.PFCDstMAC,
		EtherType: wire.EtherTypeMACControl,
	}
	for i := range pt.pg {
		g := &pt.pg[i]
		if !g.signal {
			continue
		}
		g.signal = false
		f.ClassEnable |= 1 << uint(i)
		if g.xoff {
			f.Quanta[i] = pt.sw.cfg.PFC.Quanta
			pt.ctl(i).xoffFrames++
		} else {
			pt.ctl(i).xonFrames++
		}
	}
	pt.pfcPending = false
	pt.pfcTx++
	return f
}

// armRefresh makes sure a refresh is due within half the XOFF pause time.
func (pt *Port) armRefresh() {
	if pt.refreshArm {
		return
	}
	pt.refreshArm = true
	d := wire.PauseTime(pt.rate, pt.sw.cfg.PFC.Quanta) / 2
	pt.sw.sched.AfterFunc(d, pt.refreshFn)
}

// refresh re-sends XOFF for every PG still paused, before its pause expires.
func (pt *Port) refresh() {
	pt.refreshArm = false
	any := false
	for i := range pt.pg {
		if pt.pg[i].xoff {
			pt.pg[i].signal = true
			any = true
		}
	}
	if any {
		pt.pfcPending = true
		pt.armRefresh()
		pt.kick()
	}
}

// receivePFC applies a PFC frame to this port's egress: each enabled
// lossless priority stops for its quanta × 512 bit times at the port's
// rate, or resumes on a zero quanta. Priorities not configured lossless
// ignore PFC (counted as received).
func (pt *Port) receivePFC(p *wire.Packet) {
	pt.pfcRx++
	lossless := pt.sw.cfg.PFC.LosslessPriorities
	for i := range NumTC {
		if p.ClassEnable&(1<<uint(i)) == 0 {
			continue
		}
		pt.ctl(i).pfcRx++
		if lossless.Has(i) {
			pt.pauseClass(i, p.Quanta[i])
		}
	}
}

// receivePause applies an 802.3x PAUSE frame: every class of the port
// stops for Quanta[0].
func (pt *Port) receivePause(p *wire.Packet) {
	pt.pfcRx++
	for i := range NumTC {
		pt.ctl(i).pfcRx++
		pt.pauseClass(i, p.Quanta[0])
	}
}

func (pt *Port) pauseClass(i int, quanta uint16) {
	q, c := &pt.q[i], pt.ctl(i)
	if q.storm {
		c.pfcIgnored++
		return
	}
	if quanta == 0 {
		pt.resume(i)
		return
	}
	s := pt.sw
	now := s.sched.Now()
	d := wire.PauseTime(pt.rate, quanta)
	if !q.paused {
		q.paused = true
		c.pausedSince = now
		pt.update(i)
		pt.armWatchdog(i)
	}
	c.pausedUntil = now.Add(d)
	if c.pauseTimer != nil {
		c.pauseTimer.Stop()
	}
	c.pauseTimer = s.sched.AfterFunc(d, pt.timerFns(i).expireFn)
}

func (pt *Port) pauseExpired(i int) {
	if pt.q[i].paused && pt.sw.sched.Now() >= pt.ctl(i).pausedUntil {
		pt.resume(i)
	}
}

// resume ends a pause of class i and restarts the transmitter.
func (pt *Port) resume(i int) {
	q := &pt.q[i]
	if !q.paused {
		return
	}
	q.paused = false
	c := pt.ctl(i)
	c.pausedTotal += pt.sw.sched.Now().Sub(c.pausedSince)
	pt.update(i)
	stopTimer(&c.pauseTimer)
	stopTimer(&c.wdTimer)
	pt.kick()
}

func stopTimer(t *clock.Timer) {
	if *t != nil {
		(*t).Stop()
		*t = nil
	}
}
