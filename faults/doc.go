// Package faults is rocelab's impairment models: loss, burst loss,
// corruption, delay with jitter, reordering, duplication, rate
// degradation, link down and flapping, PFC storms, misconfigurations and
// background congestion, plus the Chain that holds them on a link
// direction, the Spec text syntax and timed Schedules.
//
// Faults sit on a link direction: a Stage is a wire.Sink that wraps the
// sink the direction transmits into (wrap, don't fork), restricted by an
// optional Match, and a Generator sends its own frames into the chain.
// Models are pure and deterministic: time and callbacks come from a
// clock.Scheduler, randomness from the *rand.Rand in Env; nothing owns a
// goroutine or reads the wall clock. Every fault is a telemetry.Source
// (fault_packets_total{kind, event} and a few gauges). An empty Chain calls
// the wrapped sink directly, and removing a stage releases what it holds,
// so after Clear a direction behaves exactly as with no fault.
//
// A fault is written as a Spec: KIND [params] [match …], for example
// "loss 1% burst 4"; ParseSpec reads it, Spec.String writes the canonical
// form, and Spec is a TextMarshaler, so scenario files and the node API
// carry it as one string.
//
// Subfolders: inject places faults on a simulated fabric's link directions
// by target (inject.New, fabric.SimOptions.Wrap).
//
// See docs/design.md, "Faults (faults)", for the shape, the whole Spec
// syntax and defaults, each model with its sources (Gilbert–Elliott, netem
// comparisons), chains and schedules.
package faults
