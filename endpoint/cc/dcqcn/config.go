package dcqcn

import (
	"fmt"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint/cc"
)

// Name is the registry name of this algorithm.
const Name = "dcqcn"

// Defaults (see the package documentation for their sources).
const (
	DefaultG                    = 1.0 / 256
	DefaultAlphaInit            = 1.0
	DefaultAlphaTimer           = 55 * clock.Microsecond
	DefaultRateDecreaseInterval = 50 * clock.Microsecond
	DefaultIncreaseTimer        = 55 * clock.Microsecond
	DefaultByteCounter          = 10_000_000 // bytes
	DefaultFastRecoverySteps    = 5
	DefaultMinRate              = 100 * clock.Mbps
)

// Config is a resolved set of DCQCN parameters.
type Config struct {
	G                    float64
	AlphaInit            float64
	AlphaTimer           clock.Duration
	RateDecreaseInterval clock.Duration
	IncreaseTimer        clock.Duration
	ByteCounter          int64 // 0 disables the byte counter
	FastRecoverySteps    int
	RateAI               clock.Rate
	RateHAI              clock.Rate
	MinRate              clock.Rate
	// ClampTargetRate: every cut sets Rt ← Rc. Off (ns-3 CLAMP_TARGET_RATE
	// 0, Mellanox clamp_tgt_rate 0), a cut before any increase step since
	// the previous cut leaves Rt where it was.
	ClampTargetRate bool
}

// DefaultConfig returns the defaults for a NIC of the given line rate: R_AI
// and R_HAI scale with it (line/1000 and line/100: 100 Mb/s and 1 Gb/s at
// 100G), the minimum rate is capped at the line rate.
func DefaultConfig(line clock.Rate) Config {
	return Config{
		G:                    DefaultG,
		AlphaInit:            DefaultAlphaInit,
		AlphaTimer:           DefaultAlphaTimer,
		RateDecreaseInterval: DefaultRateDecreaseInterval,
		IncreaseTimer:        DefaultIncreaseTimer,
		ByteCounter:          DefaultByteCounter,
		FastRecoverySteps:    DefaultFastRecoverySteps,
		RateAI:               max(1, line/1000),
		RateHAI:              max(1, line/100),
		MinRate:              min(DefaultMinRate, line),
		ClampTargetRate:      true,
	}
}

// ParseConfig resolves env.Params over DefaultConfig(env.LineRate).
func ParseConfig(env cc.Env) (Config, error) {
	if env.LineRate <= 0 {
		return Config{}, fmt.Errorf("%s: line rate must be positive, got %d", Name, env.LineRate)
	}
	c := DefaultConfig(env.LineRate)
	p := cc.NewParams(Name, env.Params)
	c.G = p.Float("g", c.G, 1e-9, 1)
	c.AlphaInit = p.Float("alpha_init", c.AlphaInit, 0, 1)
	c.AlphaTimer = p.Duration("alpha_timer", c.AlphaTimer)
	c.RateDecreaseInterval = p.Duration("rate_decrease_interval", c.RateDecreaseInterval)
	c.IncreaseTimer = p.Duration("increase_timer", c.IncreaseTimer)
	c.ByteCounter = p.Bytes("byte_counter", c.ByteCounter, 0, 1<<50)
	c.FastRecoverySteps = int(p.Int("fast_recovery_steps", int64(c.FastRecoverySteps), 0, 1000))
	c.RateAI = p.Rate("rate_ai", c.RateAI, 1, env.LineRate)
	c.RateHAI = p.Rate("rate_hai", c.RateHAI, 1, env.LineRate)
	c.MinRate = p.Rate("min_rate", c.MinRate, 1, env.LineRate)
	c.ClampTargetRate = p.Int("clamp_target_rate", b2i(c.ClampTargetRate), 0, 1) == 1
	if err := p.Err(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Algorithm builds DCQCN reaction points. It has no receiver side: CNP
// generation (the notification point) is the endpoint's.
func Algorithm() cc.Algorithm { return cc.NewScheme(Name, ParseConfig, newSender, nil) }

func newSender(env cc.Env, c Config) (cc.Sender, error) {
	if err := env.NeedSched(Name); err != nil {
		return nil, err
	}
	return NewSender(env.Sched, env.LineRate, c), nil
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
