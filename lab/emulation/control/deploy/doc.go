// Package deploy turns a resolved topology into a running emulation lab and
// takes it down again: the orchestration behind `rocelab deploy`,
// `destroy`, `inspect` and `exec`.
//
// # Deploy
//
// Deploy works in steps, each recorded in the lab's state file before it
// acts (package state, write-ahead), and rolls everything back (package
// lifecycle) when any step fails or the context is cancelled:
//
//  1. validate the options, re-plan the topology's addresses for the lab
//     name, refuse a lab that exists, open and lock its state;
//  2. create every node's network namespace, in parallel (Options.Workers);
//  3. create every link as a veth pair whose ends are born in the two
//     nodes' namespaces, with the plan's interface names and MACs and
//     offloads off (package links). Veths carry the link's IP MTU plus
//     LinkOverhead, so that the kernel never drops a frame the switch
//     model should see (a VLAN tag, a trimmed header); IPv6 is off on
//     every end except an FE interface whose plan has IPv6;
//  4. address the front end: a host's or storage node's FE NIC is an
//     ordinary kernel interface with the plan's /31 (and /127), the link's
//     exact MTU, a permanent neighbour entry for its gateway (the switch
//     port's address → the switch port's MAC, so no ARP is ever needed:
//     the switch model does not answer ARP) and a route to the whole FE
//     pool via that gateway. Back-end NICs are left without an address:
//     they belong to the RDMA endpoint process, and the kernel must not
//     answer RoCE (no address, no IPv6, so it sends and answers nothing);
//  5. write each switch's node config (package node) into the run
//     directory, start its node process (rocelab-node --config FILE, or
//     `rocelab node --config FILE`: state.NodeCommand) in its
//     namespace, and wait for GET /health on its socket.
//
// With the netns runtime each step records all its objects (namespaces,
// veth pairs, node processes) in one write of the state file before it
// creates any of them, and the processes that started get their PIDs in
// one more write; a rollback treats an object that is not there as
// removed, so recording a whole step ahead keeps the write-ahead
// guarantee at a write per step instead of per object. Links are made by
// one links.Maker (sockets per namespace, not per pair) and waited for
// once, all together, before the node processes start. Destroy stops the
// processes, deletes the namespaces (which takes their veth ends with
// them) in parallel, then rolls the books back in one write.
//
// A node's process is chosen by its kind (processFor): switches run the
// switch node; hosts and storage run none until the endpoint node exists
// (adding it is one function that builds an endpoint node.Config from the
// host's BE ports).
//
// # Docker runtime
//
// With a docker.Runtime in Options.Runtime, Deploy first builds the node
// image (EnsureImage: the binary must be static), and step 2 creates a
// container per node instead of a namespace: NODE.json is made a FIFO and
// the container runs `/rocelab node --config NODE.json`, so its node
// process blocks until step 5 writes its config into the FIFO (then a
// regular copy replaces it) — after the links exist, since the node opens
// its AF_PACKET sockets as soon as it has its config. The container is
// recorded (state.KindContainer, by name) before it is created, and its
// /proc/PID/ns/net is bind-mounted as the named namespace rl-<lab>-<node>
// (recorded as KindNetns, loopback tagged), so that links, addresses and
// exec work as with the netns runtime. Package lifecycle cannot remove
// containers: rollback and Destroy remove them here first (and forget
// them), then lifecycle unmounts the names; Destroy and DestroyAll also
// remove every container labelled with a matching lab (Leftovers), which
// finds the containers of a lab whose state is gone.
//
// A host or storage node with an image of its own (topologies
// Node.Container) is a container of that image, which owns its network
// namespace; its node process, if it has BE NICs, runs in a sidecar
// joined to it (docker.Runtime). Both containers are recorded before
// either is created and removed one after the other (nodes in parallel).
// Before anything is created Deploy checks that every such image is on the
// machine and every bind source exists; after the health step, that every
// user container still runs. A topology with images refuses any runtime
// but docker (ErrNeedsDocker). The FE address step is the same as for any
// node; the user container's /etc/hosts names every host and storage node
// by its first FE address. Inspect reports a stopped user container or
// sidecar as the node's health; Exec runs in the user's container.
//
// # Scale
//
// Every rate is divided by the scale factor k and every duration multiplied
// by it (docs/design.md). With Options.Scale 0 the lab picks k automatically
// (AutoScale): the aggregate rate the back end forwards at full load — both
// directions of every BE link — in frames of the BE MTU, divided by
// Options.CapacityPPS, the frames per second the machine can forward
// (default DefaultCapacityPPSPerCPU per CPU, already derated to keep the
// machine half idle), rounded up (emu.AutoScale). The chosen k is recorded
// in the state file (info "scale") and in the node configs.
//
// # Run directory
//
// Besides the state file and lock, a lab's run directory holds, per
// process node, NODE.json (its config), NODE.sock (its API) and NODE.log
// (its stdout and stderr), and lab.json, the Lab that Deploy returned,
// which Inspect and Exec read.
package deploy
