package faults

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/units"
)

// Spec is a fault's kind and parameters, as typed on the command line
// (`rocelab fault add TARGET KIND [params]`) or written in a scenario
// file, with an optional match. ParseSpec reads the text syntax; String
// writes it back; Spec is also an encoding.TextMarshaler/Unmarshaler so
// YAML and JSON carry it as one string. docs/design.md, "Faults
// (faults)", "Spec syntax", has the syntax of every kind.
type Spec struct {
	Params Params
	Match  Match
}

// String returns s in the text syntax.
func (s Spec) String() string {
	if s.Params == nil {
		return ""
	}
	if m := s.Match.String(); m != "" {
		return s.Params.String() + " " + m
	}
	return s.Params.String()
}

// Kind returns the model, or "" for an empty Spec.
func (s Spec) Kind() Kind {
	if s.Params == nil {
		return ""
	}
	return s.Params.Kind()
}

// New builds the fault for a link direction. A match on a generator is
// an error.
func (s Spec) New(env Env) (Fault, error) {
	if s.Params == nil {
		return nil, fmt.Errorf("empty fault spec")
	}
	f, err := s.Params.New(env)
	if err != nil {
		return nil, err
	}
	if !s.Match.IsZero() {
		st, ok := f.(interface{ setMatch(Match) })
		if !ok {
			return nil, fmt.Errorf("%s: a generator takes no match", s.Kind())
		}
		st.setMatch(s.Match)
	}
	return f, nil
}

func (s *stage) setMatch(m Match) { s.match = m }

