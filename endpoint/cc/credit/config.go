package credit

import (
	"fmt"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint/cc"
)

// Name is the registry name of this algorithm.
const Name = "credit"

// Defaults.
const (
	DefaultBaseRTT        = 10 * clock.Microsecond
	DefaultRateFraction   = 0.95
	DefaultRegrantTimeout = 200 * clock.Microsecond
)

// Scheduling policies.
const (
	RoundRobin = "rr"
	SRPT       = "srpt"
)

// Config is a resolved set of credit parameters.
type Config struct {
	BDP              int64
	Unscheduled      int64
	MaxOutstanding   int64
	TotalOutstanding int64 // 0: no receiver-wide cap
	GrantBytes       int64
	RateFraction     float64
	Policy           string
	RegrantTimeout   clock.Duration
}

// ParseConfig resolves env.Params for a NIC of env.LineRate and env.MTU.
func ParseConfig(env cc.Env) (Config, error) {
	if env.LineRate <= 0 {
		return Config{}, fmt.Errorf("%s: line rate must be positive, got %d", Name, env.LineRate)
	}
	if env.MTU <= 0 {
		return Config{}, fmt.Errorf("%s: MTU must be positive, got %d", Name, env.MTU)
	}
	const maxBytes = 1 << 40
	p := cc.NewParams(Name, env.Params)
	rtt := p.Duration("base_rtt", DefaultBaseRTT)
	var c Config
	c.BDP = p.Bytes("bdp", max(int64(env.MTU), env.LineRate.BytesIn(rtt)), int64(env.MTU), maxBytes)
	c.Unscheduled = p.Bytes("unscheduled", c.BDP, 0, maxBytes)
	c.MaxOutstanding = p.Bytes("max_outstanding", c.BDP, int64(env.MTU), maxBytes)
	c.TotalOutstanding = p.Bytes("total_outstanding", 0, 0, maxBytes)
	c.GrantBytes = p.Bytes("grant_bytes", int64(env.MTU), 1, maxBytes)
	c.RateFraction = p.Float("rate_fraction", DefaultRateFraction, 0.01, 1)
	c.Policy = p.Enum("policy", RoundRobin, RoundRobin, SRPT)
	c.RegrantTimeout = p.Duration("regrant_timeout", DefaultRegrantTimeout)
	if err := p.Err(); err != nil {
		return Config{}, err
	}
	if c.GrantBytes > c.MaxOutstanding {
		return Config{}, fmt.Errorf("%s: grant_bytes %d exceeds max_outstanding %d", Name, c.GrantBytes, c.MaxOutstanding)
	}
	if c.TotalOutstanding != 0 && c.TotalOutstanding < c.GrantBytes {
		return Config{}, fmt.Errorf("%s: total_outstanding %d is below grant_bytes %d", Name, c.TotalOutstanding, c.GrantBytes)
	}
	return c, nil
}

// Algorithm builds credit controllers. Its receiver paces every credit
// flow that arrives at one NIC port together: build one per port.
func Algorithm() cc.Algorithm { return cc.NewScheme(Name, ParseConfig, newSender, newReceiver) }

func newSender(env cc.Env, c Config) (cc.Sender, error) { return NewSender(env.LineRate, c), nil }

func newReceiver(env cc.Env, c Config) (cc.Receiver, error) {
	if err := env.NeedSched(Name); err != nil {
		return nil, err
	}
	if env.SendGrant == nil {
		return nil, fmt.Errorf("%s: no SendGrant", Name)
	}
	return NewReceiver(env.Sched, env.LineRate, env.SendGrant, c), nil
}
