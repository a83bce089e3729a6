package demo

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/emulation/runtime/netns"
)

// TestDemo runs the whole tour as `rocelab demo` does: deploy laptop,
// all-reduce with a data check, incast, destroy — and checks that the
// story holds numbers and that nothing of the lab is left behind.
func TestDemo(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.Exclusive(t)
	bin := testenv.BuildRocelab(t)
	root := testenv.RunRoot(t, "rltest-demo-")
	name := fmt.Sprintf("dm%d", os.Getpid())

	var out, log bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := Run(ctx, Options{
		Setup: Setup{LabName: name, Root: root, Binary: bin, IncastDuration: clock.Millisecond},
		Sizes: []int64{1 << 20}, Out: &out, Log: &log,
	})
	t.Logf("story:\n%s\nprogress:\n%s", out.String(), log.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.AllReduce) != 1 || res.AllReduce[0].Wrong != 0 || res.AllReduce[0].BusBW <= 0 {
		t.Errorf("all-reduce results: %+v", res.AllReduce)
	}
	if len(res.Incast.PerSender) != 4 || res.Incast.TotalGbps <= 0 {
		t.Errorf("incast: %+v", res.Incast)
	}
	// The total is what the receiver's link carried: never above its rate
	// (issue 25: a sum of averages read 407 Gb/s into a 400G link).
	if line := float64(res.Incast.ReceiverRate) / 1e9; res.Incast.TotalGbps > line {
		t.Errorf("incast together %.1f Gb/s into a %.0f Gb/s link", res.Incast.TotalGbps, line)
	}
	for nic, g := range res.Incast.PerSender {
		if g > float64(res.Incast.ReceiverRate)/1e9 {
			t.Errorf("incast sender %s at %.1f Gb/s, above the %v line", nic, g, res.Incast.ReceiverRate)
		}
	}
	// Four 400G senders into one 400G NIC must make the switches pause.
	if res.Incast.PFCFrames == 0 {
		t.Errorf("incast sent no PFC frames: %+v", res.Incast)
	}
	for _, want := range []string{"Ring all-reduce", "busbw", "PFC frames sent"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("story lacks %q", want)
		}
	}
	names, err := netns.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if strings.HasPrefix(n, "rl-"+name+"-") {
			t.Errorf("namespace %s left behind", n)
		}
	}
}
