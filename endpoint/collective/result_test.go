package collective

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseSizes(t *testing.T) {
	tests := []struct {
		in      string
		want    []int64
		wantErr bool
	}{
		{"1MB:8MB", []int64{1 << 20, 2 << 20, 4 << 20, 8 << 20}, false},
		{"1M:256M", []int64{1 << 20, 2 << 20, 4 << 20, 8 << 20, 16 << 20, 32 << 20, 64 << 20, 128 << 20, 256 << 20}, false},
		{"8:128:x4", []int64{8, 32, 128}, false},
		{"1K:4KiB:+1K", []int64{1024, 2048, 3072, 4096}, false},
		{"0:2K:+1k", []int64{0, 1024, 2048}, false},
		{"3:20", []int64{3, 6, 12}, false}, // stops before passing MAX
		{"1G", []int64{1 << 30}, false},
		{"4B, 1 MiB ,2g", []int64{4, 1 << 20, 2 << 30}, false},
		{"4b", nil, true}, // bits
		{"1.5M", []int64{3 << 19}, false},
		{"1 MiB:2 MiB", []int64{1 << 20, 2 << 20}, false},
		{"1Mb", nil, true}, // megabits are no size
		{"", nil, true},
		{"1M:1K", nil, true},
		{"1X", nil, true},
		{"-4", nil, true},
		{"1K:1M:x1", nil, true},
		{"1K:1M:7", nil, true},
		{"0:1M", nil, true},
		{"1:2:3:4", nil, true},
		{"99999999999G", nil, true},
	}
	for _, tc := range tests {
		got, err := ParseSizes(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("ParseSizes(%q) error = %v, wantErr %t", tc.in, err, tc.wantErr)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ParseSizes(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestLayout(t *testing.T) {
	tests := []struct {
		op          Op
		n           int
		size        int64
		want        Layout
		in, regionB int64
	}{
		{AllReduce, 3, 1 << 20, Layout{AllReduce, 3, 1 << 20, 1 << 18, 0}, 1 << 18, 1 << 20},
		{AllReduce, 4, 10, Layout{AllReduce, 4, 8, 2, 0}, 2, 8},
		{AllGather, 3, 1 << 20, Layout{AllGather, 3, 1048572, 262143, 87381}, 87381, 1048572},
		{ReduceScatter, 8, 100, Layout{ReduceScatter, 8, 96, 24, 3}, 24, 96},
		{AllToAll, 8, 16, Layout{AllToAll, 8, 0, 0, 0}, 0, 0},
	}
	for _, tc := range tests {
		got, err := NewLayout(tc.op, tc.n, tc.size)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("NewLayout(%v, %d, %d) (-want +got):\n%s", tc.op, tc.n, tc.size, diff)
		}
		if got.InElems() != tc.in || got.RegionBytes() != tc.regionB {
			t.Errorf("%v: in %d region %d, want %d %d", tc.op, got.InElems(), got.RegionBytes(), tc.in, tc.regionB)
		}
	}
}

func TestBusFactor(t *testing.T) {
	for _, tc := range []struct {
		op   Op
		n    int
		want float64
	}{{AllReduce, 8, 1.75}, {AllReduce, 2, 1}, {AllGather, 4, 0.75}, {ReduceScatter, 2, 0.5}, {AllToAll, 8, 0.875}} {
		if got := BusFactor(tc.op, tc.n); got != tc.want {
			t.Errorf("BusFactor(%v, %d) = %v, want %v", tc.op, tc.n, got, tc.want)
		}
	}
}

func TestParseOp(t *testing.T) {
	for in, want := range map[string]Op{"all_reduce": AllReduce, "AllGather": AllGather, "reduce-scatter": ReduceScatter, "alltoall": AllToAll, "a2a": AllToAll} {
		if got, err := ParseOp(in); err != nil || got != want {
			t.Errorf("ParseOp(%q) = %v, %v", in, got, err)
		}
		if got, _ := ParseOp(want.String()); got != want {
			t.Errorf("ParseOp(%v.String()) = %v", want, got)
		}
	}
	_, err := ParseOp("broadcast")
	if err == nil {
		t.Fatal("ParseOp(broadcast) accepted")
	}
	// The error lists the names `rocelab collective` documents.
	if want := "allreduce, allgather, reducescatter or alltoall"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not list %q", err, want)
	}
}

func TestWriteTable(t *testing.T) {
	rs := []Result{
		{Op: "all_reduce", Ranks: 8, Size: 1048576, Count: 262144, Type: "float", RedOp: "sum", TimeUs: 146.8, AlgBW: 7.1428, BusBW: 12.4999, Checked: true},
		{Op: "all_gather", Ranks: 8, Size: 268435456, Count: 67108864, Type: "float", RedOp: "none", TimeUs: 18793.25, AlgBW: 14.28, BusBW: 12.5},
	}
	var b strings.Builder
	if err := WriteTable(&b, rs); err != nil {
		t.Fatal(err)
	}
	want := `#       size         count      type   redop     time   algbw   busbw  #wrong
#        (B)    (elements)                       (us)  (GB/s)  (GB/s)        
     1048576        262144     float     sum   146.80    7.14   12.50       0
   268435456      67108864     float    none  18793.2   14.28   12.50     N/A
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
	js, err := json.Marshal(rs[0])
	if err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(js, &back); err != nil || !cmp.Equal(back, rs[0]) {
		t.Errorf("JSON round trip: %s -> %+v (%v)", js, back, err)
	}
}
