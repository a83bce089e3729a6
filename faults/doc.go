// Package faults is rocelab's impairment models: loss, burst loss,
// corruption, delay with jitter, reordering, duplication, rate
// degradation, link down and flapping, PFC storms, misconfigurations and
// background congestion, plus the Chain that holds them on a link
// direction, the Spec text syntax, an Injector for the simulated fabric
// and timed Schedules.
//
// # Shape
//
// Faults sit on a link direction (docs/design.md): a Stage is a wire.Sink that
// wraps the sink the direction transmits into — wrap, don't fork, like
// netstack's link/sniffer — and a Generator sends its own frames into it.
// Models are pure and deterministic: time and callbacks come from a
// clock.Scheduler, randomness from a *rand.Rand handed in (Env), nothing
// owns a goroutine or reads the wall clock. Every fault is a
// telemetry.Source: fault_packets_total{kind, event} with event matched,
// dropped, corrupted, delayed, duplicated, reordered, rewritten,
// generated (a Chain adds target= and fault=), plus fault_held_packets
// (delay), fault_queue_bytes / fault_queue_peak_bytes (rate) and
// fault_link_down (down, flap).
//
// A Stage may be restricted by a Match (DSCP set, PCP set, protocol set
// roce/cnp/pfc/pause/ip/arp/other); packets that do not match pass
// through untouched and uncounted.
//
// # Plugging into the simulator
//
//	inj := inject.New(e, e.Rand)                    // faults/inject; e is the *sim.Engine
//	fab, _ := fabric.BuildSim(e, topo, fabric.SimOptions{Wrap: inj.Wrap})
//	spec, _ := faults.ParseSpec("loss 1% burst 4")
//	id, _ := inj.Add("leaf1:p3", spec)              // or a Schedule
//	inj.Remove(id)
//
// Wrap puts an empty Chain on every direction (host NICs included, when
// they Attach); an empty Chain calls the wrapped sink directly, so a
// fabric built with the injector and no faults is byte- and
// timing-identical to one without (tested). Targets: "node:port" (the
// direction leaving the port), "node" (all leaving the node), with "/in"
// for the arriving directions or "/both". Each fault's random stream is
// e.Rand("fault/<node:port>/<id>").
//
// # Spec syntax
//
// KIND [params] [match [dscp N,..] [pcp N,..] [proto P,..]]. Probabilities
// are "1%" or "0.01"; durations ps, ns, us (µs), ms, s; rates "100G",
// "25Gbps", "400M"; sizes bytes, KB/MB/GB (10³) or KiB/MiB/GiB (2¹⁰).
//
//	loss P                            Bernoulli
//	loss P burst B                    simple Gilbert with loss rate P and mean burst B packets
//	loss gemodel p [r [1-h [1-k]]]    Gilbert–Elliott; defaults r = 1−p, 1−h = 100 %, 1−k = 0 %
//	corrupt P [bits N]                N bit flips (default 1, max 64)
//	delay D [J] [jitter J] [dist uniform|normal|pareto] [alpha A] [reorder P] [hold H]
//	reorder P [hold H]                hold defaults to 10us
//	duplicate P  (dup P)
//	rate R [queue BYTES]              queue defaults to 1MiB
//	down
//	flap period P down D [offset O]
//	storm [prio N] [quanta Q] [interval I] [for D]   defaults prio 3, quanta 65535, interval 10us, for ever
//	ecn-off
//	pfc-off [prio] N
//	dscp-map FROM:TO [FROM:TO…]
//	elephant dst IP [src IP] [rate R] [on D off D] [size B] [dscp N] [prio N] [sport N] [qp N] [for D]
//	incast dst IP burst BYTES period D [rate R] [size B] [dscp N] [prio N] [sport N] [qp N] [for D]
//
// Generators default to the link's rate, src = the port's address,
// size 1024, DSCP 26, priority 3, UDP source port 49152, destination QP
// 0xFFFFFE. Spec.String writes the canonical form, which parses back;
// Spec is a TextMarshaler, so scenario files carry it as one string.
//
// # Models
//
// Loss. BernoulliLoss drops each packet with probability P. GilbertElliott
// is the two-state Markov chain of E. N. Gilbert, "Capacity of a
// burst-noise channel", Bell Syst. Tech. J. 39 (1960) and E. O. Elliott,
// "Estimates of error rates for codes on burst-noise channels", Bell Syst.
// Tech. J. 42 (1963), in the parameterisation of G. Hasslinger and O.
// Hohlfeld, "The Gilbert-Elliott model for packet loss in real time
// services on the Internet" (MMB 2008) that Linux netem's "loss gemodel p
// r 1-h 1-k" uses: p = P(Good→Bad), r = P(Bad→Good), 1−h = loss
// probability in Bad, 1−k in Good. Loss rate (1−k)·r/(p+r) + (1−h)·p/(p+r);
// with 1−h = 1, 1−k = 0 bursts are geometric with mean 1/r. "loss 1%
// burst 4" solves r = 1/4, p = r·0.01/0.99. The packet's fate is drawn in
// the current state, then the state moves (as netem does).
//
// Corruption. For RoCEv2/CNP frames with bytes, bits are flipped on a
// copy of Raw inside the ICRC-covered part (BTH to ICRC, BTH byte 4
// excluded) and the frame goes on: the receiver's ICRC check fails and it
// drops and counts the packet. CRC-32 detects every 1–3-bit error at
// these lengths. wire.Packet has no corrupt flag (and the lab models no
// FCS), so any other packet is dropped by the fault and counted both
// corrupted and dropped — what a receiver's FCS check would do.
//
// Delay. A constant D plus jitter J: uniform on [D−J, D+J] (σ = J/√3),
// normal N(D, J²), or Pareto — a Pareto(α, default 3) variate standardised
// to mean 0 and σ 1, times J, plus D — the way netem scales its
// table-driven normal/pareto distributions by the jitter; results are
// clamped at 0. Unlike netem (which reorders when jitter exceeds the
// packet spacing), the stage is FIFO: a packet leaves at max(arrival +
// sample, previous departure). Reordering is explicit: a fraction P is
// held back by an extra H outside the FIFO and overtaken (netem's
// "reorder" instead sends a fraction immediately; see the tc-netem(8)
// manual for its models).
//
// Duplication. A copy (descriptor and bytes) follows the original at the
// same instant.
//
// Rate. A link that trained below its port rate (400G up at 100G): a
// serializer at R in wire bytes (wire.OnWireBytes); frame i leaves at
// max(a_i, c_{i−1} + S_i), so an idle link adds nothing and the long-run
// throughput is exactly R. Waiting frames are bounded by the queue
// (bytes); overflow is dropped and counted — netem's "rate" without its
// packet limit semantics.
//
// Down, flap. Down drops every packet until removed ("up" is removing
// it); flap is down during [t0+O+k·P, t0+O+k·P+D), t0 the time it was
// added. Frames already past the wrapper (propagating) still arrive.
//
// PFC storm. A NIC that keeps sending 802.1Qbb XOFF for a priority
// (quanta Q, every interval, for a duration) into its link: the switch
// port behind it stops that priority and, with a PFC watchdog, fires it
// (tested with switchmodel through fabric.BuildSim).
//
// Misconfiguration. ecn-off rewrites ECN to Not-ECT (IPv4 checksum
// recomputed; the ICRC masks TOS) so no switch downstream can mark — and
// bleaches CE made upstream. That is a link-level model; the exact
// switch-side misconfiguration (marking disabled on a class) is a config
// mutation, switchmodel.Config.DisableECN, which the lab applies through
// fabric.SimOptions.Configure. pfc-off drops PFC frames that pause only
// that priority and strips it from frames that pause others (the receiver
// side of a priority left out of PFC). dscp-map rewrites DSCP a→b (a
// wrong DSCP map upstream), keeping ECN.
//
// Background congestion. TrafficSource sends RoCE-like UDP descriptors
// (RC SEND-only, DSCP, 5-tuple, ECT(0)) paced at a rate: an elephant
// (continuous or on/off) or incast bursts (B bytes every period — put one
// on each sender with the same period to collide). It obeys PFC/PAUSE
// frames handed to its Receive, like a NIC.
//
// # Chains and schedules
//
// Chain.Add/AddAs/Remove/Clear change a direction's faults live. Stages
// apply in the order added; generators send into the chain. Removing a
// stage Closes it: packets it holds (delay, rate queue) are released at
// once, in order, into what followed it, and the chain relinks — after
// Clear the direction behaves exactly as with no fault (tested, bytes and
// timing). A Schedule is a list of events "at T add SPEC on TARGET [for
// D]" started on a clock.Scheduler against an Applier (the Injector).
package faults
