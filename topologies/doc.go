// Package topologies reads, validates and generates rocelab topology files:
// the YAML description of an AI training cluster's back-end (BE) RoCE fabric
// and its front-end (FE) network.
//
// A file is decoded from a yaml.Node tree into the raw spec types (File,
// NodeSpec, LinkSpec, ProfileSpec, …), which keep the line and column of
// every value; a resolve step turns them into the resolved model, a
// Topology: nodes with their ports (peer, rate, delay, MTU, plane, address,
// MAC, interface name), links, and one fully resolved switch Profile per
// switch. Every problem found is reported, as an ErrorList of
// FILE:LINE:COL messages sorted by position.
//
// The format is documented in docs/topology.md; schema.json is a JSON
// Schema generated from the spec types, for editors.
//
// Subfolders: graph draws topologies (SVG, DOT, Mermaid) and gives the
// drawing's geometry to the web view; placement splits a lab over
// machines (which machine runs each node, which links cross).
package topologies
