// Package floors holds the test that keeps rocelab's layout true: every
// top-level room sits on a floor (docs/design.md), and imports only point
// down. It has no code of its own; the rule is in floors_test.go.
package floors
