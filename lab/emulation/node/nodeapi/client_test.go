package nodeapi_test

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
)

// serve answers the API on a Unix socket with h and returns a client.
func serve(t *testing.T, h http.Handler) *nodeapi.Client {
	t.Helper()
	socket := filepath.Join(t.TempDir(), "n.sock")
	l, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	c := nodeapi.NewClient(socket)
	t.Cleanup(c.Close)
	return c
}

func TestClientTelemetry(t *testing.T) {
	want := []telemetry.Sample{
		{Name: "rx_frames_total", Kind: telemetry.Counter, Labels: []telemetry.Label{{Name: "port", Value: "p1"}}, Value: 7},
		{Name: "queue_bytes", Kind: telemetry.Gauge, Value: 1500},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /telemetry", func(w http.ResponseWriter, _ *http.Request) {
		json.NewEncoder(w).Encode(nodeapi.Telemetry{FabricTime: 42, Samples: nodeapi.EncodeSamples(want)})
	})
	got, err := serve(t, mux).Telemetry(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("samples (-want +got):\n%s", d)
	}
}

func TestClientAPIError(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /qp/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		json.NewEncoder(w).Encode(nodeapi.ErrorBody{Error: "no qp " + r.PathValue("id")})
	})
	_, err := serve(t, mux).QP(t.Context(), 3)
	var ae *nodeapi.APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusNotFound || ae.Message != "no qp 3" {
		t.Fatalf("err = %v, want APIError 404 no qp 3", err)
	}
}
