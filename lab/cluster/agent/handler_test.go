package agent_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/lab/cluster/agent"
	"github.com/rocelab/rocelab/lab/cluster/agentapi"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/topologies"
	"github.com/rocelab/rocelab/topologies/placement"
)

// TestBadRequests: what the agent refuses before it makes anything, with
// the status and message a client shows.
func TestBadRequests(t *testing.T) {
	root := t.TempDir()
	s, err := agent.New(agent.Config{Machine: "m1", Underlay: netip.MustParseAddr("198.18.7.1"), Root: root, Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	// Under the agent's root: its own part "mine", and "foreign", a lab
	// deployed on this machine without agents, which it must not serve.
	for lab, machine := range map[string]string{"mine": "m1", "foreign": ""} {
		os.MkdirAll(filepath.Join(root, lab), 0o700)
		b, _ := json.Marshal(deploy.Lab{Name: lab, Machine: machine, Runtime: "netns"})
		os.WriteFile(filepath.Join(root, lab, deploy.LabFile), b, 0o600)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	laptop, _ := topologies.BuiltinFile("laptop")
	pl := &placement.Placement{Machines: []string{"m1"}, Of: map[string]string{}}
	part := func(p agentapi.PartRequest) []byte { b, _ := json.Marshal(p); return b }
	for _, c := range []struct {
		name, method, path, token string
		body                      []byte
		code                      int
		msg                       string
	}{
		{"no token", "GET", "/v1/info", "", nil, 401, "wants its token"},
		{"wrong token", "GET", "/v1/info", "nope", nil, 401, "wants its token"},
		{"bad lab name", "PUT", "/v1/labs/Bad_Name", "tok", part(agentapi.PartRequest{}), 400, "Bad_Name"},
		{"not JSON", "PUT", "/v1/labs/l1", "tok", []byte("{"), 400, "bad request"},
		{"no placement", "PUT", "/v1/labs/l1", "tok", part(agentapi.PartRequest{Topology: laptop, Source: "laptop.yaml"}), 400, "no placement"},
		{"bad topology", "PUT", "/v1/labs/l1", "tok", part(agentapi.PartRequest{Topology: []byte("nodes: 3"), Source: "x.yaml", Placement: pl}), 400, "x.yaml"},
		{"wrong underlay", "PUT", "/v1/labs/l1", "tok", part(agentapi.PartRequest{Topology: laptop, Source: "laptop.yaml", Placement: pl,
			Underlay: map[string]netip.Addr{"m1": netip.MustParseAddr("198.18.7.9")}}), 400, "the agent has 198.18.7.1"},
		{"no such lab", "GET", "/v1/labs/l1", "tok", nil, 404, "l1"},
		{"exec without argv", "POST", "/v1/labs/mine/exec/host1", "tok", []byte("{}"), 400, "argv"},
		{"unbounded capture", "POST", "/v1/labs/mine/capture/host1", "tok", []byte(`{"port":"gpu0"}`), 400, "frame count or a duration"},
		{"node of no lab", "GET", "/v1/labs/l1/nodes/host1/health", "tok", nil, 404, "l1"},
		// A lab the agent did not deploy is not there, for every route.
		{"foreign lab", "GET", "/v1/labs/foreign", "tok", nil, 404, "foreign"},
		{"foreign exec", "POST", "/v1/labs/foreign/exec/host1", "tok", []byte(`{"argv":["id"]}`), 404, "foreign"},
		{"foreign node", "GET", "/v1/labs/foreign/nodes/host1/health", "tok", nil, 404, "foreign"},
		{"foreign repair", "POST", "/v1/labs/foreign/repair", "tok", nil, 404, "foreign"},
		{"foreign destroy", "DELETE", "/v1/labs/foreign", "tok", nil, 404, "foreign"},
		{"foreign capture", "POST", "/v1/labs/foreign/capture/host1", "tok", []byte(`{"port":"gpu0","count":1}`), 404, "foreign"},
	} {
		req, _ := http.NewRequest(c.method, srv.URL+c.path, bytes.NewReader(c.body))
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e agentapi.ErrorBody
		json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != c.code || !strings.Contains(e.Error, c.msg) {
			t.Errorf("%s: %d %q, want %d with %q", c.name, resp.StatusCode, e.Error, c.code, c.msg)
		}
	}
	var in agentapi.Info
	req, _ := http.NewRequest("GET", srv.URL+"/v1/info", nil)
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&in)
	resp.Body.Close()
	if in.Machine != "m1" || in.Underlay.String() != "198.18.7.1" || in.CPUs < 1 || in.CapacityPPS <= 0 || !slices.Equal(in.Labs, []string{"mine"}) {
		t.Errorf("info = %+v, want the agent's own lab only", in)
	}
}
