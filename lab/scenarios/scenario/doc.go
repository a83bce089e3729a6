// Package scenario reads rocelab scenario files — one run a CI job or a
// trainer starts: a topology, workloads, a fault schedule and expectations
// over the metrics the run measured — and evaluates the expectations.
//
// A scenario is YAML, decoded from yaml.Node trees so that every error is
// FILE:LINE:COL (topologies.Error, collected in a topologies.ErrorList), and
// validated strictly: unknown keys, bad units, unknown workload kinds and
// operations, node and port references that the resolved topology does not
// have, bad endpoint patterns, fault kinds and targets. A chakra workload's
// traces are loaded and validated with the file (workloads/chakra), each
// problem named by trace file and node at the line of its trace key;
// ChakraScenario makes the scenario rocelab run --chakra runs.
// testdata/good holds examples; docs/scenarios.md is the user's guide.
//
// Expectations are a small expression language:
//
//	busbw(job=train) >= 0.8 * line_rate
//	drops(class=lossless) == 0 and pfc_rx(node=rtsw1) > 0
//	p99(fct) < 2ms
//
// Subfolders: expect holds the language (lexer, parser, units, the metric
// catalogue, evaluation over its Metrics interface; Snapshots is an
// implementation over gathered samples). This package binds it to a
// scenario's topology and workloads (Env); Evaluate reads the metrics
// through it and WriteJUnit turns the results into a JUnit report.
//
// See docs/design.md, "Scenario files (lab/scenarios/scenario)", for the
// file's keys, endpoint patterns and permutations, fault targets and how
// metric names map onto telemetry.
package scenario
