// Package emu is the emulation's wall-clock driver: it runs the same pure
// models as the simulator (switchmodel, endpoint) against real frames on
// sockets, in wall-clock time dilated by a scale factor.
//
// # One model, two clocks
//
// A Loop drives a core/sim Engine — the simulator's own event heap — so a
// model cannot tell the two drivers apart: events run in (time, insertion)
// order, AfterFunc(d <= 0) runs after what is already due, and the
// engine's seeded random streams are the simulator's. What the Loop adds
// is the mapping to the wall clock and the sockets. Each turn it:
//
//  1. waits (Waiter.Wait) until the next pending event is due, a port has
//     frames, or another goroutine posted work — or, for a while after a
//     read, only until an event is due (QuietWaiter; see "Links");
//  2. reads every ready port and decodes each frame into a wire.Packet,
//     with the time the kernel received it (StampedReader);
//  3. reads the fabric time now = (wall − start) / Scale, and schedules
//     each frame's delivery to the model a link delay after its receive
//     stamp — or, if the loop read it later than that, at now or at the
//     stamp's time as Options.Replay says (see "Late turns");
//  4. runs every event due at or before now in timestamp order
//     (Engine.RunUntil) — stamped frames interleaved with the events that
//     fell due before them — then the functions posted with Post/Do;
//  5. hands the frames the model transmitted to the ports, one WriteBatch
//     per port.
//
// Models keep real units (400G, 1 µs): only the mapping is dilated, so 1
// ms of wall-clock jitter is 1/Scale ms of fabric time. Batch lateness —
// how long after an event's due time its batch ran — is kept for the last
// LagWindow batches and reported as p50/p99/max in wall and fabric time
// through Collect (telemetry), together with per-port frame counters and
// the share of wall time the loop was busy.
//
// # Late turns
//
// A turn that runs L of wall time late runs L/Scale of fabric time of
// events at once. A pause frame due at fabric time f (its arrival plus
// the link delay) that the loop reads only after f is delivered at the
// late now, after every transmission the model scheduled between f and
// now. Options.Replay can deliver it at f instead (ReplayPauses:
// PFC/PAUSE XOFF; ReplayAll: every frame), from the kernel's receive
// stamps, so that it stops exactly the transmissions after f, whenever
// the loop comes to read it. (A frame read before it is due is delivered
// at its time whatever the policy.)
//
// The default is ReplayNone, because measured on the laptop demo's
// incast, replay lost more packets, not fewer (k = 3776, loaded 2-core
// machine: 250–1,240 drops with ReplayNone; 2,300–2,700 with
// ReplayPauses; 3,000–3,400 with ReplayAll). A late node's transmissions
// are written late in wall time, and its neighbours stamp them late: the
// pauses a late switch sends are late whatever the receiver does. With
// ReplayAll the late switch also counts the bytes that arrived during its
// lag at the right past times, crosses its XOFF threshold in the past,
// and the upstream, told late, lands the whole lag on headroom; with
// ReplayNone the late bytes are counted after the lag, in the shared
// buffer, so that XOFF and its cause are late together. And a model that
// processes a pause or resume in the past catches up at once: what it
// "sent" since then leaves in one burst. A larger scale k and a
// loop that is on time are what keep the lab lossless.
//
// The residual error either way: frames a late node transmitted "in the
// past" carry the right fabric times in its model (and in its taps) but
// reach the neighbour in one burst, stamped when they were written; a
// late node looks like a bursty one. The lag is measured
// (emu_batch_lag_seconds), and so is how late frames were read after they
// arrived (emu_rx_replay_age_seconds, fabric time, whatever the policy).
//
// # Links
//
// Serialization belongs to the model's egress; the link's propagation
// delay (Port.Delay) is applied by the Loop on the receiving side: a
// frame the model hands to a port at fabric time t is written to the
// socket in the same turn, and the neighbour delivers it to its model at
// the fabric time of its receive stamp (less the sender's lateness: see
// "Trailers") plus Delay. Each end does this for
// the direction it receives, which is what one pipe.Pipe per direction
// does in the simulator; the veth underneath is a fast wire, and the
// frame's time on it counts as part of the cable.
//
// Delaying on receipt rather than on transmission does two things. A
// receiver that reads a frame late, but within the delay, still delivers
// it at the exact time (its wake-up latency is hidden, up to Delay of
// fabric time, Delay × Scale of wall), and a transmitter writes what its
// model sent at once instead of waking again Delay later to write it.
// And a loop need not wake for every frame: a frame that arrives after a
// read is due at least the shortest Delay later, so for half of that
// (wall time) after a turn that read frames the Loop sleeps quietly —
// only until its next event or a Wake — and then reads everything that
// came meanwhile in one batch (QuietWaiter). A receiver later than that
// is the late turn of "Late turns". (With trailers a frame is due Delay
// after it was sent, less its sender's lateness after it arrived: a
// quiet sleep of half the delay stays on time unless the sender ran more
// than half a delay late.) Before this, delays were applied on
// the transmitting side (written at t + Delay, delivered when read):
// measured on the laptop demo at k = 2000, moving the delay to receipt
// and sleeping quietly cut the nodes' CPU per frame by about a tenth
// (docs/performance.md).
//
// # Links inside a loop
//
// A Loop may drive several nodes' models (a node group: node.Group), and
// then some links have both ends among its ports. With
// Options.InLoopLinks such a link (port i's PeerMAC is port j's MAC and
// the other way round) carries its frames in memory: what the model sends
// on i is encoded as the socket write would have it (MACs rewritten, a
// PFC frame serialized; taps see the bytes), decoded into a descriptor of
// the kind j reads, and scheduled for j's model at the time it was sent
// plus j's delay — what the simulator's pipe does, without a system call,
// a wake-up or the wall clock in between. The link is exact in fabric
// time whatever the loop's lateness: a loop of one group loses nothing
// to its lag, which then only says whether it keeps up with the wall
// clock (the capacity search's "on time"). The veth under such a link
// stays up and empty: tcpdump in its namespaces sees nothing of it
// (rocelab capture, a tap, sees every frame). emu_rx_inloop_frames_total
// counts the frames that came this way (they count in emu_rx_frames_total
// too). Measured on the laptop demo at k = 2,000 in one group: 9.8 µs of
// CPU per frame against 17.6 µs through the sockets (docs/performance.md).
//
// # Trailers
//
// A stamp says when a frame arrived, not when it was sent: a sender that
// ran its turn L of wall time late wrote its frames L late, and a receiver
// that delivers from the stamp lengthens the link by L/Scale. On a link
// whose two ends are Loops and set Port.PeerLoop (a lab deployed with
// exact links: node.Config.ExactLinks), each frame therefore carries a
// 16-byte trailer after its last byte: how late, in fabric time, its Loop
// wrote it after the model sent it (read from the clock just before the
// port's write), and a magic. The receiver strips it and delivers the
// frame Delay after stamp − lateness, the time it was sent; a frame
// without a trailer (from a kernel interface, or injected by a test) is
// delivered from its stamp. Lateness travels rather than the send time,
// so the two Loops need no common origin. A link stays a FIFO: a frame is
// never delivered before the one read ahead of it on the same port (a
// preemption between the sender's clock read and its write overstates one
// frame's lateness, and the next must not overtake it).
// emu_rx_sender_late_seconds_total sums the lateness the trailers took off.
//
// Measured on the laptop fidelity files (docs/performance.md): before
// trailers, the 3:1 incast's PFC frame count ran 5–8 % under the
// simulator's in every run, idle or loaded — each XOFF/XON signal and the
// data behind it reached the next hop a sender's batch lag late, so every
// pause cycle ran a little longer and there were fewer of them. With
// trailers it runs +0.7 to +7.3 %. The CLI deploys labs on one machine
// with exact links (node.Config.ExactLinks); across agents there are
// none. (They were opt-in while labs with trailers lost more lossless
// packets at the edge of the machine's capacity; with their loops running
// ahead and endpoints taking no page faults per frame they lose fewer:
// docs/performance.md.)
//
// # Running ahead
//
// A node's events are a few hundred microseconds of wall clock apart at
// the scales a lab runs at (one 4 KB serialization at 400G is 82 ns of
// fabric time, 164 µs of wall at k = 2,000), and a loop that woke for
// each ran about one wake-up per frame. A turn therefore runs ahead of
// the wall clock: it runs every event due up to its horizon, now + lead
// (Options.Lead; by default a quarter of the shortest link delay), and
// the next turn for events alone comes no earlier than that horizon's
// wall time, one lead later. Events run early, never late, by at most
// the lead; a node whose events come faster than one per lead wakes once
// per lead for them.
//
// Running ahead is safe for causality because of the link delay: a
// frame that arrives after a turn is due a delay after it arrived, and a
// loop reads it within the quiet half-delay, so the engine has run at
// most half a delay plus the lead (three quarters of it) past its
// arrival when it is scheduled. A frame that still falls behind the
// engine's clock (its sender ran late, or the loop overslept) is
// delivered at that clock and counted (emu_rx_behind_lead_frames_total).
// What the model sends while running ahead is written early, by up to
// the lead: on exact links the trailer says so (a negative lateness) and
// the neighbour delivers the frame from the time the model sent it; on
// other links it shortens that hop by the earliness, as a late turn
// lengthens it, so a lab's nodes run ahead only with exact links
// (node.Config.ExactLinks; the others set Lead negative). Measured on the
// laptop demo at k = 2,000: wake-ups fell from 20,000–22,000 to 7,600 a
// second and CPU per frame by 15 % (docs/performance.md).
//
// # Buffer ownership
//
// A received frame is read into the Raw buffer of a descriptor taken from
// the Loop's free list (capacity Options.BufSize); Decode points Raw at
// the frame's bytes inside it. The descriptor and its buffer belong to the
// model from delivery until the model transmits it on some port (Receive
// on Connect's sink): the model may keep it queued, rewrite it in place
// (through wire's raw-byte rewriters: WriteTOS, WriteTTL, WriteTrim), or drop it. When it is
// transmitted the Loop rewrites its MACs for the next hop (source = the
// port's MAC, destination = the peer's), writes Raw[:Len] after the link
// delay, and then puts the descriptor back on its free list: the model
// must not touch a packet after transmitting it. A packet the model drops
// is simply forgotten (the model does not tell); the garbage collector
// reclaims it and the free list allocates a new one when empty. Only
// descriptors whose Raw has exactly the Loop's buffer capacity are
// recycled, and only with Options.Recycle: a model that transmits frames
// it built itself (an endpoint) keeps ownership of those buffers.
//
// A port with Port.Keep (an endpoint's) reads instead into buffers the
// Loop keeps for every such port and copies each frame into a new buffer
// of the frame's length: an endpoint's NIC keeps none of the buffers it
// receives, so none would come back to the free list, and a fresh 9 KB
// buffer per 64-byte acknowledgement was most of the fresh memory (and
// the page faults) an endpoint's loop took at the start of a workload
// (docs/performance.md). A model that gives each packet back once it is
// done with it (Loop.TakeBack; an endpoint's NIC does, through
// endpoint.Options.ReturnRx, when its Receive returns) is instead handed
// frames in the loop's own descriptors, uncopied, and the loop reads
// later frames into the ones given back.
//
// Descriptors without Raw (PFC and PAUSE frames the switch builds) are
// serialized with wire.AppendFrame into a per-port arena, source MAC set
// to the port's.
//
// # Threads
//
// The model, its timers and every posted function run on the goroutine
// that called Run. Other goroutines (HTTP handlers) reach the model only
// through Post and Do; Collect, Connect, SetTap and every model call must
// happen on the loop goroutine (or before Run starts).
//
// # Scale
//
// Scale is an integer k >= 1. `scale: auto` is resolved by the lab before
// it starts the nodes, with AutoScale: the fabric's aggregate forwarding
// packet rate at full line rate, divided by the packets per second the
// machine was measured to forward, rounded up.
package emu
