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
// A flow keeps a current rate Rc (what Rate returns and the NIC paces to),
// a target rate Rt, a congestion estimate α and its timer and byte-counter
// expiries since the last cut. It starts idle at line rate; a CNP cuts the
// rate at most once per rate_decrease_interval, and the increase timer and
// byte counter (OnSend) step it back through fast recovery, additive and
// hyper increase. An uncongested flow runs no timer. Parameters come from
// Env.Params (g, alpha_init, alpha_timer, rate_decrease_interval,
// increase_timer, byte_counter, fast_recovery_steps, rate_ai, rate_hai,
// min_rate, clamp_target_rate); unknown names and out-of-range values are
// construction errors.
//
// See docs/design.md, "DCQCN (endpoint/cc/dcqcn)", for the state, the
// events, every parameter's default and source, and why R_AI is not
// ns-3's.
package dcqcn
