// Package nodeplan turns a node of a resolved topology into the
// configuration of its node process (node.Config): a switch's ports,
// model configuration (with PFC headroom that allows for loop stalls) and
// routes, an endpoint's ports and RDMA NICs. Deploy and the scenario
// runner plan with it; the node process itself only reads the JSON, so it
// links neither the topology loader nor its validators (YAML, the schema,
// image references): a node starts in milliseconds.
package nodeplan
