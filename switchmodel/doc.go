// Package switchmodel is rocelab's software model of a data-center switch
// ASIC's queueing behaviour: ports with eight traffic classes, a shared
// buffer with dynamic thresholds, PFC, WRED/ECN, strict and DWRR
// scheduling, L3 forwarding with ECMP, and trimming. The same model runs
// unchanged in the simulator (virtual time) and in the emulation (dilated
// wall clock).
//
// A Switch is pure and single-threaded, like htsim's Queue + Pipe. It is
// driven by Port.Receive (a frame's last bit arrived on that port) and by
// callbacks it asked of the clock.Scheduler in Options; it answers by
// calling Receive on the wire.Sink attached to an egress port
// (Switch.Attach), or hands a wire.LaunchSink each frame as its
// transmission starts. It owns no goroutine, reads no wall clock and draws
// randomness only from the *rand.Rand in Options. It works on wire.Packet
// descriptors; raw bytes are rewritten only through the hooks in Options
// (MarkCE, DecTTL, Trim). Counters are plain fields, read through Collect
// (telemetry.Source) and the Queue, PG and Stats snapshots.
//
// Subfolders: fabric turns a topology into configured switches with routes
// (both drivers use it); ctlplane is a switch's control plane, which
// answers ARP, neighbour solicitations and pings to the switch's own
// addresses (Options.Control, Switch.AddLocal); testbench has traffic
// sources and sinks for the model's tests.
//
// See docs/design.md, "The switch model (switchmodel)", for the pipeline,
// buffer accounting, PFC and its watchdog, ECN, scheduling and
// serialization, forwarding, trimming and the departures from real ASICs.
package switchmodel
