package nodeapi

import (
	"time"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/internal/jsonapi"
)

// Kind is what a node runs.
type Kind string

// Kinds of nodes.
const (
	KindSwitch   Kind = "switch"
	KindEndpoint Kind = "endpoint"
)

// Health is GET /health.
type Health struct {
	Status string  `json:"status"` // "ok"
	Name   string  `json:"name"`
	Kind   Kind    `json:"kind"`
	PID    int     `json:"pid"`
	Uptime float64 `json:"uptime_seconds"`
	// FabricTime is the loop's fabric time, in picoseconds.
	FabricTime clock.Time `json:"fabric_time_ps"`
	// Behind, when set, says the node's loop has fallen behind the
	// dilated clock (since when, by how much): alive, but its frames are
	// not on the fabric's time (emu.BehindState). Status stays "ok".
	Behind string `json:"behind,omitempty"`
}

// PortInfo describes one port in Info.
type PortInfo struct {
	Index   int            `json:"index"`
	IfName  string         `json:"ifname"`
	MAC     string         `json:"mac"`
	PeerMAC string         `json:"peer_mac"`
	Rate    clock.Rate     `json:"rate_bps"`
	Delay   clock.Duration `json:"delay_ps"`
}

// LagInfo is emu.Lag in JSON.
type LagInfo struct {
	Batches   int64   `json:"batches"`
	WallP50   float64 `json:"wall_p50_seconds"`
	WallP99   float64 `json:"wall_p99_seconds"`
	WallMax   float64 `json:"wall_max_seconds"`
	FabricP50 float64 `json:"fabric_p50_seconds"`
	FabricP99 float64 `json:"fabric_p99_seconds"`
	FabricMax float64 `json:"fabric_max_seconds"`
	Busy      float64 `json:"busy_ratio"`
}

// Info is GET /info.
type Info struct {
	Name       string          `json:"name"`
	Kind       Kind            `json:"kind"`
	PID        int             `json:"pid"`
	Scale      int             `json:"scale"`
	Seed       uint64          `json:"seed"`
	Started    time.Time       `json:"started"`
	FabricTime clock.Time      `json:"fabric_time_ps"`
	Ports      []PortInfo      `json:"ports"`
	Routes     int             `json:"routes"`
	Lag        LagInfo         `json:"lag"`
	Captures   []CaptureStatus `json:"captures"`
}

// Label and Sample are telemetry.Label and telemetry.Sample in JSON.
type Label struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Sample is one telemetry sample in JSON; Kind is "counter" or "gauge".
type Sample struct {
	Name   string  `json:"name"`
	Kind   string  `json:"kind"`
	Labels []Label `json:"labels,omitempty"`
	Value  float64 `json:"value"`
}

// Telemetry is GET /telemetry.
type Telemetry struct {
	// FabricTime is when the samples were taken, in picoseconds.
	FabricTime clock.Time `json:"fabric_time_ps"`
	Samples    []Sample   `json:"samples"`
}

// CaptureRequest is POST /capture: capture port Port's frames into File
// (an absolute path, created 0600) until MaxFrames frames (0: until
// stopped) in direction Dir ("rx", "tx" or "both", the default).
type CaptureRequest struct {
	Port      string `json:"port"` // ifname or 0-based index
	File      string `json:"file"`
	MaxFrames int    `json:"max_frames"`
	Dir       string `json:"dir,omitempty"`
}

// CaptureStopRequest is POST /capture/stop.
type CaptureStopRequest struct {
	Port string `json:"port"`
}

// CaptureStatus describes a capture.
type CaptureStatus struct {
	Port      string `json:"port"`
	File      string `json:"file"`
	Dir       string `json:"dir"`
	MaxFrames int    `json:"max_frames"`
	Frames    int    `json:"frames"`
	Done      bool   `json:"done"`
	Error     string `json:"error,omitempty"`
}

// ErrorBody is the body of a failed call.
type ErrorBody = jsonapi.ErrorBody

// EncodeSamples turns telemetry samples into their JSON form (the
// server side of GET /telemetry).
func EncodeSamples(in []telemetry.Sample) []Sample {
	out := make([]Sample, len(in))
	for i, s := range in {
		out[i] = Sample{Name: s.Name, Kind: s.Kind.String(), Value: s.Value}
		for _, l := range s.Labels {
			out[i].Labels = append(out[i].Labels, Label(l))
		}
	}
	return out
}

// DecodeSamples turns samples in JSON back into telemetry samples.
func DecodeSamples(in []Sample) []telemetry.Sample {
	out := make([]telemetry.Sample, len(in))
	for i, s := range in {
		out[i] = telemetry.Sample{Name: s.Name, Value: s.Value}
		if s.Kind == "gauge" {
			out[i].Kind = telemetry.Gauge
		}
		for _, l := range s.Labels {
			out[i].Labels = append(out[i].Labels, telemetry.Label(l))
		}
	}
	return out
}
