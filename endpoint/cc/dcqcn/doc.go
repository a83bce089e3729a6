// Package dcqcn is the DCQCN reaction point (RP) of the MetaRoCE endpoint:
// the rate-based congestion control of RoCEv2 NICs, after Zhu et al.,
// "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015, and
// the Mellanox/NVIDIA variant modelled in the HPCC ns-3 simulator
// (github.com/alibaba-edu/High-Precision-Congestion-Control,
// simulation/src/point-to-point/model/rdma-hw.cc, functions *Mlx, and the
// "dcqcn_paper" profile of simulation/run.py).
//
// The notification point (NP: turning CE-marked arrivals into at most one CNP
// per flow per 50 µs) and the congestion point (switch ECN marking) are not
// here: the endpoint generates CNPs and delivers them as cc.Feedback{Kind:
// cc.CNP}. This package has no receiver side.
//
// # State
//
//	Rc    current rate: what Rate() returns and the NIC paces to
//	Rt    target rate: where recovery heads
//	α     congestion estimate in [0, 1]
//	T, BC timer and byte-counter expiries since the last rate cut
//
// A flow starts idle at Rc = Rt = line rate, α = alpha_init, no timers.
//
// # Events
//
// CNP. The first CNP of a flow sets α = alpha_init and starts the alpha
// timer; later CNPs set the period's "CNP seen" bit. Then the rate is cut at
// once — unless a cut happened less than rate_decrease_interval ago, in
// which case one cut is deferred to the end of that interval (all CNPs in
// between fold into it). So the rate falls at most once per interval, as in
// the Mellanox firmware's rate-reduce monitor period. A cut does
//
//	Rt ← Rc
//	Rc ← max(min_rate, Rc·(1 − α/2))
//	T, BC, byte count ← 0; restart the rate-increase timer
//
// Alpha timer (every alpha_timer). α ← (1 − g)·α + g if a CNP arrived in the
// period, else α ← (1 − g)·α. The timer stops when the flow has recovered to
// line rate; when the next CNP comes the missed periods are applied at once
// (α ← α·(1 − g)^k for k whole periods), so the result equals a timer that
// never stopped, up to the timer's phase.
//
// Rate increase. The increase timer (every increase_timer after a cut) does
// T++; every byte_counter bytes sent (OnSend) do BC++. Each expiry is one
// increase step, whose phase is chosen by the counters after the increment:
//
//	fast recovery   max(T, BC) ≤ F      Rc ← (Rt + Rc)/2
//	additive        otherwise           Rt ← Rt + R_AI,  Rc ← (Rt + Rc)/2
//	hyper           min(T, BC) > F      Rt ← Rt + R_HAI, Rc ← (Rt + Rc)/2
//
// with Rt capped at the line rate. With byte_counter = 0 the byte counter is
// off and the phase follows the timer alone, as in the ns-3 model: fast
// recovery for T ≤ F, one additive step at T = F+1, hyper for T > F+1.
// R_HAI is a constant step (ns-3 and firmware behaviour), not QCN's i·R_HAI.
// Once Rt is at line rate and Rc is within R_AI of it, Rc snaps to line rate
// and the flow is idle again: no timer runs for an uncongested flow.
//
// # Parameters (Env.Params)
//
//	name                   default                      source
//	g                      1/256                        DCQCN paper §5 / docs/design.md; ns-3 EWMA_GAIN 0.00390625
//	alpha_init             1                            ns-3 cnp_received_mlx (m_alpha = 1 on first CNP)
//	alpha_timer            55us                         paper (K = 55 µs); ns-3 AlphaResumInterval 55
//	rate_decrease_interval 50us                         docs/design.md (CNP interval 50 µs); ns-3 dcqcn_paper t_dec=50
//	increase_timer         55us                         paper (T = 55 µs) / docs/design.md; ns-3 dcqcn_paper t_inc=55
//	byte_counter           10MB (10,000,000 B; 0 = off) paper (B = 10 MB) / docs/design.md
//	fast_recovery_steps    5                            paper (F = 5) / docs/design.md; ns-3 FastRecoveryTimes 5
//	rate_ai                line/1000 (100 Mb/s at 100G) paper's 40 Mb/s at 40G, scaled with the line rate
//	rate_hai               line/100 (1 Gb/s at 100G)    10 × R_AI, the ratio of ns-3's defaults (5 and 50 Mb/s)
//	min_rate               100 Mb/s (capped at line)    ns-3 RdmaHw MinRate default 100Mb/s
//	clamp_target_rate      1 (every cut sets Rt ← Rc)   0: ns-3 CLAMP_TARGET_RATE 0 / Mellanox clamp_tgt_rate 0 —
//	                                                    a cut with no increase step since the previous cut keeps Rt
//
// Durations take a unit (55us, 1.5ms), rates a suffix (20M, 5Mbps, 100G),
// byte counts an optional suffix (10MB, 64KiB); g may be a fraction. Unknown
// names and out-of-range values are construction errors.
//
// Why not ns-3's R_AI (run.py: 5·bw/25 Mb/s, 20 Mb/s at 100G)? Raising Rt
// after cuts relies on R_AI until both counters pass F, and at 100G with a
// 10 MB byte counter that takes many milliseconds; at 20 Mb/s per 55 µs
// (0.36 Gb/s per ms) four flows sharing 100G were still 40% off their fair
// share after 25 ms in this package's fluid test, at 100 Mb/s per step
// (1.8 Gb/s per ms) they are within 20%.
//
// At 100G a single CNP (α = 1) halves the rate; five fast-recovery steps
// (275 µs) bring it back to 98.4 G and after four additive steps the gap is
// under R_AI and the flow is idle again (495 µs).
package dcqcn
