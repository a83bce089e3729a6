// Package dashboards is rocelab's observability floor: what the fabric did,
// live, in the tools operators already run.
//
//   - dashboards/metrics: one Prometheus collector that reads every node's
//     telemetry at scrape time, with names and labels that follow the RoCE
//     exporters and switch OSes operators know (docs/metrics.md);
//   - dashboards/labsource: the reading of a deployed emulation lab (each
//     node's telemetry, ports and faults over its API) that both the
//     collector and the web view use;
//   - dashboards/grafana: Grafana dashboards generated from Go code, and the
//     provisioning files a stock Grafana picks them up with;
//   - dashboards/web: the live web view (an embedded static page and one
//     event stream) and the replay of a scenario report.
package dashboards
