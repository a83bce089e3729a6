// Package prefetch asks the CPU to bring a cache line in ahead of its use,
// without waiting for it: the simulator's engine asks for the next event's
// packet while it runs the current one (sim.Prefetcher), so that the miss
// on a descriptor that sat in a switch buffer for a while overlaps useful
// work instead of stalling it. On amd64 it is one PREFETCHT0 instruction;
// elsewhere it does nothing.
package prefetch
