// Package emulation groups the wall-clock driver: the lab people touch.
// Every switch and endpoint is a `rocelab node` process in its own network
// namespace (a plain netns or a Docker container), joined by veth pairs and
// reading real frames on AF_PACKET sockets; the pure models run on emu's
// loop in wall-clock time dilated by a scale factor k.
//
//   - emu: the dilated wall-clock loop and the ports that feed models frames;
//   - afpacket, links: sockets and veth pairs;
//   - runtime (netns, docker, proc): where node processes live;
//   - node: the node process and its HTTP/JSON API;
//   - state, lifecycle, deploy: the transactional lab lifecycle;
//   - stats: tables over node telemetry; demo: the guided tour.
package emulation
