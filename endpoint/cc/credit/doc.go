// Package credit is MetaRoCE's receiver-driven congestion control: a
// clear-to-send admission in the style of Homa (Montazeri et al., SIGCOMM
// 2018: unscheduled RTTbytes then receiver grants, SRPT), NDP (Handley et
// al., SIGCOMM 2017: receiver pulls paced at its link rate) and EQDS (Olteanu
// et al., NSDI 2022: per-sender credit at the receiver, an edge queue).
// Senders ask, the receiver of a NIC hands out credit paced at its own line
// rate, so the last hop — the incast point of AI collectives — never sees
// more than the credit it handed out.
//
// # Protocol
//
//  1. A flow's sender starts with unscheduled bytes of credit (default one
//     BDP), so a short message leaves at once without waiting a round trip.
//  2. When the endpoint has new data for a flow it sends a request carrying
//     the number of bytes added to the flow's backlog (incremental, in the
//     same frame-byte units OnSend counts, retransmissions included); the
//     receiving endpoint calls Receiver.OnRequest(flow, bytes). Requests
//     must reach the receiver reliably and before the flow's unscheduled
//     data (they travel on the high-priority class).
//  3. The Receiver mirrors the unscheduled credit: of each request, up to the
//     flow's unused unscheduled bytes count as already granted; the rest is
//     demand.
//  4. A pacer emits grants of at most grant_bytes to flows with demand, one
//     every grant_bytes·8 / (rate_fraction · line rate) seconds, so granted
//     bytes arrive at no more than that rate. Flows are chosen round-robin
//     (policy=rr) or smallest remaining first (policy=srpt: fewest bytes
//     requested but not yet arrived; ties to the lower flow id). A flow is
//     skipped while granting it would push its outstanding bytes (granted,
//     not yet arrived) past max_outstanding, or the receiver's total past
//     total_outstanding.
//  5. Grants leave through Env.SendGrant; the sender's OnFeedback(Credit)
//     adds them to its credit; Allowance = credit − sent. The endpoint sends
//     a frame only when Allowance() ≥ its length. The sender's Rate is the
//     line rate: pacing is the receiver's.
//  6. OnData subtracts arrivals from the flow's outstanding bytes (never
//     below zero).
//
// # Lost grants and lost data
//
// If a flow has outstanding bytes and nothing arrived for it (nor was it
// granted from zero outstanding) for regrant_timeout, the receiver assumes
// the grant or the data it allowed was lost: the outstanding bytes go back
// into demand and are granted again. The watchdog runs every
// regrant_timeout/4 while any flow has outstanding bytes. If the grant was
// only late, the sender ends up with at most max_outstanding extra credit —
// bounded and self-correcting, since the sender's backlog, not its credit,
// decides what it sends.
//
// # The queue bound
//
// Every byte of this receiver's traffic in the network was granted (or is
// unscheduled), so the bytes queued at the receiver's last hop are at most
//
//	Q ≤ O − B_wire + U_new
//
// where O ≤ min(Σ_flows max_outstanding, total_outstanding) is the credit
// outstanding, B_wire the bytes on the wires (≈ one BDP when the link is
// busy) and U_new the unscheduled bytes of flows that have just started (at
// most unscheduled per flow, once). With max_outstanding = BDP and one
// active sender the queue stays empty; with N senders all holding full
// credit it is bounded by (N−1)·BDP, and by total_outstanding − BDP when
// that is set — a bound independent of N. In steady state the pacer keeps
// the arrival rate at rate_fraction of the line rate, so the queue drains.
// Set unscheduled = 0 for a hard bound from the first byte.
//
// # Parameters (Env.Params; the same map must be given to both sides)
//
//	name              default                   meaning
//	base_rtt          10us                      round trip used to size a BDP = line rate × base_rtt (125 kB at 100G)
//	bdp               line rate × base_rtt      overrides the computed BDP (bytes)
//	unscheduled       bdp                       initial credit of a flow's sender (0 = none)
//	max_outstanding   bdp                       per-flow cap on granted-not-arrived bytes
//	total_outstanding 0 (= no limit)            receiver-wide cap on granted-not-arrived bytes
//	grant_bytes       MTU                       largest single grant
//	rate_fraction     0.95                      grants are paced at this fraction of the line rate (leaves room for L1 overhead and unscheduled bursts)
//	policy            rr                        rr (round-robin) or srpt
//	regrant_timeout   200us                     silence after which outstanding credit is re-granted
package credit
