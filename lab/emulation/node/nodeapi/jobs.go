package nodeapi

import (
	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/fct"
	"github.com/rocelab/rocelab/endpoint/collective"
)

// JobState is where a job is.
type JobState string

// Job states.
const (
	JobSetup   JobState = "setup" // a collective waiting for POST /jobs/{id}/start
	JobRunning JobState = "running"
	JobDone    JobState = "done"
	JobFailed  JobState = "failed"
)

// JobStatus is GET /jobs/{id}. Times are fabric time (real units).
type JobStatus struct {
	ID      int      `json:"id"`
	Kind    string   `json:"kind"` // perf or collective
	State   JobState `json:"state"`
	Error   string   `json:"error,omitempty"`
	Version uint64   `json:"version"` // the node's job version when taken
	// FabricTime is the node's fabric time when the status was taken.
	FabricTime clock.Time        `json:"fabric_time_ps"`
	Perf       *PerfResult       `json:"perf,omitempty"`
	Collective *CollectiveStatus `json:"collective,omitempty"`
}

// Finished reports whether the job is done or failed.
func (s JobStatus) Finished() bool { return s.State == JobDone || s.State == JobFailed }

// Release is POST /jobs/{id}/release: barrier Seq (0-based, counting every
// barrier of the job) is released at wall-clock time At (Unix
// nanoseconds; 0 or past: now). Releasing every process at the same wall
// time starts them at the same fabric time.
type Release struct {
	Seq int   `json:"seq"`
	At  int64 `json:"at_unix_nano,omitempty"`
}

// CollectiveRequest is POST /collective: this process's share of a
// distributed collective. The CLI has already created and connected one QP
// pair per pair of ranks that talk (ring neighbours, every pair for
// all-to-all; one pair carries both directions), and lists here the local
// end of each. The node registers every local rank's receive region and
// answers with the job in state "setup" and the regions
// (CollectiveStatus.Regions); POST /jobs/{id}/start hands it every rank's
// region and starts it.
type CollectiveRequest struct {
	Op    string      `json:"op"` // all_reduce, all_gather, reduce_scatter, alltoall
	Ranks int         `json:"ranks"`
	Local []LocalRank `json:"local"`
	Conns []CollConn  `json:"conns"`
	// Sizes are nccl-tests sizes in bytes, run in order.
	Sizes      []int64 `json:"sizes"`
	Warmup     int     `json:"warmup"`
	Iters      int     `json:"iters"`
	Check      bool    `json:"check"`
	Seed       uint64  `json:"seed,omitempty"`
	Type       string  `json:"type,omitempty"` // float (default) or int32
	SliceBytes int     `json:"slice_bytes,omitempty"`
	Window     int     `json:"window,omitempty"`
}

// LocalRank is a rank this process runs, on one of its NICs.
type LocalRank struct {
	Rank int    `json:"rank"`
	NIC  string `json:"nic"`
}

// CollConn is the local QP (by id) through which local rank Rank talks to
// rank Peer.
type CollConn struct {
	Rank int `json:"rank"`
	Peer int `json:"peer"`
	QP   int `json:"qp"`
}

// CollectiveStart is POST /jobs/{id}/start: every rank's receive region.
type CollectiveStart struct {
	Regions map[int]BufferInfo `json:"regions"`
}

// CollectiveStatus is a collective job's progress.
type CollectiveStatus struct {
	Op    string  `json:"op"`
	Sizes []int64 `json:"sizes"`
	// Results holds one per-process result per finished size (see
	// collective.Combine).
	Results []collective.Result `json:"results"`
	// Regions are the local ranks' receive regions.
	Regions map[int]BufferInfo `json:"regions"`
	// Reached counts the barriers this process reached, Released those
	// released: it waits at barrier Released while Reached > Released.
	Reached  int `json:"reached"`
	Released int `json:"released"`
	// RxWire is the bytes the job's QPs received on the wire: it moves
	// within an iteration, and stops when a path is dead.
	RxWire int64 `json:"rx_wire_bytes"`
}

