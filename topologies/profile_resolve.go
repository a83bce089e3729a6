package topologies

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rocelab/rocelab/core/clock"
)

// resolveProfiles turns the file's profile specs into profiles, each
// starting from a copy of its base. The result holds the built-ins too.
func (r *resolver) resolveProfiles(specs map[string]*ProfileSpec) map[string]*Profile {
	out := builtinProfiles()
	state := map[string]int{} // 1 resolving, 2 done
	var resolve func(name string, from Pos, by string) *Profile
	resolve = func(name string, from Pos, by string) *Profile {
		s, ok := specs[name]
		if !ok {
			return out[name]
		}
		switch state[name] {
		case 1:
			r.e.add(from, "profile %q: base %q makes a cycle", by, name)
			return nil
		case 2:
			return out[name]
		}
		state[name] = 1
		if _, builtin := out[name]; builtin {
			r.e.add(s.At, "profile %q: name of a built-in profile", name)
		}
		if !validName(name) {
			r.e.add(s.At, "profile %q: bad name (want letters, digits, - and _, starting with a letter)", name)
		}
		baseName := s.Base
		if baseName == "" {
			baseName = DefaultBE
		}
		base := resolve(baseName, s.at("base"), name)
		var p *Profile
		if base == nil {
			if _, known := specs[baseName]; !known && out[baseName] == nil {
				r.e.add(s.at("base"), "profile %q: unknown base profile %q%s", name, baseName, r.knownProfiles(specs))
			}
			p, _ = BuiltinProfile(DefaultBE)
		} else {
			p = base.clone()
		}
		p.Name = name
		r.applyProfile(p, s)
		state[name] = 2
		out[name] = p
		return p
	}
	for _, name := range sortedKeys(specs) {
		resolve(name, specs[name].At, "")
	}
	return out
}

func (r *resolver) knownProfiles(specs map[string]*ProfileSpec) string {
	names := []string{DefaultBE, DefaultFE}
	names = append(names, sortedKeys(specs)...)
	return " (known: " + strings.Join(names, ", ") + ")"
}

func checkTC(r *resolver, p Pos, what string, tc int) bool {
	if tc < 0 || tc >= NumTC {
		r.e.add(p, "%s %d out of range 0..7", what, tc)
		return false
	}
	return true
}

// applyProfile overrides p with what s sets, checking each value.
func (r *resolver) applyProfile(p *Profile, s *ProfileSpec) {
	if s.Buffer != nil {
		if *s.Buffer <= 0 {
			r.e.add(s.at("buffer"), "buffer must be positive")
		}
		p.Buffer = int64(*s.Buffer)
	}
	for _, dscp := range sortedKeys(s.DSCP) {
		tc := s.DSCP[dscp]
		at := s.at("dscp." + strconv.Itoa(dscp))
		if dscp < 0 || dscp > 63 {
			r.e.add(at, "DSCP %d out of range 0..63", dscp)
			continue
		}
		if checkTC(r, at, fmt.Sprintf("DSCP %d: traffic class", dscp), tc) {
			p.DSCP[dscp] = tc
		}
	}
	for _, tc := range sortedKeys(s.ECN) {
		if checkTC(r, s.at("ecn."+strconv.Itoa(tc)), "ecn: traffic class", tc) {
			r.applyECN(&p.ECN[tc], s.ECN[tc], tc, p.Buffer)
		}
	}
	if s.PFC != nil {
		r.applyPFC(&p.PFC, s.PFC, p.Buffer)
	}
	if s.Scheduler != nil {
		r.applyScheduler(&p.Scheduler, s.Scheduler)
	}
	if s.Trim != nil {
		p.Trim = r.applyTrim(p.Trim, s.Trim)
	}
	if s.ECMP != nil {
		r.applyECMP(&p.ECMP, s.ECMP)
	}
	for _, tc := range sortedKeys(s.QueueLimit) {
		at := s.at("queue-limit." + strconv.Itoa(tc))
		if !checkTC(r, at, "queue-limit: traffic class", tc) {
			continue
		}
		if v := int64(*s.QueueLimit[tc]); v > p.Buffer {
			r.e.add(at, "queue-limit of class %d (%s) larger than the buffer (%s)", tc, FormatSize(v), FormatSize(p.Buffer))
		} else {
			p.QueueLimit[tc] = v
		}
	}
	// Consistency across sections (a base may have set one side).
	if t := p.Trim; t != nil && p.PFC.Lossless[t.TC] {
		r.e.add(s.at("trim"), "trim: class %d is lossless; trimming needs a lossy class", t.TC)
	}
	for tc, st := range p.Scheduler.Strict {
		if !st && p.Scheduler.Weights[tc] <= 0 {
			p.Scheduler.Weights[tc] = 1
		}
		if st {
			p.Scheduler.Weights[tc] = 0
		}
	}
}

