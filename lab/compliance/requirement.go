package compliance

import "fmt"

// Level is a requirement's RFC 2119 keyword.
type Level uint8

// Levels, weakest first.
const (
	May Level = iota
	Should
	MustNot
	Must
)

func (l Level) String() string {
	return [...]string{"MAY", "SHOULD", "MUST NOT", "MUST"}[l]
}

// Mandatory reports whether a failure against l fails the suite (MUST and
// MUST NOT).
func (l Level) Mandatory() bool { return l >= MustNot }

// Requirement is one numbered statement of the specification.
type Requirement struct {
	ID    string // MR-<section>.<n>
	Level Level
	Text  string // the statement, shortened
}

// Lookup returns the requirement with id.
func Lookup(id string) (Requirement, bool) {
	for _, r := range spec {
		if r.ID == id {
			return r, true
		}
	}
	return Requirement{}, false
}

// caseLevel is the strongest level among the requirements a case cites.
func caseLevel(c *Case) (Level, error) {
	var lv Level
	for _, id := range c.Cites {
		r, ok := Lookup(id)
		if !ok {
			return 0, fmt.Errorf("case %s cites %s, which docs/metaroce-spec.md does not have", c.ID, id)
		}
		lv = max(lv, r.Level)
	}
	return lv, nil
}
