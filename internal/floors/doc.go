// Package floors holds the tests that keep rocelab's layout true: every
// top-level room sits on a floor (docs/design.md), and imports only point
// down (floors_test.go); every package's doc names the folders of packages
// below it, and docs/design.md's layout the rest (docmap_test.go). It has
// no code of its own.
package floors
