package endpoint_test

import (
	"math"
	"sort"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/switchmodel"
)

// incastCfg is an N:1 incast on one 100G switch: hosts 1..N each stream
// payload-free 1 MiB WRITEs (16 outstanding) to host 0 for Dur.
type incastCfg struct {
	senders int
	mode    endpoint.Mode
	cc      string
	params  map[string]string
	swcfg   func(*switchmodel.Config)
	dur     clock.Duration
	window  clock.Duration // rate sampling window
	tol     float64        // convergence: every flow within tol of the fair share (default 0.1)
	seed    uint64         // star seed
}

// incastResult is what an incast run measured.
type incastResult struct {
	converge   clock.Duration // from the start: every window after it has every flow within tol of the fair share (-1: never)
	pauses     int64          // PFC XOFF frames the switch sent
	pauseTime  clock.Duration // total time the senders' data priority was paused
	peakQueue  int64          // peak egress queue (bytes) toward the receiver, TC3
	lateQueue  int64          // peak sampled queue after convergence (or over the last half)
	rates      []float64      // per-flow goodput over the last quarter, Gb/s
	total      float64        // aggregate goodput over the last quarter, Gb/s
	drops      int64
	worstShare float64 // worst |rate/fair - 1| over the last quarter's windows
}

func runIncast(t *testing.T, c incastCfg) incastResult {
	t.Helper()
	if c.tol == 0 {
		c.tol = 0.10
	}
	if c.window == 0 {
		c.window = 100 * clock.Microsecond
	}
	s := newStar(t, starOpts{seed: c.seed, n: c.senders + 1, swcfg: c.swcfg, nicOpts: func(i int, o *endpoint.Options) { o.CCParams = c.params }})
	var rx []*endpoint.QP
	for i := 1; i <= c.senders; i++ {
		a, b := connect(t, s.nics[i], s.nics[0], endpoint.QPConfig{Mode: c.mode, CC: c.cc}, endpoint.QPConfig{Mode: c.mode, CC: c.cc})
		rx = append(rx, b.qp)
		lmr, _ := a.pd.RegMRLen(1<<20, allAccess)
		rmr, _ := b.pd.RegMRLen(1<<20, allAccess)
		stop := false
		post := func() {
			if err := a.qp.PostSend(endpoint.SendWR{Opcode: endpoint.WRWrite, Signaled: true,
				Local: endpoint.SGE{Addr: lmr.Addr, Length: 1 << 20, LKey: lmr.LKey}, RemoteAddr: rmr.Addr, RKey: rmr.RKey}); err != nil {
				t.Fatal(err)
			}
		}
		a.scq.OnCompletion(func(wc endpoint.WC) {
			if wc.Status != endpoint.StatusSuccess {
				t.Fatalf("completion %v: %v", wc.Status, wc.Err)
			}
			if !stop && s.e.Now() < clock.Time(c.dur) {
				post()
			}
		})
		for range 16 {
			post()
		}
	}
	port := s.sw.Port(0)
	nw := int(c.dur / c.window)
	type sample struct {
		bytes []int64
		queue int64
	}
	samples := make([]sample, 0, nw+1)
	var tick func()
	tick = func() {
		sm := sample{queue: port.Queue(3).DepthBytes}
		for _, q := range rx {
			sm.bytes = append(sm.bytes, q.Stats().RxDataBytes)
		}
		samples = append(samples, sm)
		if len(samples) <= nw {
			s.e.AfterFunc(c.window, tick)
		}
	}
	s.e.AfterFunc(0, tick)
	s.e.RunUntil(clock.Time(c.dur))
	// windows: rate of each flow per window; the fair share is the window's
	// aggregate over N.
	ok := make([]bool, nw)
	dev := make([]float64, nw)
	for w := 0; w < nw && w+1 < len(samples); w++ {
		var tot float64
		d := make([]float64, c.senders)
		for i := range d {
			d[i] = float64(samples[w+1].bytes[i] - samples[w].bytes[i])
			tot += d[i]
		}
		fair := tot / float64(c.senders)
		worst := math.Inf(1)
		if fair > 0 {
			worst = 0
			for _, x := range d {
				worst = max(worst, math.Abs(x/fair-1))
			}
		}
		dev[w], ok[w] = worst, worst <= c.tol
	}
	res := incastResult{converge: -1}
	for w := nw - 1; w >= 0; w-- {
		if !ok[w] {
			if w < nw-1 {
				res.converge = clock.Duration(w+1) * c.window
			}
			break
		}
		if w == 0 {
			res.converge = 0
		}
	}
	from := nw / 2
	if res.converge >= 0 {
		from = int(res.converge / c.window)
	}
	for _, sm := range samples[from:] {
		res.lateQueue = max(res.lateQueue, sm.queue)
	}
	q := nw * 3 / 4
	for w := q; w < nw; w++ {
		res.worstShare = max(res.worstShare, dev[w])
	}
	last, first := samples[len(samples)-1], samples[q]
	span := clock.Duration(len(samples)-1-q) * c.window
	for i := range c.senders {
		r := float64(last.bytes[i]-first.bytes[i]) * 8 / span.Seconds() / 1e9
		res.rates = append(res.rates, r)
		res.total += r
	}
	for i := range s.sw.NumPorts() {
		st := s.sw.Port(i).Stats()
		res.pauses += st.PFCTx
		for _, n := range st.Drops {
			res.drops += n
		}
	}
	for _, n := range s.nics[1:] {
		res.pauseTime += n.PausedTime(3)
	}
	res.peakQueue = port.Queue(3).PeakBytes
	return res
}

// median returns the median of xs (sorted copy).
func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func minOf(xs []float64) float64 {
	m := math.Inf(1)
	for _, x := range xs {
		m = min(m, x)
	}
	return m
}
