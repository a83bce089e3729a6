// Package live runs the compliance suite against a live rocelab endpoint
// node in emulation: the IUT is a real `rocelab node` process (the endpoint node a
// lab runs on every host) in a network namespace of its own, with one port
// on a veth pair whose other end is the tester's, in a second namespace.
// The tester reads and writes raw frames on its end with an AF_PACKET
// socket (package afpacket; offloads are off on both ends, package links)
// and drives the node through the adapter routes of its API socket
// (docs/compliance.md; nodeapi.Client).
//
// # Time
//
// The node runs dilated by a scale k (Options.Scale): its models keep real
// units, so the 200 µs retransmission timeout is 200 ms of wall clock at
// the default k = 1000. The Env reports time in fabric units too: its
// clock is wall-clock/k since the node started (nodeapi.Info.Started, the
// epoch both share), and every frame from the IUT carries the kernel's
// receive stamp taken when the node's transmit handed it to the veth, so a
// late tester still measures the node's timers exactly. What remains is
// the node's own lateness (a loop the kernel kept waiting sends late):
// Env.Jitter reports Options.Jitter/k, the host's scheduling jitter in
// fabric time, and the cases widen their timing bounds by it.
//
// # One node, many cases
//
// Start sets up the namespaces, the veth pair and the node once per run;
// each case gets a fresh Env over it, which drops frames left over from
// the case before, and on Close destroys the QPs the case created and
// lets the wire settle (Settle of fabric time: longer than the CNP rate
// limiter's 50 µs interval, so no case inherits another's limiter).
// IUT.Close stops the node and removes everything Start created, also
// after a failure; Start itself rolls back what it made when a step fails.
package live
