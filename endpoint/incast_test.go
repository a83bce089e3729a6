package endpoint_test

import (
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/switchmodel"
)

// TestIncastDCQCN: N:1 incasts (N = 2, 8) of RoCEv2 flows at 100G on one
// switch, PFC only (cc none) against DCQCN with its default parameters.
// Convergence: from some time on, every window has every flow within tol
// of the fair share (the window's aggregate goodput / N).
//
//   - 2:1, default profile (PFC on TC3, WRED/ECN Kmin 400 KB, Kmax 1600 KB,
//     Pmax 0.2 at 100G), 1 ms windows, 10%: converges after ≈ 52 ms.
//   - 8:1, threshold marking (Kmin = Kmax = 800 KB, Pmax 1: DCTCP-style
//     step marking, the same queue bound), 1 ms windows, 10%: every flow
//     sees CE in the same CNP intervals, so cuts are synchronised and the
//     AIMD converges (≈ 26 ms, worst deviation ≈ 4%).
//   - 8:1, default (probabilistic) profile: KNOWN SHORTFALL, asserted at
//     20% on 10 ms windows. Bernoulli marking at ~1% makes each flow's cuts
//     a random process; the rates random-walk ±15–30% on 1–10 ms windows
//     with a correlation time of 10–20 ms (α's time constant, 256 × 55 µs =
//     14 ms). Tried (worst deviation over the last 50 ms, 10 ms windows):
//     defaults 23.5%; R_AI 40M 17.8%, 25M 26.4%; g 1/16 16.8%; byte counter
//     off 14.5% (but 88 Gb/s); ECN 12.5K/500K/1% (DCQCN paper's 5K/200K/1%
//     at 40G, scaled) 10.8%, with g 1/16 21.5%; 100K/400K/0.2 20.7%; dequeue
//     marking 27.4%; step marking 200 KB 21.7%, 400 KB 7.8%, 800 KB 3.1%.
//     Second pass (star seeds 0–7 unless said; "avg" = each flow's average
//     goodput over the last quarter of the run against the aggregate / N):
//     defaults, 100 ms run (25 ms avg, seeds 0–2): 6.4–15.6%, 10 ms windows
//     14.8–20.5%; defaults, 200 ms (50 ms avg, seeds 0–3): 6.3–10.5%; the HPCC ns-3
//     "dcqcn_paper" profile (simulation/run.py at 100G: α timer 50 µs,
//     decrease 50 µs, increase timer 55 µs, g 1/256, F 1, R_AI 20M, R_HAI
//     200M, min rate 1G, no byte counter, with exactly this switch profile
//     400K/1600K/0.2), 200 ms: avg 5.5–10.6%, 10 ms windows 17–34%; the
//     same with clamp_target_rate 0 (run.py's CLAMP_TARGET_RATE 0), 100 ms,
//     seeds 0–2: avg 8.9–11.3% (7.4–10.5% with the clamp); repo defaults
//     with 12.5K/500K/1% marking, 100 ms: avg 4.1–16.9%. No published probabilistic set meets 10% on every seed
//     even on 25–50 ms averages, so none is asserted; step marking is.
//     The CNP interval is per (QP, source port), which for these
//     single-path QPs is per flow.
//
// Every run must hold a queue below Kmax once converged and send no PFC
// pause, while the PFC-only baseline pauses. Virtual time 60–100 ms, about
// 0.3–0.6 s of wall time each.
func TestIncastDCQCN(t *testing.T) {
	step := func(c *switchmodel.Config) { c.ECN[3].Kmin, c.ECN[3].Kmax, c.ECN[3].Pmax = 800_000, 800_000, 1 }
	for _, tc := range []struct {
		name   string
		n      int
		swcfg  func(*switchmodel.Config)
		dur    clock.Duration
		window clock.Duration
		tol    float64
	}{
		{"2:1", 2, nil, 60 * clock.Millisecond, clock.Millisecond, 0.10},
		{"8:1-step", 8, step, 100 * clock.Millisecond, clock.Millisecond, 0.10},
		{"8:1", 8, nil, 100 * clock.Millisecond, 10 * clock.Millisecond, 0.20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := runIncast(t, incastCfg{senders: tc.n, mode: endpoint.ModeRoCEv2, cc: "none", swcfg: tc.swcfg, dur: tc.dur, window: tc.window, tol: tc.tol})
			dc := runIncast(t, incastCfg{senders: tc.n, mode: endpoint.ModeRoCEv2, cc: "dcqcn", swcfg: tc.swcfg, dur: tc.dur, window: tc.window, tol: tc.tol})
			for _, r := range []struct {
				name string
				r    incastResult
			}{{"pfc-only", base}, {"dcqcn", dc}} {
				t.Logf("%-8s converged after %v (window %v, tolerance %.0f%%); PFC XOFF frames %d, senders paused %v; queue peak %d B, after convergence %d B; aggregate %.1f Gb/s, flows %.1f Gb/s",
					r.name, r.r.converge, tc.window, tc.tol*100, r.r.pauses, r.r.pauseTime, r.r.peakQueue, r.r.lateQueue, r.r.total, r.r.rates)
			}
			if dc.converge < 0 {
				t.Errorf("DCQCN did not converge within %.0f%% of the fair share (worst deviation %.1f%% in the last quarter)", tc.tol*100, dc.worstShare*100)
			}
			t.Logf("DCQCN worst deviation from the fair share in the last quarter: %.1f%%", dc.worstShare*100)
			if dc.lateQueue > 1_600_000 {
				t.Errorf("DCQCN queue after convergence %d B, want <= Kmax 1600 KB", dc.lateQueue)
			}
			if dc.pauses != 0 {
				t.Errorf("DCQCN run sent %d PFC pauses, want 0", dc.pauses)
			}
			if base.pauses == 0 {
				t.Error("PFC-only baseline never paused: the incast did not congest")
			}
			if dc.total < 0.9*base.total {
				t.Errorf("DCQCN aggregate %.1f Gb/s, below 90%% of the PFC-only %.1f", dc.total, base.total)
			}
		})
	}
}

