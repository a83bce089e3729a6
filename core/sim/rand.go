package sim

import (
	"hash/fnv"
	"math/rand/v2"
)

// Rand returns the random stream called name: a math/rand/v2 PCG seeded
// from the engine's seed and a hash of name. The same seed and name give
// the same sequence in every run, whatever other streams exist or the order
// in which they were created; different names give independent streams.
// Calls with the same name on one engine return the same generator, so two
// models that must not be correlated need distinct names (for example
// "wred/leaf1/p3").
func (e *Engine) Rand(name string) *rand.Rand {
	if r, ok := e.streams[name]; ok {
		return r
	}
	r := e.NewRand(name)
	e.streams[name] = r
	return r
}

// NewRand returns a new generator of the stream called name, at its start,
// and keeps no reference to it: for streams whose names are used once
// (a live fault's, named by its ID), which Rand would keep for as long as
// the engine lives.
func (e *Engine) NewRand(name string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(splitmix(e.seed), splitmix(h.Sum64()^0x9e3779b97f4a7c15)))
}

// splitmix is the SplitMix64 finaliser: it spreads nearby seeds (0, 1, 2…)
// over the whole PCG state.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
