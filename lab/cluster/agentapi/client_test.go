package agentapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/lab/cluster/agentapi"
)

func TestClientErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/info":
			w.Write([]byte(`{"machine":"m1","underlay":"198.18.7.1","cpus":2}`))
		case "/v1/labs/a":
			w.WriteHeader(http.StatusConflict)
			w.Write([]byte(`{"error":"deploy lab a: lab exists"}`))
		default:
			w.WriteHeader(http.StatusBadGateway)
			w.Write([]byte("plain text"))
		}
	}))
	defer srv.Close()
	c := agentapi.NewClient(strings.TrimPrefix(srv.URL, "http://"))
	defer c.Close()
	in, err := c.Info(t.Context())
	if err != nil || in.Machine != "m1" || in.Underlay.String() != "198.18.7.1" || in.CPUs != 2 {
		t.Errorf("Info = %+v, %v", in, err)
	}
	err = c.Deploy(t.Context(), "a", agentapi.PartRequest{}, nil)
	if !errors.Is(err, agentapi.ErrExists) || !strings.Contains(err.Error(), "deploy lab a: lab exists") || !strings.Contains(err.Error(), srv.URL) {
		t.Errorf("Deploy of an existing lab = %v", err)
	}
	if err := c.Destroy(t.Context(), "b", nil); err == nil || !strings.Contains(err.Error(), "plain text") {
		t.Errorf("Destroy on a 502 = %v", err)
	}
	if got := c.NodeURL("lab 1", "host/1"); got != srv.URL+"/v1/labs/lab%201/nodes/host%2F1" {
		t.Errorf("NodeURL = %s", got)
	}
	srv.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if _, err := c.Info(ctx); err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("Info of a closed agent = %v", err)
	}
}
