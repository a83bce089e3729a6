// Package fabric turns a resolved topology into configured switch models
// with routes: the bridge between topologies and switchmodel that both lab
// drivers use.
//
//   - SwitchConfig (NodeConfig for a node) converts a switch profile into a
//     switchmodel.Config, knob by knob, and fails for what the model cannot
//     represent; PortSpecs gives the model's ports (rate, cable delay).
//   - Routes computes every switch's forwarding table from the addressing
//     plan — connected host and storage NIC subnets, loopbacks and
//     switch-to-switch addresses, over all equal-cost shortest paths of the
//     plane — as prefixes with egress port numbers, so that the emulation's
//     switch processes and the simulator install the same FIB (Install).
//   - BuildSim wires the switches together in the discrete-event simulator
//     (one pipe.Pipe per link direction, carrying the link's propagation
//     delay) and leaves host and storage NICs as attachment points:
//     SimFabric.Attach hands a NIC the sink it transmits into and delivers
//     the fabric's frames to it. SimFabric is a telemetry.Source over all
//     switches.
//
// Port numbering: switch model port i is the node's Ports[i], topology
// port Index i+1 (p1 is port 0).
//
// Serialization belongs to the sender: a switch's egress serializes at the
// port's rate, a NIC serializes its own frames; links only delay.
package fabric
