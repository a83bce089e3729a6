// Package sim is rocelab's discrete-event engine: the test bench on which
// every model (switchmodel, endpoint, faults) is exercised, and the core of
// the `rocelab run --sim` driver.
//
// An Engine keeps virtual time in integer picoseconds (clock.Time) and a
// priority queue of events. It implements clock.Scheduler, so a model that
// is handed an *Engine cannot tell it from the emulation's wall-clock loop.
// An Engine runs on the caller's goroutine; nothing in it is concurrent.
// Events run in order of (time, insertion sequence), so AfterFunc(d <= 0,
// f) runs f at Now after every event already due; given the same seed and
// calls, a run is bit-for-bit reproducible. Rand(name) is a PCG stream
// seeded from the engine's seed and name; there is no global generator.
//
// AfterFunc and At are the clock.Scheduler path (cancellable handles);
// Schedule is the allocation-free hot path (a Handler and an argument, not
// cancellable). A Group runs several engines, one partition of a model
// each, side by side in windows no longer than its lookahead, and its run
// is bit-for-bit one engine's (group.go says how ties and stops are kept);
// models cut across engines talk through Send and ScheduleSeq.
//
// See docs/design.md, "The event engine (core/sim)", for groups, ordering,
// randomness, the allocation-free path and lazy cancellation.
package sim