// MarshalText returns String.
func (s Spec) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText parses text with ParseSpec.
func (s *Spec) UnmarshalText(text []byte) error {
	v, err := ParseSpec(string(text))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// Kinds lists every kind ParseSpec knows, in documentation order.
var Kinds = []Kind{KindLoss, KindCorrupt, KindDelay, KindReorder, KindDuplicate, KindRate, KindDown,
	KindFlap, KindStorm, KindECNOff, KindPFCOff, KindDSCPMap, KindElephant, KindIncast}

// ParseSpec parses a fault spec: KIND [params] [match CLAUSES]. Errors
// name the kind and the offending word.
func ParseSpec(text string) (Spec, error) {
	toks := units.JoinQuantities(strings.Fields(text)) // "rate 400 Gb/s" as printed
	if len(toks) == 0 {
		return Spec{}, fmt.Errorf("empty fault spec: want KIND [params], KIND one of %s", kindList())
	}
	var s Spec
	for i, t := range toks {
		if t == "match" {
			m, err := parseMatch(toks[i+1:])
			if err != nil {
				return Spec{}, fmt.Errorf("%s: %w", toks[0], err)
			}
			s.Match = m
			toks = toks[:i]
			break
		}
	}
	kind, args := Kind(strings.ToLower(toks[0])), toks[1:]
	if kind == "dup" {
		kind = KindDuplicate
	}
	p, err := parseParams(kind, args)
	if err != nil {
		return Spec{}, err
	}
	s.Params = p
	return s, nil
}

func kindList() string {
	var names []string
	for _, k := range Kinds {
		names = append(names, string(k))
	}
	return strings.Join(names, ", ")
}

// errUnknownKind is kindParams' word for a kind it does not know.
var errUnknownKind = errors.New("unknown fault kind")

func parseParams(kind Kind, args []string) (Params, error) {
	p, err := kindParams(kind, args)
	switch {
	case errors.Is(err, errUnknownKind):
		return nil, fmt.Errorf("unknown fault kind %q: want one of %s", kind, kindList())
	case err != nil:
		return nil, fmt.Errorf("%s: %w", kind, err)
	}
	return p, nil
}

// kindParams parses the parameters of a fault of the kind.
func kindParams(kind Kind, args []string) (Params, error) {
	switch kind {
	case KindLoss:
		return parseLoss(args)
	case KindCorrupt, KindDuplicate:
		prob, kv, err := leadingKeywords(args, "want a probability like 1%", ParseProb, "bits")
		if err != nil {
			return nil, err
		}
		if kind == KindDuplicate {
			if _, ok := kv["bits"]; ok {
				return nil, fmt.Errorf("unknown parameter \"bits\"")
			}
			return Duplication{P: prob}, nil
		}
		c := Corruption{P: prob, Bits: 1}
		if err := intKey(kv, "bits", 1, 64, func(n int64) { c.Bits = int(n) }); err != nil {
			return nil, err
		}
		return c, nil
	case KindDelay, KindReorder:
		d, err := parseDelay(kind, args)
		if err != nil {
			return nil, err
		}
		return d, nil
	case KindRate:
		r, kv, err := leadingKeywords(args, "want a rate like 100G", ParseRate, "queue")
		if err != nil {
			return nil, err
		}
		m := RateLimit{Rate: r, Queue: DefaultRateQueue}
		if v, ok := kv["queue"]; ok {
			if m.Queue, err = ParseBytes(v); err != nil || m.Queue == 0 {
				return nil, fmt.Errorf("queue: %q: want a positive size like 1MiB", v)
			}
		}
		return m, nil
	case KindDown:
		return Flap{}, noParams(args)
	case KindFlap:
		kv, err := keywords(args, "period", "down", "offset")
		if err != nil {
			return nil, err
		}
		var m Flap
		if err := setDurations(kv, durationKey{"period", &m.Period, "missing period (flap period 100ms down 20ms)"},
			durationKey{"down", &m.Down, "missing down (flap period 100ms down 20ms)"}, durationKey{"offset", &m.Offset, ""}); err != nil {
			return nil, err
		}
		if m.Period <= 0 || m.Down <= 0 || m.Down > m.Period {
			return nil, fmt.Errorf("want period > 0 and 0 < down ≤ period (got period %s down %s)", m.Period, m.Down)
		}
		return m, nil
	case KindStorm:
		kv, err := keywords(args, "prio", "quanta", "interval", "for")
		if err != nil {
			return nil, err
		}
		m := PFCStorm{Prio: DefaultStormPrio, Quanta: DefaultStormQuanta, Interval: DefaultStormInterval}
		if err := intKey(kv, "prio", 0, 7, func(n int64) { m.Prio = int(n) }); err != nil {
			return nil, err
		}
		if err := intKey(kv, "quanta", 0, 0xFFFF, func(n int64) { m.Quanta = uint16(n) }); err != nil {
			return nil, err
		}
		if err := setDurations(kv, durationKey{"interval", &m.Interval, ""}, durationKey{"for", &m.For, ""}); err != nil {
			return nil, err
		}
		if m.Interval <= 0 {
			return nil, fmt.Errorf("interval must be positive")
		}
		return m, nil
	case KindECNOff:
		return ECNOff{}, noParams(args)
	case KindPFCOff:
		if len(args) == 2 && args[0] == "prio" {
			args = args[1:]
		}
		if len(args) != 1 {
			return nil, fmt.Errorf("want one priority: pfc-off prio 3")
		}
		n, err := parseInt(args[0], 0, 7)
		if err != nil {
			return nil, fmt.Errorf("prio: %w", err)
		}
		return PFCOff{Prio: int(n)}, nil
	case KindDSCPMap:
		if len(args) == 0 {
			return nil, fmt.Errorf("want rewrites FROM:TO like 26:0")
		}
		var pairs [][2]uint8
		seen := map[string]bool{}
		for _, a := range args {
			from, to, ok := strings.Cut(a, ":")
			if !ok {
				return nil, fmt.Errorf("%q: want FROM:TO like 26:0", a)
			}
			f, err1 := parseInt(from, 0, 63)
			t, err2 := parseInt(to, 0, 63)
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("%q: DSCP values are 0..63", a)
			}
			if seen[from] {
				return nil, fmt.Errorf("DSCP %s rewritten twice", from)
			}
			seen[from] = true
			pairs = append(pairs, [2]uint8{uint8(f), uint8(t)})
		}
		return NewDSCPMap(pairs...), nil
	case KindElephant, KindIncast:
		m, err := parseTraffic(kind, args)
		if err != nil {
			return nil, err
		}
		return m, nil
	}
	return nil, errUnknownKind
}

// keywords reads "key value" pairs, allowing only the given keys, each once.
func keywords(args []string, allowed ...string) (map[string]string, error) {
	kv := map[string]string{}
	for len(args) > 0 {
		k := strings.ToLower(args[0])
		ok := false
		for _, a := range allowed {
			ok = ok || a == k
		}
		if !ok {
			if len(allowed) == 0 {
				return nil, fmt.Errorf("unexpected %q", args[0])
			}
			return nil, fmt.Errorf("unknown parameter %q (want %s)", args[0], strings.Join(allowed, ", "))
		}
		if len(args) < 2 {
			return nil, fmt.Errorf("%s: missing value", k)
		}
		if _, dup := kv[k]; dup {
			return nil, fmt.Errorf("%s given twice", k)
		}
		kv[k] = args[1]
		args = args[2:]
	}
	return kv, nil
}

// leading parses the value args start with, or fails with want when there
// is none; it returns the rest of args after the value.
func leading[T any](args []string, want string, parse func(string) (T, error)) (T, []string, error) {
	var v T
	if len(args) == 0 {
		return v, args, errors.New(want)
	}
	v, err := parse(args[0])
	if err != nil {
		return v, args, err
	}
	return v, args[1:], nil
}

