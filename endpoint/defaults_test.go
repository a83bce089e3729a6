package endpoint_test

import (
	"testing"

	"github.com/rocelab/rocelab/endpoint"
)

func TestPayloadMTU(t *testing.T) {
	for _, tc := range []struct{ ip, want int }{{4200, 4096}, {9000, 4096}, {1500, 1024}, {2200, 2048}, {300, 256}, {4156, 4096}, {4155, 2048}} {
		if got := endpoint.PayloadMTU(tc.ip); got != tc.want {
			t.Errorf("PayloadMTU(%d) = %d, want %d", tc.ip, got, tc.want)
		}
	}
}

func TestCCRegistry(t *testing.T) {
	for _, name := range []string{"none", "dcqcn", "credit"} {
		if _, err := endpoint.CCRegistry().Get(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := endpoint.CCRegistry().Get("cubic"); err == nil {
		t.Error("cubic: no error")
	}
}
