package verbs

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/internal/testenv"
)

// TestProtoMatchesHeader compiles libibverbs/proto.h and checks that the
// sizes and offsets this package reads and writes are the C library's.
func TestProtoMatchesHeader(t *testing.T) {
	cc := testenv.RequireTool(t, "cc")
	dir := t.TempDir()
	src := `#include <stdio.h>
#include <stddef.h>
#include "proto.h"
#define P(x) printf(#x "\t%zu\n", (size_t)(x));
int main(void) {
	P(sizeof(struct rl_hdr)) P(sizeof(struct rl_reply)) P(sizeof(struct rl_device))
	P(offsetof(struct rl_device, mac)) P(offsetof(struct rl_device, ipv4)) P(offsetof(struct rl_device, mtu))
	P(offsetof(struct rl_device, rate_bps)) P(offsetof(struct rl_device, scale)) P(offsetof(struct rl_device, max_qp))
	P(sizeof(struct rl_piece)) P(sizeof(struct rl_reg_mr)) P(sizeof(struct rl_create_qp)) P(sizeof(struct rl_modify_qp))
	P(offsetof(struct rl_modify_qp, dgid)) P(sizeof(struct rl_send_wr)) P(offsetof(struct rl_send_wr, opcode))
	P(offsetof(struct rl_send_wr, inline_len)) P(sizeof(struct rl_recv_wr)) P(sizeof(struct rl_post))
	P(sizeof(struct rl_cqe)) P(offsetof(struct rl_cqe, status)) P(offsetof(struct rl_cqe, vendor_err))
	P(sizeof(struct rl_open)) P(RL_RING_HEAD) P(RL_RING_TAIL) P(RL_RING_ENTRIES) P(RL_MAX_INLINE) P(RL_MAX_PIECES)
	P(RL_MAX_MSG) P(RL_PROTO_VERSION) P(RL_OP_QUERY_QP) P(RL_WR_IMM)
	P(RL_OP_POST_SRQ_RECV) P(sizeof(struct rl_create_srq)) P(sizeof(struct rl_modify_srq)) P(sizeof(struct rl_srq_state))
	P(offsetof(struct rl_create_qp, srq)) P(RL_SRQ_LIMIT) P(sizeof(struct rl_sge)) P(RL_MAX_SGE) P(RL_WR_SGL)
	P(offsetof(struct rl_recv_wr, nsge)) P(offsetof(struct rl_create_qp, qp_type)) P(offsetof(struct rl_modify_qp, qkey))
	P(sizeof(struct rl_ud_dest)) P(RL_WR_UD) P(offsetof(struct rl_cqe, src_qp)) P(RL_WR_ATOMIC) P(sizeof(struct rl_atomic))
	return 0;
}`
	if err := os.WriteFile(filepath.Join(dir, "p.c"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	hdr, _ := filepath.Abs("libibverbs")
	bin := filepath.Join(dir, "p")
	if out, err := exec.Command(cc, "-I", hdr, "-o", bin, filepath.Join(dir, "p.c")).CombinedOutput(); err != nil {
		t.Fatalf("compile proto.h: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, _ := strings.Cut(l, "\t")
		got[k], _ = strconv.Atoi(v)
	}
	for k, want := range map[string]int{
		"sizeof(struct rl_hdr)": hdrSize, "sizeof(struct rl_reply)": replySize, "sizeof(struct rl_device)": deviceSize,
		"offsetof(struct rl_device, mac)": 128, "offsetof(struct rl_device, ipv4)": 136, "offsetof(struct rl_device, mtu)": 140,
		"offsetof(struct rl_device, rate_bps)": 144, "offsetof(struct rl_device, scale)": 152, "offsetof(struct rl_device, max_qp)": 156,
		"sizeof(struct rl_piece)": pieceSize, "sizeof(struct rl_reg_mr)": regMRSize, "sizeof(struct rl_create_qp)": createQPSize,
		"sizeof(struct rl_modify_qp)": modifyQPSize, "offsetof(struct rl_modify_qp, dgid)": 48,
		"sizeof(struct rl_send_wr)": sendWRSize, "offsetof(struct rl_send_wr, opcode)": 40, "offsetof(struct rl_send_wr, inline_len)": 42,
		"sizeof(struct rl_recv_wr)": recvWRSize, "sizeof(struct rl_post)": postSize, "sizeof(struct rl_cqe)": cqeSize,
		"offsetof(struct rl_cqe, status)": 20, "offsetof(struct rl_cqe, vendor_err)": 24, "sizeof(struct rl_open)": openSize,
		"RL_RING_HEAD": ringHead, "RL_RING_TAIL": ringTail, "RL_RING_ENTRIES": ringEntries, "RL_MAX_INLINE": maxInline,
		"RL_MAX_PIECES": maxPieces, "RL_MAX_MSG": maxMsg, "RL_PROTO_VERSION": protoVersion, "RL_OP_QUERY_QP": opQueryQP,
		"RL_WR_IMM": wrImm, "RL_OP_POST_SRQ_RECV": opPostSRQRecv, "sizeof(struct rl_create_srq)": createSRQSize,
		"sizeof(struct rl_modify_srq)": modifySRQSize, "sizeof(struct rl_srq_state)": 16, "offsetof(struct rl_create_qp, srq)": 28,
		"RL_SRQ_LIMIT": srqLimit, "sizeof(struct rl_sge)": sgeSize, "RL_MAX_SGE": maxSGE, "RL_WR_SGL": wrSGL,
		"offsetof(struct rl_recv_wr, nsge)": 24, "offsetof(struct rl_create_qp, qp_type)": 32,
		"offsetof(struct rl_modify_qp, qkey)": 44, "sizeof(struct rl_ud_dest)": udDestSize, "RL_WR_UD": wrUD,
		"RL_WR_ATOMIC": wrAtomic, "sizeof(struct rl_atomic)": atomicSize,
		"offsetof(struct rl_cqe, src_qp)": 28,
	} {
		if g, ok := got[k]; !ok || g != want {
			t.Errorf("%s: C says %d (present %v), Go %d", k, g, ok, want)
		}
	}
}

func TestDeviceNames(t *testing.T) {
	for _, c := range []struct {
		nics, want []string
	}{
		{[]string{"host1:gpu0", "host1:gpu1"}, []string{"rocelab_gpu0", "rocelab_gpu1"}},
		{[]string{"gpu0"}, []string{"rocelab_gpu0"}},
		{[]string{"h:be.0/1"}, []string{"rocelab_be_0_1"}},
		{[]string{"h:backend-0"}, []string{"rl_backend-0"}},
		{[]string{"h:backend-nic-long-0", "h:backend-nic-long-1"}, []string{"rl0_backend-nic", "rl1_backend-nic"}},
		{[]string{"h:backend-nic-long-0", "h:gpu0"}, []string{"rl_backend-nic-", "rocelab_gpu0"}},
	} {
		got := DeviceNames(c.nics)
		if !slices.Equal(got, c.want) {
			t.Errorf("DeviceNames(%q) = %q, want %q", c.nics, got, c.want)
		}
		for _, n := range got {
			if len(n) > MaxDeviceName {
				t.Errorf("%q is longer than %d", n, MaxDeviceName)
			}
		}
	}
}

func TestMTUEnum(t *testing.T) {
	for _, c := range []struct {
		payload int
		want    uint8
	}{{256, 1}, {511, 1}, {512, 2}, {1024, 3}, {2048, 4}, {4000, 4}, {4096, 5}, {9000, 5}} {
		if got := mtuEnum(c.payload); got != c.want {
			t.Errorf("mtuEnum(%d) = %d, want %d", c.payload, got, c.want)
		}
	}
}
