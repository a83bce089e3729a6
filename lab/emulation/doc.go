// Package emulation groups the wall-clock driver: the lab people touch.
// Every switch and endpoint is a `rocelab node` process in its own network
// namespace (a plain netns or a Docker container), joined by veth pairs and
// reading real frames on AF_PACKET sockets, or one of a node group's models
// on one loop; the pure models run on emu's loop in wall-clock time dilated
// by a scale factor k.
//
// Its folders are floors of their own: a package imports its own folder
// and lower floors only (internal/floors keeps it so).
//
//   - base: the lab's books and where nodes live. base/state (run
//     directory, write-ahead state file, names), base/sandbox (the Runtime
//     interface; base/sandbox/netns and base/sandbox/docker implement it),
//     base/proc (processes by PID and start time);
//   - datapath: frames and the loop. datapath/emu (the dilated loop),
//     datapath/afpacket (sockets), datapath/links (veth pairs),
//     datapath/verbs (verbs served to programs, its C library and hostfs);
//   - node: the node process (a switch, or an endpoint's NICs) and
//     node/nodeapi, its HTTP/JSON API and client;
//   - control: building and tearing down labs. control/nodeplan (a
//     topology node → its node's config), control/lifecycle (transactional
//     create, rollback, leftovers), control/deploy (deploy, destroy,
//     inspect, exec);
//   - jobs: the one home of running perf, collectives, verbs-side jobs and
//     faults against a live lab; the CLI, the scenario runner and the demo
//     call it;
//   - tools: tools/stats (tables over node telemetry), tools/demo (the
//     guided tour).
//
// Labs that span machines are lab/cluster's, above this group.
package emulation
