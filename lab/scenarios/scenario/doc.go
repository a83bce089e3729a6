// Package scenario reads rocelab scenario files — one run a CI job or a
// trainer starts: a topology, workloads, a fault schedule and expectations
// over the metrics the run measured — and evaluates the expectations.
//
// A scenario is YAML, decoded from yaml.Node trees so that every error is
// FILE:LINE:COL (topologies.Error, collected in a topologies.ErrorList), and
// validated strictly: unknown keys, bad units, unknown workload kinds and
// operations, node and port references that the resolved topology does not
// have, bad endpoint patterns, fault kinds and targets.
//
// Expectations are a small expression language (package expect):
//
//	busbw(job=train) >= 0.8 * line_rate
//	drops(class=lossless) == 0 and pfc_rx(node=rtsw1) > 0
//	p99(fct) < 2ms
//
// The file (testdata/good holds examples):
//
//	name: incast-pfc            # default: the file's base name
//	description: free text
//	topology: incast            # built-in name | path (has / or .yaml, relative
//	                            # to the scenario) | inline mapping; default laptop
//	scale: auto                 # or a whole factor; default auto
//	duration: 20ms              # required, fabric time
//	seed: 7                     # default 1
//	workloads:                  # each: name, kind, start (default 0)
//	  - {name: w, kind: perf, op: write|read|send, from: P, to: P, size: 64KB,
//	     pattern: pairs|permutation|all-to-all, qps: 1, paths: 1,
//	     iters: 1000 | duration: 5ms, latency: false, mode: rocev2|metaroce,
//	     cc: none|dcqcn|credit}
//	  - {name: c, kind: collective, op: allreduce|allgather|reducescatter|alltoall|
//	     hier-allreduce, ranks: P, sizes: "1MB:64MB", iters: 20, warmup: 5,
//	     group: 8, mode, cc, paths}
//	  - {name: b, kind: background, pattern: elephant|incast, from: P, to: P,
//	     rate: 50G, size: 1MB, interval: 100us, duration, mode, cc}  # incast: size+interval
//	  - {name: f, kind: fe, pattern: burst|stream, from: P, to: P, size: 256MB,
//	     rate, interval, iters, duration, mode, cc}                  # burst: size
//	faults:
//	  - {at: 2ms, for: 5ms, target: rtsw1->ctsw2, kind: loss, params: "1%"}
//	expect:
//	  - busbw(job=train) >= 0.8 * line_rate
//
// P is an endpoint pattern (endpoints.go): host1:gpu0, host1 (its ports on
// the workload's plane), "host[1-4]:gpu[0-1]", all, comma lists or YAML
// lists. from and to pair as many-to-one, one-to-many or one-to-one
// (perf pattern pairs, the default). A perf permutation (permutation.go)
// draws, from the run's seed, a pairing where every sender sends to
// exactly one receiver and every receiver hears from exactly one, never
// itself: over from and to (as many of each), over from or to alone, or
// over every host's back-end ports when neither is given; the same seed
// and endpoints give the same permutation, so two workloads can compare
// settings on one pairing. all-to-all is one flow from every sender to
// every receiver but itself (at most MaxAllToAllQPs QPs). paths > 1 makes
// each MetaRoCE QP spray over that many paths (UDP source ports); qps
// splits a flow over several QPs. Collective hier-allreduce is NCCL's
// hierarchical all-reduce of one size, run once: reduce-scatter inside
// each group of group consecutive ranks (default: the ranks of the first
// rank's host), an all-reduce per local index across the groups, an
// all-gather inside each group. alltoall connects a pair of ranks at its
// first write; past 128 ranks the simulator destroys idle pairs, so an
// all-to-all across thousands of GPUs holds a few dozen QPs a rank. perf,
// collective and background run on back-end (gpu) ports, fe on front-end
// ports. sizes follows nccl-tests (binary units, MIN:MAX doubling); other
// sizes follow the topology units (1MB = 10^6 bytes). A fault target is
// a link direction a->b, both directions a<->b (a and b nodes or
// node:port; every parallel link), a port node:port (its egress), or for
// a storm the port it is sent from; kind and params are checked with
// faults.ParseSpec.
//
// Metric names are friendly names from a catalogue (expect.Catalogue)
// mapped onto the telemetry samples the models emit; a Summary metric
// (fct) is a distribution the runner summarises while the run goes, so
// only the expect.SummaryStats aggregations apply to it (p99(fct),
// count(fct), …). Package expect holds the language (lexer, parser,
// units, catalogue, evaluation over its Metrics interface; Snapshots is
// an implementation over gathered samples); this package binds it to a
// scenario's topology and workloads (Env), Evaluate reads the metrics
// through it and WriteJUnit turns the results into a JUnit report.
package scenario