func (r *resolver) applyECN(e *ECN, s *ECNSpec, tc int, buffer int64) {
	if s.Off {
		e.Enabled = false
		return
	}
	if e.Kmax == 0 && e.Pmax == 0 {
		// A class never configured starts from the reference WRED values.
		*e = ECN{Kmin: refKmin, Kmax: refKmax, Pmax: refPmax, Mark: MarkDequeue, ScaleRate: 100 * clock.Gbps}
	}
	e.Enabled = true
	if s.Kmin != nil {
		e.Kmin = int64(*s.Kmin)
	}
	if s.Kmax != nil {
		e.Kmax = int64(*s.Kmax)
	}
	if s.Pmax != nil {
		e.Pmax = float64(*s.Pmax)
		if e.Pmax <= 0 || e.Pmax > 1 {
			r.e.add(s.at("pmax"), "ecn class %d: pmax %g out of range (0, 1]", tc, e.Pmax)
		}
	}
	if s.Mark != "" {
		switch MarkPoint(s.Mark) {
		case MarkEnqueue, MarkDequeue:
			e.Mark = MarkPoint(s.Mark)
		default:
			r.e.add(s.at("mark"), "ecn class %d: mark %q: want enqueue or dequeue", tc, s.Mark)
		}
	}
	if s.Scale != nil {
		e.ScaleRate = s.Scale.Rate
		if !s.Scale.Off && s.Scale.Rate <= 0 {
			r.e.add(s.at("scale"), "ecn class %d: scale rate must be positive", tc)
		}
	}
	if e.Kmin > e.Kmax {
		r.e.add(s.at("kmin"), "ecn class %d: kmin %s larger than kmax %s", tc, FormatSize(e.Kmin), FormatSize(e.Kmax))
	}
	if e.Kmax > buffer {
		r.e.add(s.at("kmax"), "ecn class %d: kmax %s larger than the buffer %s", tc, FormatSize(e.Kmax), FormatSize(buffer))
	}
}

func (r *resolver) applyPFC(p *PFC, s *PFCSpec, buffer int64) {
	if s.Off {
		p.Lossless = [NumTC]bool{}
		return
	}
	if s.Lossless != nil {
		p.Lossless = [NumTC]bool{}
		for i, prio := range s.Lossless {
			at := s.at("lossless." + strconv.Itoa(i))
			if !checkTC(r, at, "lossless priority", prio) {
				continue
			}
			if p.Lossless[prio] {
				r.e.add(at, "lossless priority %d listed twice", prio)
			}
			p.Lossless[prio] = true
		}
	}
	if s.Alpha != nil && s.XOFF != nil {
		r.e.add(s.at("xoff"), "pfc: give alpha (dynamic threshold) or xoff (static threshold), not both")
	}
	if s.Alpha != nil {
		p.Mode, p.Alpha = ThresholdDynamic, float64(*s.Alpha)
		if p.Alpha <= 0 || p.Alpha > 64 {
			r.e.add(s.at("alpha"), "pfc: alpha %g out of range (0, 64]", p.Alpha)
		}
	}
	if s.XOFF != nil {
		p.Mode, p.XOFF = ThresholdStatic, int64(*s.XOFF)
		if p.XOFF <= 0 || p.XOFF >= buffer {
			r.e.add(s.at("xoff"), "pfc: xoff %s must be positive and below the buffer %s", FormatSize(p.XOFF), FormatSize(buffer))
		}
	}
	if s.XONOffset != nil {
		p.XONOffset = int64(*s.XONOffset)
	}
	if p.Mode == ThresholdStatic && p.XONOffset > p.XOFF {
		r.e.add(s.at("xon-offset"), "pfc: xon-offset %s larger than xoff %s", FormatSize(p.XONOffset), FormatSize(p.XOFF))
	}
	if s.Headroom != nil {
		p.HeadroomAuto, p.Headroom = s.Headroom.Auto, s.Headroom.Bytes
		if p.Headroom > buffer {
			r.e.add(s.at("headroom"), "pfc: headroom %s larger than the buffer %s", FormatSize(p.Headroom), FormatSize(buffer))
		}
	}
	if s.Reserve != nil {
		p.Reserve = int64(*s.Reserve)
		if p.Reserve*NumTC > buffer {
			r.e.add(s.at("reserve"), "pfc: reserve %s × 8 priority groups larger than the buffer %s", FormatSize(p.Reserve), FormatSize(buffer))
		}
	}
	if s.PauseQuanta != nil {
		p.PauseQuanta = *s.PauseQuanta
		if p.PauseQuanta < 1 || p.PauseQuanta > 0xffff {
			r.e.add(s.at("pause-quanta"), "pfc: pause-quanta %d out of range 1..65535", p.PauseQuanta)
		}
	}
	if w := s.Watchdog; w != nil {
		if w.Off {
			p.Watchdog.Enabled = false
			return
		}
		p.Watchdog.Enabled = true
		if w.Detect != nil {
			p.Watchdog.Detect = clock.Duration(*w.Detect)
			if p.Watchdog.Detect <= 0 {
				r.e.add(w.at("detect"), "watchdog: detect must be positive")
			}
		}
		if w.Recover != nil {
			p.Watchdog.Recover = clock.Duration(*w.Recover)
			if p.Watchdog.Recover <= 0 {
				r.e.add(w.at("recover"), "watchdog: recover must be positive")
			}
		}
		if w.Action != "" {
			switch WatchdogActionName(w.Action) {
			case WatchdogDrop, WatchdogIgnore:
				p.Watchdog.Action = WatchdogActionName(w.Action)
			default:
				r.e.add(w.at("action"), "watchdog: action %q: want drop or ignore", w.Action)
			}
		}
	}
}

