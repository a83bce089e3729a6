package state

import (
	"fmt"
	"hash/fnv"
	"strings"
)

// AliasPrefix starts the interface alias of every object a lab tags.
const AliasPrefix = "rocelab:"

// NetnsPrefix starts the name of every network namespace a lab creates.
const NetnsPrefix = "rl-"

// MaxNetnsName is the longest namespace name NetnsName returns.
const MaxNetnsName = 64

// LoPort is the port name used in the alias of a namespace's loopback.
const LoPort = "lo"

// fileSafe reports whether s is 1 to max characters of [A-Za-z0-9_.-]
// starting with a letter or digit (max 0: no limit). A loop, not a
// regular expression: compiling two at package initialisation cost every
// node process 0.8 ms.
func fileSafe(s string, max int) bool {
	if s == "" || max > 0 && len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case i > 0 && (c == '_' || c == '.' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// ValidName reports whether lab can name a lab: 1 to 48 characters of
// letters, digits, '_', '.', '-', starting with a letter or digit. The
// restriction keeps lab names safe in file names, namespace names and
// interface aliases (no ':' or '/').
func ValidName(lab string) error {
	if !fileSafe(lab, 48) {
		return fmt.Errorf("invalid lab name %q: want 1-48 of [A-Za-z0-9_.-], starting with a letter or digit", lab)
	}
	return nil
}

// NetnsName is the name of the network namespace of node in lab:
// "rl-<lab>-<node>", or "rl-<lab>-~<hash>" when that is longer than
// MaxNetnsName or node is not made of file-safe characters.
func NetnsName(lab, node string) string {
	n := NetnsPrefix + lab + "-" + node
	if len(n) <= MaxNetnsName && fileSafe(node, 0) {
		return n
	}
	return fmt.Sprintf("%s%s-~%012x", NetnsPrefix, lab, NodeHash(lab, node))
}

// NodeHash is the 48-bit hash that stands for node in a name of lab that
// would be too long or unsafe with the node's name in it (NetnsName, the
// docker runtime's container names).
func NodeHash(lab, node string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(lab))
	h.Write([]byte{0})
	h.Write([]byte(node))
	return h.Sum64() & (1<<48 - 1)
}

// NetnsOf reports whether name has the shape of a namespace name of lab.
// Several labs can match one name when lab names share a prefix up to a
// '-' ("a" and "a-b"); callers decide with the namespace's tag.
func NetnsOf(lab, name string) bool {
	p := NetnsPrefix + lab + "-"
	return len(name) > len(p) && strings.HasPrefix(name, p)
}

// IfAlias is the alias that tags port of node in lab:
// "rocelab:<lab>:<node>:<port>".
func IfAlias(lab, node, port string) string {
	return AliasPrefix + lab + ":" + node + ":" + port
}

// ParseAlias splits an alias made by IfAlias. Node names may contain ':'
// only if the port does not; the lab never does.
func ParseAlias(alias string) (lab, node, port string, ok bool) {
	rest, found := strings.CutPrefix(alias, AliasPrefix)
	if !found {
		return "", "", "", false
	}
	lab, rest, found = strings.Cut(rest, ":")
	if !found || ValidName(lab) != nil {
		return "", "", "", false
	}
	i := strings.LastIndexByte(rest, ':')
	if i <= 0 || i == len(rest)-1 {
		return "", "", "", false
	}
	return lab, rest[:i], rest[i+1:], true
}
