// Package emu is the emulation's wall-clock driver: it runs the same pure
// models as the simulator (switchmodel, endpoint) against real frames on
// sockets, in wall-clock time dilated by a scale factor k (Options.Scale).
//
// A Loop drives a core/sim Engine, so a model cannot tell the two drivers
// apart. Each turn it waits for the next due event, a ready port or posted
// work; reads the ready ports with the kernel's receive stamps; schedules
// each frame a link delay (Port.Delay) after its stamp, less the sender's
// lateness when a trailer carries it (Port.PeerLoop); runs every event due
// up to now plus the lead (Options.Lead); and writes what the model
// transmitted, one batch per port. A link between two ports of one Loop
// (a node group) carries its frames in memory (Options.InLoopLinks).
//
// The model, its timers and every posted function run on the goroutine
// that called Run; other goroutines reach it only through Post and Do. A
// received descriptor belongs to the model until it transmits it, and the
// model must not touch it afterwards (Options.Recycle, Port.Keep,
// TakeBack). Batch lateness, frame counters and the loop's busy share are
// telemetry (Collect). AutoScale picks k from a fabric's packet rate and
// the machine's forwarding capacity.
//
// See docs/design.md, "The dilated loop (lab/emulation/datapath/emu)":
// late turns and replay, the link delay on receipt, links inside a loop,
// trailers, running ahead, buffer ownership, threads; and
// docs/performance.md, "Measurements from package docs", for the figures.
package emu
