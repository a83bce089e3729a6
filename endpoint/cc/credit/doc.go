// Package credit is MetaRoCE's receiver-driven congestion control: a
// clear-to-send admission in the style of Homa (Montazeri et al., SIGCOMM
// 2018: unscheduled RTTbytes then receiver grants, SRPT), NDP (Handley et
// al., SIGCOMM 2017: receiver pulls paced at its link rate) and EQDS (Olteanu
// et al., NSDI 2022: per-sender credit at the receiver, an edge queue).
// Senders ask, the receiver of a NIC hands out credit paced at its own line
// rate, so the last hop — the incast point of AI collectives — never sees
// more than the credit it handed out.
//
// A flow's sender starts with unscheduled credit and sends requests for
// the bytes it adds to its backlog; the Receiver (OnRequest, OnData) paces
// grants at rate_fraction of its line rate, round-robin or SRPT, capped
// per flow and in total, and re-grants credit whose grant or data went
// silent for regrant_timeout. The sender (OnFeedback with cc.Credit) sends
// a frame only when Allowance() covers it; its Rate is the line rate.
// Parameters come from Env.Params (base_rtt, bdp, unscheduled,
// max_outstanding, total_outstanding, grant_bytes, rate_fraction, policy,
// regrant_timeout), and both sides must be given the same map.
//
// See docs/design.md, "Credit (endpoint/cc/credit)", for the protocol step
// by step, lost grants and data, the bound on the last hop's queue and
// every parameter's default.
package credit