// PerfRequest is POST /perf: a perftest-like job on connected local QPs.
// Both ends of a test run one: the client drives the operations, the
// server posts receives (SEND), answers pings (latency tests) and, when
// stopped (POST /jobs/{id}/stop), checks the data that arrived. The QPs
// are paired by position with the peer's job, and QP i's buffer holds
// pattern (Seed, i) — written by the client before a WRITE or SEND, by
// the server before a READ — so each side can check what it received.
// The fields mirror simlab.PerfSpec where they overlap.
type PerfRequest struct {
	Role string `json:"role"` // client or server
	QPs  []int  `json:"qps"`
	Op   string `json:"op"` // write (default), read or send
	// Latency runs the _lat test: one message in flight, ping-pong for
	// WRITE (with immediate) and SEND.
	Latency bool `json:"latency,omitempty"`
	// Size is the message size (default 65536); every QP's buffer (and
	// the peer's) must hold it.
	Size int `json:"size,omitempty"`
	// Iterations per QP (default 1000 unless Duration is set).
	Iterations int `json:"iterations,omitempty"`
	// Duration, if > 0, posts messages for this long (fabric time).
	Duration clock.Duration `json:"duration_ps,omitempty"`
	// TxDepth is the messages each QP keeps posted (default 128).
	TxDepth int    `json:"tx_depth,omitempty"`
	Seed    uint64 `json:"seed,omitempty"`
	// At, for a client, is the fabric time its first messages are posted
	// at (0, or a time already past: at once). The node keeps fabric
	// time on the lab's common origin, so the flows of one workload,
	// started one API call after the other, all begin at the same
	// instant, as in the simulator. A timed server (which starts at once)
	// given At records what arrived by At + Duration
	// (PerfResult.WindowBytes).
	At clock.Time `json:"at_ps,omitempty"`
}

// LatencyStats are a _lat test's latencies, like ib_write_lat prints
// them: one way for WRITE and SEND (half the round trip), the round trip
// for READ.
type LatencyStats struct {
	Min     clock.Duration `json:"min_ps"`
	Typical clock.Duration `json:"typical_ps"` // median
	Avg     clock.Duration `json:"avg_ps"`
	Max     clock.Duration `json:"max_ps"`
	P99     clock.Duration `json:"p99_ps"`
	P999    clock.Duration `json:"p999_ps"`
}

// PerfResult is a perf job's progress and result, in real units.
type PerfResult struct {
	Role       string `json:"role"`
	Op         string `json:"op"`
	Latency    bool   `json:"latency"`
	Size       int    `json:"size"`
	QPs        int    `json:"qps"`
	Iterations int    `json:"iterations"` // per QP; 0 with a duration
	// Messages and Bytes completed (client) or received (server).
	Messages int64 `json:"messages"`
	Bytes    int64 `json:"bytes"`
	// RxWire is the bytes the job's QPs received on the wire (data,
	// acknowledgements, read responses): it moves while a message is
	// under way, and stops when the path is dead.
	RxWire int64 `json:"rx_wire_bytes"`
	// Start is the first post, End the last completion (client).
	Start    clock.Time     `json:"start_ps"`
	End      clock.Time     `json:"end_ps"`
	Duration clock.Duration `json:"duration_ps"`
	// BWAvg and BWPeak are goodput in Gb/s (BWPeak: the best window of at
	// least a tenth of the run, never above the NIC's line rate), MsgRate
	// in Mpps. A timed client's BWAvg and MsgRate, once its duration is
	// up, count what completed within the duration over the duration (as
	// perftest -D), not the drain of
	// the messages still queued then.
	BWAvg   float64       `json:"bw_avg_gbps"`
	BWPeak  float64       `json:"bw_peak_gbps"`
	MsgRate float64       `json:"msg_rate_mpps"`
	Lat     *LatencyStats `json:"latency_stats,omitempty"`
	// WindowBytes is a timed server's (given the window's start, At):
	// the data its QPs had received by the window's end, At + Duration —
	// what the simulator counts a timed flow's goodput by (the client
	// counts completions, which lag arrivals by the acknowledgement's
	// way back through the fabric).
	WindowBytes int64 `json:"window_bytes,omitempty"`
	// FCT is the distribution of the client's message completion times,
	// post to completion (waiting behind the QP's earlier messages
	// counts, as in perftest), once a bandwidth job finished.
	FCT *fct.Dist `json:"fct,omitempty"`
	// Progress in [0, 1].
	Progress float64 `json:"progress"`
	// Checked says the data this side received was checked; WrongBytes
	// counts the bytes that differed from the pattern.
	Checked    bool  `json:"checked"`
	WrongBytes int64 `json:"wrong_bytes"`
}