// leadingKeywords parses a leading value as leading does, then the
// keywords after it, allowing only the given keys.
func leadingKeywords[T any](args []string, want string, parse func(string) (T, error), allowed ...string) (T, map[string]string, error) {
	v, rest, err := leading(args, want, parse)
	if err != nil {
		return v, nil, err
	}
	kv, err := keywords(rest, allowed...)
	return v, kv, err
}

// noParams fails a kind that takes no parameters when it is given some.
func noParams(args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("takes no parameters (got %q)", strings.Join(args, " "))
	}
	return nil
}

// intKey hands set the integer in [lo, hi] that kv holds under key, if
// it holds one.
func intKey(kv map[string]string, key string, lo, hi int64, set func(int64)) error {
	v, ok := kv[key]
	if !ok {
		return nil
	}
	n, err := parseInt(v, lo, hi)
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	set(n)
	return nil
}

// durationKey is a keyword whose value is a duration, where the value
// goes, and the error when the keyword is absent ("": it is optional).
type durationKey struct {
	key     string
	dst     *clock.Duration
	missing string
}

// setDurations stores the durations kv holds under keys, in keys' order.
func setDurations(kv map[string]string, keys ...durationKey) error {
	for _, k := range keys {
		v, ok := kv[k.key]
		if !ok {
			if k.missing != "" {
				return errors.New(k.missing)
			}
			continue
		}
		d, err := ParseDuration(v)
		if err != nil {
			return fmt.Errorf("%s: %w", k.key, err)
		}
		*k.dst = d
	}
	return nil
}

func parseLoss(args []string) (Params, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("want a probability (loss 1%%), a burst model (loss 1%% burst 4) or loss gemodel p [r [1-h [1-k]]]")
	}
	switch args[0] {
	case "random":
		args = args[1:]
		if len(args) != 1 {
			return nil, fmt.Errorf("random: want one probability")
		}
	case "gemodel":
		vals := args[1:]
		if len(vals) < 1 || len(vals) > 4 {
			return nil, fmt.Errorf("gemodel: want p [r [1-h [1-k]]] (1 to 4 probabilities), got %d", len(vals))
		}
		var ps [4]float64
		for i, name := range []string{"p", "r", "1-h", "1-k"} {
			if i >= len(vals) {
				break
			}
			v, err := ParseProb(vals[i])
			if err != nil {
				return nil, fmt.Errorf("gemodel %s: %w", name, err)
			}
			ps[i] = v
		}
		g := GilbertElliott{P: ps[0], R: 1 - ps[0], LossBad: 1, LossGood: 0}
		if len(vals) > 1 {
			g.R = ps[1]
		}
		if len(vals) > 2 {
			g.LossBad = ps[2]
		}
		if len(vals) > 3 {
			g.LossGood = ps[3]
		}
		return g, nil
	}
	rate, err := ParseProb(args[0])
	if err != nil {
		return nil, err
	}
	kv, err := keywords(args[1:], "burst")
	if err != nil {
		return nil, err
	}
	v, ok := kv["burst"]
	if !ok {
		return BernoulliLoss{P: rate}, nil
	}
	b, err := strconv.ParseFloat(v, 64)
	if err != nil || !(b >= 1) {
		return nil, fmt.Errorf("burst: %q: want a mean burst length ≥ 1 packet", v)
	}
	if rate >= 1 {
		return nil, fmt.Errorf("burst: a loss rate of 100%% has no bursts")
	}
	return BurstLoss(rate, b), nil
}

