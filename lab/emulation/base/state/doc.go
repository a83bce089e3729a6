// Package state keeps the books of a running emulation lab: its run
// directory, a JSON state file that records every object the lab creates,
// and the names that mark those objects as the lab's own.
//
// Each lab has a run directory, by default /run/rocelab/<lab>/ (Root can be
// moved for tests), readable by root only (0700), holding lock (flock(2):
// one CLI at a time) and state.json (the objects, 0600).
//
// The lifecycle is write-ahead: before the lab creates an object it calls
// Intend, which records it with Status "intent" and writes the state file
// atomically; Created marks it once it exists, Forget drops it once it is
// removed. A crash at any point leaves a state file that names a superset
// of what exists, and rollback (package lifecycle) deletes in reverse
// order, treating "not found" as done.
//
// Everything a lab creates carries its name, so a leftover can be told
// from someone else's object even without the state file: namespaces are
// rl-<lab>-<node> (NetnsName), interfaces carry the alias
// rocelab:<lab>:<node>:<port> (IfAlias), and each namespace's loopback
// rocelab:<lab>:<node>:lo.
//
// docs/design.md, "The lab's books (lab/emulation/base/state)", has the
// layout, the transactions and the names in full.
package state
