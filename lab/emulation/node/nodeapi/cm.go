package nodeapi

import (
	"context"
	"net/http"

	"github.com/rocelab/rocelab/endpoint/cmagent"
)

// The compliance adapter's CM operations (docs/compliance.md, "The CM
// operations"): they drive the Communication Manager of the node's NIC
// (NIC in the request, "" the first) through an auto-accepting consumer
// (package cmagent).
//
//	POST /cm/listen    CMListen → {}
//	POST /cm/connect   CMConnect → CMConnected
//	GET  /cm/events?nic=N  []CMEvent, drained
//	POST /cm/reset     CMReset → {} (stop listening, end connections quietly, forget events)
type (
	CMSpec      = cmagent.Spec
	CMConnected = cmagent.Connected
	CMEvent     = cmagent.Event
)

// CMListen is POST /cm/listen.
type CMListen struct {
	cmagent.Listen
	NIC string `json:"nic,omitempty"`
}

// CMConnect is POST /cm/connect.
type CMConnect struct {
	cmagent.Connect
	NIC string `json:"nic,omitempty"`
}

// CMReset is POST /cm/reset.
type CMReset struct {
	NIC string `json:"nic,omitempty"`
}

// CMListen is POST /cm/listen.
func (c *Client) CMListen(ctx context.Context, req CMListen) error {
	return c.call(ctx, http.MethodPost, "/cm/listen", req, nil)
}

// CMConnect is POST /cm/connect.
func (c *Client) CMConnect(ctx context.Context, req CMConnect) (CMConnected, error) {
	var out CMConnected
	return out, c.call(ctx, http.MethodPost, "/cm/connect", req, &out)
}

// CMEvents is GET /cm/events: the events since the last call, oldest
// first.
func (c *Client) CMEvents(ctx context.Context, nic string) ([]CMEvent, error) {
	var out []CMEvent
	return out, c.call(ctx, http.MethodGet, "/cm/events?nic="+nic, nil, &out)
}

// CMReset is POST /cm/reset.
func (c *Client) CMReset(ctx context.Context, nic string) error {
	return c.call(ctx, http.MethodPost, "/cm/reset", CMReset{NIC: nic}, nil)
}
