// Package lifecycle makes a lab's OS objects transactional: it creates
// namespaces, veth pairs and node processes through the lab's state file
// (record the intent, create, mark created), rolls a failed deploy back,
// and finds and removes what a crashed or killed CLI left behind.
//
// # Recognising the lab's own objects
//
// Rollback and Destroy remove what the state file records. DestroyAll and
// Destroy also sweep, so that a lost or stale state file leaves nothing
// behind, and they sweep by tags, never by name patterns alone:
//   - a namespace is the lab's if its name has the lab's prefix (rl-<lab>-)
//     AND it is recorded in the lab's state file or its loopback carries
//     the alias rocelab:<lab>:<node>:lo with NetnsName(lab, node) equal to
//     the namespace's name (CreateNetns sets it right after creation);
//   - an interface of the root namespace is the lab's if its alias is
//     rocelab:<lab>:…;
//   - a process is the lab's if it is recorded with its PID and start time
//     and both still match; a process recorded only as an intent (a crash
//     between fork and the state write) is found inside the lab's
//     namespace by its executable.
//
// Anything else — another lab's objects, an untagged namespace that merely
// looks like the lab's, someone's shell in a lab namespace — is left alone.
package lifecycle
