package switchmodel

// The PFC watchdog. When a lossless egress queue becomes paused, a check is
// armed Detect later; a resume disarms it. If the check finds the queue
// still paused (continuously, refreshes included) and holding packets, the
// watchdog fires: the queue enters storm mode for Recover, during which
// pauses for it are ignored and, with WatchdogDrop, its packets and every
// packet arriving for it are dropped (reason "watchdog"). A check that finds
// the queue empty looks again Detect later. Each firing counts one event,
// each end of storm mode one restore.

func (pt *Port) armWatchdog(i int) {
	d := pt.sw.cfg.PFC.Watchdog.Detect
	if d <= 0 {
		return
	}
	c := pt.timerFns(i)
	stopTimer(&c.wdTimer)
	c.wdTimer = pt.sw.sched.AfterFunc(d, c.wdFn)
}

func (pt *Port) watchdogCheck(i int) {
	q, c := &pt.q[i], pt.ctl(i)
	c.wdTimer = nil
	if !q.paused || q.storm {
		return
	}
	if q.n == 0 {
		pt.armWatchdog(i)
		return
	}
	s := pt.sw
	c.wdEvents++
	q.storm = true
	q.paused = false
	c.pausedTotal += s.sched.Now().Sub(c.pausedSince)
	stopTimer(&c.pauseTimer)
	pt.update(i)
	if s.cfg.PFC.Watchdog.Action == WatchdogDrop {
		for q.n > 0 {
			e := q.pop()
			pt.update(i)
			in := s.ports[e.in]
			s.mmu.release(&in.pg[e.pg], int64(e.size))
			pt.drop(uint8(i), dropWatchdog, e.p)
			in.checkXon(int(e.pg))
		}
	}
	s.sched.AfterFunc(s.cfg.PFC.Watchdog.Recover, c.recoverFn)
	pt.kick()
}

func (pt *Port) watchdogRecover(i int) {
	pt.q[i].storm = false
	pt.ctl(i).wdRestores++
}
