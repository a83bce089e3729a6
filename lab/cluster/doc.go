// Package cluster groups the multi-machine wing: labs that span machines
// are the same labs, each machine's part deployed by an agent with the
// one-machine emulation, links between machines carried by VXLAN
// (docs/multi-machine.md). It sits above lab/emulation, which never
// imports it; in the tree only cmd/ imports it.
//
// Package cluster itself is the lifecycle of any lab: Deploy (across the
// machines of agents when there are any), Destroy and DestroyAll (asking
// the agents to remove their parts first), Restart, Repair, Exec, Capture
// and Adopt reach a lab that spans machines through its agents and go to
// control/deploy for a lab on one machine.
//
//   - agentapi: the agent's HTTP/JSON API and its client, which the
//     deploying machine uses to hand each agent its part;
//   - agent: the per-machine process (rocelab agent); agent/agenttest is
//     the harness of machines as namespaces and of a real Kubernetes
//     control plane;
//   - kube: the Lab custom resource, agents' Leases and the CLI's client;
//     kube/controller, the controller-runtime controller, linked only by
//     rocelab-controller.
//
// Which machine runs each node is topologies/placement's.
package cluster