func parseDelay(kind Kind, args []string) (Delay, error) {
	var m Delay
	var err error
	if kind == KindDelay {
		if m.Delay, args, err = leading(args, "want a delay like 10us", ParseDuration); err != nil {
			return m, err
		}
		if len(args) > 0 { // netem style: delay 10us 2us
			if j, err := ParseDuration(args[0]); err == nil {
				m.Jitter, args = j, args[1:]
			}
		}
	} else if m.Reorder, args, err = leading(args, "want a fraction like 5%", ParseProb); err != nil {
		return m, err
	}
	allowed := []string{"jitter", "dist", "distribution", "alpha", "reorder", "hold"}
	if kind == KindReorder {
		allowed = []string{"hold"}
	}
	kv, err := keywords(args, allowed...)
	if err != nil {
		return m, err
	}
	if v, ok := kv["jitter"]; ok {
		if m.Jitter != 0 {
			return m, fmt.Errorf("jitter given twice")
		}
		if m.Jitter, err = ParseDuration(v); err != nil {
			return m, fmt.Errorf("jitter: %w", err)
		}
	}
	if v, ok := kv["distribution"]; ok {
		kv["dist"] = v
	}
	if v, ok := kv["dist"]; ok {
		found := false
		for i, n := range distNames {
			if n == v {
				m.Dist, found = Dist(i), true
			}
		}
		if !found {
			return m, fmt.Errorf("dist: %q: want uniform, normal or pareto", v)
		}
		if m.Jitter == 0 {
			return m, fmt.Errorf("dist %s needs a jitter", v)
		}
	}
	if v, ok := kv["alpha"]; ok {
		a, err := strconv.ParseFloat(v, 64)
		if err != nil || !(a > 2) {
			return m, fmt.Errorf("alpha: %q: want a Pareto shape > 2", v)
		}
		if m.Dist != DistPareto {
			return m, fmt.Errorf("alpha applies to dist pareto only")
		}
		m.Alpha = a
	}
	if v, ok := kv["reorder"]; ok {
		if m.Reorder, err = ParseProb(v); err != nil {
			return m, fmt.Errorf("reorder: %w", err)
		}
	}
	if v, ok := kv["hold"]; ok {
		if m.Reorder == 0 {
			return m, fmt.Errorf("hold applies to reordered packets: give reorder first")
		}
		if m.Hold, err = ParseDuration(v); err != nil {
			return m, fmt.Errorf("hold: %w", err)
		}
	}
	return m, nil
}

func parseTraffic(kind Kind, args []string) (Traffic, error) {
	m := Traffic{Incast: kind == KindIncast, SrcPort: DefaultTrafficSport, DstPort: rocePort,
		DSCP: DefaultTrafficDSCP, Prio: DefaultTrafficPrio, QP: DefaultTrafficQP, Size: DefaultTrafficSize}
	allowed := []string{"dst", "src", "rate", "size", "dscp", "prio", "sport", "qp", "for"}
	if m.Incast {
		allowed = append(allowed, "burst", "period")
	} else {
		allowed = append(allowed, "on", "off")
	}
	kv, err := keywords(args, allowed...)
	if err != nil {
		return m, err
	}
	v, ok := kv["dst"]
	if !ok {
		return m, fmt.Errorf("missing dst (the destination IP)")
	}
	if m.Dst, err = netip.ParseAddr(v); err != nil {
		return m, fmt.Errorf("dst: %q is not an IP address", v)
	}
	if v, ok := kv["src"]; ok {
		if m.Src, err = netip.ParseAddr(v); err != nil {
			return m, fmt.Errorf("src: %q is not an IP address", v)
		}
	}
	if v, ok := kv["rate"]; ok {
		if m.Rate, err = ParseRate(v); err != nil {
			return m, fmt.Errorf("rate: %w", err)
		}
	}
	ints := []struct {
		key    string
		lo, hi int64
		set    func(int64)
	}{
		{"size", 60, 1 << 16, func(n int64) { m.Size = int(n) }},
		{"dscp", 0, 63, func(n int64) { m.DSCP = uint8(n) }},
		{"prio", 0, 7, func(n int64) { m.Prio = int(n) }},
		{"sport", 1, 65535, func(n int64) { m.SrcPort = uint16(n) }},
		{"qp", 0, 0xFFFFFF, func(n int64) { m.QP = uint32(n) }},
	}
	for _, f := range ints {
		if v, ok := kv[f.key]; ok {
			var n int64
			if f.key == "size" {
				n, err = ParseBytes(v)
				if err == nil && (n < f.lo || n > f.hi) {
					err = fmt.Errorf("%q: want %d..%d bytes", v, f.lo, f.hi)
				}
			} else {
				n, err = parseInt(v, f.lo, f.hi)
			}
			if err != nil {
				return m, fmt.Errorf("%s: %w", f.key, err)
			}
			f.set(n)
		}
	}
	if err := setDurations(kv, durationKey{"on", &m.On, ""}, durationKey{"off", &m.Off, ""},
		durationKey{"period", &m.Period, ""}, durationKey{"for", &m.For, ""}); err != nil {
		return m, err
	}
	if (m.On == 0) != (m.Off == 0) {
		return m, fmt.Errorf("on and off go together (on 1ms off 1ms)")
	}
	if m.Incast {
		v, ok := kv["burst"]
		if !ok {
			return m, fmt.Errorf("missing burst (bytes per period, like 64KB)")
		}
		if m.Burst, err = ParseBytes(v); err != nil || m.Burst <= 0 {
			return m, fmt.Errorf("burst: %q: want a positive size like 64KB", v)
		}
		if m.Period <= 0 {
			return m, fmt.Errorf("missing period (like 100us)")
		}
	}
	return m, nil
}
