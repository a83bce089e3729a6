// Package sim is rocelab's discrete-event engine: the test bench on which
// every model (switchmodel, endpoint, faults) is exercised, and the core of
// the `rocelab run --sim` driver.
//
// An Engine keeps virtual time in integer picoseconds (clock.Time) and a
// priority queue of events. It implements clock.Scheduler, so a model that
// is handed an *Engine cannot tell it from the emulation's wall-clock loop.
// An Engine runs on the caller's goroutine; nothing in it is concurrent.
//
// # Groups
//
// A Group runs several engines, one partition of a model each, side by
// side in windows no longer than its lookahead (the least delay of an
// event from one engine to another), and its run is bit-for-bit the run of
// one engine holding every model: group.go says how ties and stops are
// kept. Models cut across engines talk through Send (letters handed over
// at a window's end, with a Ticket holding the sender's place in the
// order) and ScheduleSeq; wire/pipe.NewAcross is the link so cut.
//
// # Ordering
//
// Events run in order of (time, insertion sequence): two events due at the
// same picosecond run in the order they were scheduled. AfterFunc(d <= 0, f)
// therefore runs f at Now, after every event already due at Now. Given the
// same seed and the same calls, a run is bit-for-bit reproducible.
//
// # Randomness
//
// Rand(name) returns a math/rand/v2 PCG generator seeded from the engine's
// seed and a hash of name, so each model draws from its own stream whatever
// the order in which models are built. There is no global generator.
//
// # The allocation-free path
//
// AfterFunc and At are the clock.Scheduler path: they cost the caller's
// closure plus a cancellable timer handle (handles are carved from slabs, so
// that is one allocation per 128 timers). The hot path is Schedule: an
// event carries a Handler and an argument of type any; a pointer stored in
// an any does not allocate, so a switch port that schedules its own next
// dequeue with e.Schedule(t, port, nil) allocates nothing per event.
// Schedule events cannot be cancelled; a handler that may become stale
// checks its own state (for example a generation counter) when it fires.
//
// Links between models are wire/pipe's in-order delay lines, built on this
// engine's Schedule: each keeps its in-flight packets in a FIFO ring and has
// at most one event in the engine, so the heap holds O(links), not
// O(packets in flight).
//
// Cancelled timers are deleted lazily: they stay in the heap, are skipped
// when they reach the top, and the heap is compacted whenever more than half
// of it is cancelled, so Stop-heavy models do not leak memory.
package sim
