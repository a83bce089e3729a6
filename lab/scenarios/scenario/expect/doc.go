// Package expect is the expectation language of scenarios: a lexer and a
// recursive-descent parser for expressions such as
//
//	busbw(job=train) >= 0.8 * line_rate
//	drops(class=lossless) == 0 and pfc_rx(node=rtsw1) > 0
//	p99(fct) < 2ms
//
// their units (Quantity: bits, seconds and their ratios), the catalogue
// of metric names mapped onto telemetry samples (Catalogue), and the
// compiled expression (Compile, Expr) evaluated over a Metrics interface
// (Snapshots implements it over gathered samples).
//
// The package knows nothing of topologies' nodes or of workloads: a
// Binder resolves the constants (line_rate, duration) and the label
// selectors of a metric to telemetry queries (Lookup). Package scenario
// binds it to a scenario's topology and workloads.
package expect
