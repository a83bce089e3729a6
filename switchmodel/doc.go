// Package switchmodel is rocelab's software model of a data-center switch
// ASIC's queueing behaviour: ports with eight traffic classes, a shared
// buffer with dynamic thresholds, PFC, WRED/ECN, strict and DWRR
// scheduling, and L3 forwarding with ECMP. The same model runs unchanged
// in the simulator (virtual time) and in the emulation (dilated wall
// clock).
//
// # Shape
//
// A Switch is pure and single-threaded, like htsim's Queue + Pipe. It is
// driven by Port.Receive (a frame's last bit arrived on that port) and by
// callbacks it asked of the clock.Scheduler handed to it in Options; it
// answers by calling Receive on the wire.Sink attached to an egress port
// (Switch.Attach), normally a link that adds propagation delay. When the
// attached sink is a wire.LaunchSink (wire/pipe.Pipe, a fault chain without
// stages), the port hands it each frame as its transmission starts, with
// the time its last bit leaves, and schedules the end of the transmission
// only when a queue or a PFC frame waits for it; other sinks (the
// emulation's wires, chains with faults) get Receive when the last bit has
// left. It owns no
// goroutine, reads no wall clock and draws randomness only from the
// *rand.Rand in Options. It works on wire.Packet descriptors; raw bytes
// are rewritten only through the hooks in Options (MarkCE, DecTTL, Trim).
// Counters are plain integer fields, read through Collect
// (telemetry.Source) and the Queue, PG and Stats snapshots.
//
// # Pipeline
//
// Receive: PFC and 802.3x PAUSE frames act on the port's own egress and go
// no further. Other frames are classified (CNP → Config.CNPClass; tagged
// frames → PCPToTC if TrustPCP or not IP; IP → DSCPToTC; else TC0), checked
// against the MTU, routed (longest-prefix match, then ECMP), their TTL
// decremented (IP descriptors only, IPVersion ≠ 0; TTL ≤ 1 drops), then
// admitted into the buffer and queued on the egress port. The traffic class
// is also the PFC priority and the ingress priority group (PG): one
// identity mapping, where real ASICs have configurable PCP→PG and TC→queue
// maps.
//
// # Buffer accounting
//
// The buffer (Config.BufferBytes) is split once into a reserved pool
// (PFC.Reserved for every port × 8 PGs), a headroom pool (the headroom of
// every lossless PG: PFC.Headroom, or HeadroomFor(rate, cable delay, MTU)
// per port) and the shared pool S, the rest. A packet is accounted against
// its ingress (port, PG), in frame bytes (wire.Packet.Len), until it
// leaves the egress queue (at the start of its transmission):
//
//  1. reserve, while the PG holds at most Reserved bytes;
//  2. shared, if the PG's shared use after admission x' stays within
//     α × (S − shared in use after admission) — the dynamic threshold of
//     Choudhury & Hahne — or within the static PFC.XOffThreshold when α
//     is zero. Counting the packet in on both sides makes the bound exact: n
//     congested PGs hold at most αS/(1+nα) each, a lone one α/(1+α) of S;
//  3. headroom, for a lossless PG, up to its headroom size.
//
// A lossy PG refused at step 2 drops (reason "ingress_admission"), a
// lossless PG out of headroom drops ("no_headroom"). Leaving packets free
// headroom first, then shared, then reserve (the HPCC ns-3 rule). On the
// egress side every queue counts its bytes and packets (depth, peak); a
// lossy queue may also be capped by Config.EgressQueueLimit
// ("egress_limit"); lossless queues are exempt, PFC bounds them.
//
// # PFC
//
// XOFF: when a lossless PG has headroom in use, or its shared use reaches
// the current threshold, the port sends XOFF (PFC.Quanta) for that
// priority out of the ingress port, toward the upstream. XON: when its
// headroom is empty and its shared use is zero or at least PFC.XOnOffset
// below the threshold (checked as its packets leave). PFC frames are built
// by the transmitter when the port is next free: they go ahead of all
// queued data but never preempt the frame being serialized, and one frame
// carries every PG whose state changed. While a PG stays paused, XOFF is
// refreshed every half pause time. Sent frames are descriptors (Kind
// KindPFC, Len 60 — the 64-byte minimum frame without FCS — Raw nil); the
// emulation edge serializes them.
//
// Received PFC stops an egress class configured lossless for quanta × 512
// bit times at the port's rate (wire.PauseTime), from reception, or until a
// zero-quanta frame; the frame on the wire finishes. PFC for lossy classes
// is counted and ignored. 802.3x PAUSE stops every class.
//
// The PFC watchdog (PFC.Watchdog, off when Detect is 0) arms a check
// Detect after a queue becomes paused; a resume disarms it. If the check
// finds the queue still paused and holding packets, it counts an event and
// puts the queue in storm mode for Recover: pauses are ignored, and with
// WatchdogDrop its packets and all arrivals for it are dropped ("watchdog").
//
// # ECN
//
// WRED per egress class (Config.ECN): probability 0 at depths up to Kmin,
// Pmax·(q−Kmin)/(Kmax−Kmin) up to Kmax, 1 above; q is the queue's bytes
// ahead of the packet (marking at enqueue) or left behind it (AtDequeue).
// ECT packets are marked CE (ECN = 3, then MarkCE on Raw); CE packets stay
// CE; Not-ECT packets pass, or drop ("wred") with DropNonECT. Kmin and
// Kmax scale with the port's rate when RefRate is set.
//
// # Scheduling and serialization
//
// Each egress port sends one frame at a time at its line rate: strict
// classes first (highest number first), then deficit weighted round robin
// among the others, deficits counted in wire bytes. A frame of Len bytes
// occupies wire.OnWireBytes(Len) = max(Len+4 FCS, 64) + 8 preamble/SFD + 12 IFG
// bytes on the wire — wire.Packet.Len excludes the FCS, so the FCS, the
// minimum-frame padding, preamble and inter-frame gap are all added here,
// where serialization happens. The frame is handed to the attached sink
// when its last bit has left (store and forward; no cut-through).
//
// # Forwarding
//
// AddRoute(prefix, ports...) fills a longest-prefix-match table. Among
// several next hops a packet takes the port picked by a seeded 64-bit hash
// (multiply-xorshift folding, splitmix64 finaliser) of source and
// destination address, protocol and L4 ports — plus the RoCE destination
// QP with ECMP.QPAware — reduced by multiply-high. The seed is per switch
// (ECMP.Seed, or drawn from Options.Rand), so tiers do not polarise.
// Packets whose DSCP is in ECMP.SprayDSCPs are sprayed: round-robin per
// route, or random with SprayRandom.
//
// # Trimming
//
// With Trim.Classes set (lossy classes only), a packet the buffer refuses
// (ingress admission or egress limit) is cut to Trim.Bytes, re-marked with
// DSCP Trim.DSCP — how receivers recognise a trimmed packet, as in UEC —
// and queued in class Trim.Priority, accounted in that class's PG. If even
// the header does not fit, the packet drops as it would have.
//
// # Departures from real ASICs
//
//   - Buffer accounting is in bytes, not cells (Tomahawk-class ASICs
//     account 208–254 B cells, so small frames cost more there).
//   - One shared pool and one α for all PGs; no separate lossy/lossless
//     service pools, no per-queue egress dynamic thresholds, no
//     per-port/PG α.
//   - Identity priority → PG → TC → queue mapping.
//   - Store-and-forward only; no cut-through, no ingress pipeline latency.
//   - Headroom per PG is reserved statically (no shared headroom pool).
//   - XON is evaluated when the PG's own packets leave, not on a timer.
//   - The watchdog polls at Detect granularity, not on a hardware timer
//     wheel; restoration is time-based only.
//   - No MAC learning, VLAN switching or ARP: L3 routing on the
//     descriptor's destination IP; MAC rewriting is the emulation edge's.
package switchmodel