func (r *resolver) applyScheduler(sc *Scheduler, s *SchedulerSpec) {
	if s.Strict != nil {
		sc.Strict = [NumTC]bool{}
		for i, tc := range s.Strict {
			if checkTC(r, s.at("strict."+strconv.Itoa(i)), "strict class", tc) {
				sc.Strict[tc] = true
			}
		}
	}
	for _, tc := range sortedKeys(s.Weights) {
		at := s.at("weights." + strconv.Itoa(tc))
		if !checkTC(r, at, "weights: traffic class", tc) {
			continue
		}
		w := s.Weights[tc]
		switch {
		case sc.Strict[tc]:
			r.e.add(at, "weights: class %d is strict; weights are for DWRR classes", tc)
		case w < 1 || w > 1000:
			r.e.add(at, "weights: weight %d of class %d out of range 1..1000", w, tc)
		default:
			sc.Weights[tc] = w
		}
	}
}

func (r *resolver) applyTrim(old *Trim, s *TrimSpec) *Trim {
	if s.Off {
		return nil
	}
	t := Trim{TC: 0, Size: 64, To: NumTC - 1}
	if old != nil {
		t = *old
	}
	if s.TC != nil && checkTC(r, s.at("tc"), "trim: class", *s.TC) {
		t.TC = *s.TC
	}
	if s.To != nil && checkTC(r, s.at("to"), "trim: to class", *s.To) {
		t.To = *s.To
	}
	if s.Threshold != nil {
		t.Threshold = int64(*s.Threshold)
	}
	if s.Size != nil {
		t.Size = int64(*s.Size)
		if t.Size < 64 || t.Size > 1500 {
			r.e.add(s.at("size"), "trim: size %d out of range 64..1500", t.Size)
		}
	}
	if t.To == t.TC {
		r.e.add(s.at("to"), "trim: to class %d is the trimmed class itself", t.To)
	}
	return &t
}

func (r *resolver) applyECMP(e *ECMP, s *ECMPSpec) {
	r.ecmpSwitch(s, "hash", s.Hash, "5-tuple", "5-tuple+qp", &e.QPAware)
	if s.Spray != nil {
		e.Spray = nil
		for _, d := range s.Spray {
			if d < 0 || d > 63 {
				r.e.add(s.at("spray"), "ecmp: spray DSCP %d out of range 0..63", d)
				continue
			}
			e.Spray = append(e.Spray, d)
		}
	}
	r.ecmpSwitch(s, "spray-mode", s.SprayMode, "round-robin", "random", &e.SprayRandom)
}

// ecmpSwitch sets *b from the ECMP key whose value v names one of two
// settings: off (false) or on (true). An empty v leaves *b as it is.
func (r *resolver) ecmpSwitch(s *ECMPSpec, key, v, off, on string, b *bool) {
	switch v {
	case "":
	case off:
		*b = false
	case on:
		*b = true
	default:
		r.e.add(s.at(key), "ecmp: %s %q: want %s or %s", key, v, off, on)
	}
}

func sortedKeys[K int | string, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