// TestIncastCredit: the 8:1 incast with MetaRoCE's receiver-driven credit
// admission. The credit doc's bound is Q ≤ O − B_wire + U_new with O the
// credit outstanding and U_new the unscheduled bytes of starting flows.
// Defaults (BDP = 100G × 10 µs = 125 KB, max_outstanding = unscheduled =
// BDP per flow, no receiver-wide cap): O ≤ 8 × 125 KB, U_new ≤ 8 × 125 KB,
// so Q ≤ 2 MB (minus the bytes on the wires, ignored: a looser bound).
// With total_outstanding = 250 KB and unscheduled = 0 the bound no longer
// depends on N: Q ≤ 250 KB. Both runs must stay under their bound, send no
// PFC pause, and keep the link busy.
func TestIncastCredit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params map[string]string
		bound  int64
	}{
		{"defaults", nil, 8*125_000 + 8*125_000},
		{"capped", map[string]string{"total_outstanding": "250000", "unscheduled": "0"}, 250_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runIncast(t, incastCfg{senders: 8, mode: endpoint.ModeMetaRoCE, cc: "credit", params: tc.params,
				dur: 20 * clock.Millisecond, window: clock.Millisecond})
			t.Logf("queue peak %d B (bound %d B); PFC XOFF frames %d; aggregate %.1f Gb/s, flows %.1f Gb/s, converged (1 ms windows) after %v",
				r.peakQueue, tc.bound, r.pauses, r.total, r.rates, r.converge)
			if r.peakQueue > tc.bound {
				t.Errorf("queue peak %d B above the bound %d B", r.peakQueue, tc.bound)
			}
			if r.pauses != 0 {
				t.Errorf("%d PFC pauses, want 0", r.pauses)
			}
			if r.total < 85 {
				t.Errorf("aggregate %.1f Gb/s, want >= 85 (grants paced at 0.95 of 100G)", r.total)
			}
		})
	}
}
