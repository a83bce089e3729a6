// Package state keeps the books of a running emulation lab: its run
// directory, a JSON state file that records every object the lab creates,
// and the names that mark those objects as the lab's own.
//
// # Layout
//
// Each lab has a run directory, by default /run/rocelab/<lab>/ (Root can be
// moved for tests), readable by root only (0700):
//
//	/run/rocelab/<lab>/lock        flock(2) target: one CLI at a time
//	/run/rocelab/<lab>/state.json  the objects, 0600
//
// # Transactions
//
// The lifecycle is write-ahead: before the lab creates a namespace, a veth,
// a container or a process it calls Intend, which records the object with
// Status "intent" and writes the state file (temporary file + fsync +
// rename, so a crash leaves either the old or the new file). After the
// object exists, Created marks it; after it is removed, Forget drops it.
// A crash at any point therefore leaves a state file that names a superset
// of what exists, and rollback (package lifecycle) deletes in reverse order,
// treating "not found" as done.
//
// # Names
//
// Everything a lab creates carries its name, so a leftover can be told
// from someone else's object even without the state file:
//   - network namespaces are called rl-<lab>-<node> (NetnsName; a hashed
//     short form when that is too long or the node name is not file-safe),
//   - interfaces get the names of the addressing plan (topologies.IfName)
//     and the alias rocelab:<lab>:<node>:<port> (IfAlias), and the
//     loopback of every namespace the lab creates gets the alias
//     rocelab:<lab>:<node>:lo, which tags the namespace itself.
package state
