/*
 * selftest: the verbs rocelab's library supports, exercised on two NICs of
 * one lab host (QP on gpu0 <-> QP on gpu1, through the rack switch), in
 * the ways perftest and rc_pingpong do not: the ibv_qp_ex post-send API,
 * SEND with immediate, inline data, scatter/gather lists, SRQs, RDMA READ,
 * completion channels,
 * errors a program must see (remote access error, unsupported verbs).
 * Prints "selftest: ok" and exits 0, or names the first failure.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#define FAIL(...)                                                                                            \
	do {                                                                                                 \
		fprintf(stderr, "selftest: " __VA_ARGS__);                                                   \
		fputc('\n', stderr);                                                                         \
		exit(1);                                                                                     \
	} while (0)

#define SIZE (1 << 16)

struct end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_comp_channel *ch;
	struct ibv_qp *qp;
	struct ibv_qp_ex *qx;
	struct ibv_mr *mr;
	char *buf;
	union ibv_gid gid;
};

static void open_end(struct ibv_device *dev, struct end *e, int new_api)
{
	struct ibv_qp_init_attr_ex a;

	e->ctx = ibv_open_device(dev);
	if (!e->ctx)
		FAIL("open %s: %s", ibv_get_device_name(dev), strerror(errno));
	e->pd = ibv_alloc_pd(e->ctx);
	e->ch = ibv_create_comp_channel(e->ctx);
	if (!e->pd || !e->ch)
		FAIL("pd/channel: %s", strerror(errno));
	e->cq = ibv_create_cq(e->ctx, 64, e, e->ch, 0);
	if (!e->cq)
		FAIL("cq: %s", strerror(errno));
	if (posix_memalign((void **)&e->buf, 4096, SIZE))
		FAIL("memalign");
	memset(e->buf, 0, SIZE);
	e->mr = ibv_reg_mr(e->pd, e->buf, SIZE,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC);
	if (!e->mr)
		FAIL("reg_mr: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.send_cq = a.recv_cq = e->cq;
	a.qp_type = IBV_QPT_RC;
	a.cap.max_send_wr = a.cap.max_recv_wr = 32;
	a.cap.max_send_sge = a.cap.max_recv_sge = 4;
	a.cap.max_inline_data = 64;
	a.pd = e->pd;
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	if (new_api) {
		a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ |
				   IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP;
	}
	e->qp = ibv_create_qp_ex(e->ctx, &a);
	if (!e->qp)
		FAIL("create_qp_ex: %s", strerror(errno));
	e->qx = new_api ? ibv_qp_to_qp_ex(e->qp) : NULL;
	if (ibv_query_gid(e->ctx, 1, 3, &e->gid))
		FAIL("query_gid 3");
}

static void connect_end(struct end *e, struct end *peer)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		FAIL("INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer->qp->qp_num;
	a.rq_psn = 7;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.sgid_index = 3;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(e->qp, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		FAIL("RTR: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(e->qp, &a,
			  IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
				  IBV_QP_MAX_QP_RD_ATOMIC))
		FAIL("RTS: %s", strerror(errno));
}

/* wait takes one completion, by the channel (events) or by polling. */
static struct ibv_wc wait_wc(struct end *e, int events)
{
	struct ibv_wc wc;
	int n;

	for (int spins = 0; spins < 20000000; spins++) {
		if (events) {
			struct ibv_cq *cq;
			void *cctx;
			if (ibv_req_notify_cq(e->cq, 0))
				FAIL("req_notify_cq");
			n = ibv_poll_cq(e->cq, 1, &wc);
			if (n)
				goto got;
			if (ibv_get_cq_event(e->ch, &cq, &cctx) || cq != e->cq || cctx != e)
				FAIL("get_cq_event");
			ibv_ack_cq_events(cq, 1);
		}
		n = ibv_poll_cq(e->cq, 1, &wc);
		if (n)
			goto got;
		if (spins % 1000 == 0) {
			struct timespec ts = { 0, 100000 };
			nanosleep(&ts, NULL);
		}
	}
	FAIL("no completion");
got:
	if (n < 0)
		FAIL("poll_cq: %d", n);
	return wc;
}

int main(void)
{
	struct ibv_device **devs;
	struct end a, b;
	struct ibv_wc wc;
	int n;

	devs = ibv_get_device_list(&n);
	if (!devs || n < 2)
		FAIL("want two devices, have %d", n);
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	open_end(devs[0], &a, 1);
	open_end(devs[1], &b, 0);
	connect_end(&a, &b);
	connect_end(&b, &a);

	/* An SRQ: made, queried, its limit armed, destroyed. */
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 2 } };
	struct ibv_srq *srq = ibv_create_srq(a.pd, &sa);
	struct ibv_srq_attr sq;
	if (!srq)
		FAIL("create_srq: %s", strerror(errno));
	sq.srq_limit = 2;
	if (ibv_modify_srq(srq, &sq, IBV_SRQ_LIMIT) || ibv_query_srq(srq, &sq) || sq.max_wr != 4 || sq.srq_limit != 2)
		FAIL("modify/query SRQ: max_wr %u limit %u", sq.max_wr, sq.srq_limit);
	if (ibv_destroy_srq(srq))
		FAIL("destroy_srq: %s", strerror(errno));
	/* Unsupported verbs fail as a provider without them does. */
	struct ibv_qp_init_attr ud = { .send_cq = a.cq, .recv_cq = a.cq, .qp_type = IBV_QPT_UC,
				       .cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 } };
	errno = 0;
	if (ibv_create_qp(a.pd, &ud) || errno != EOPNOTSUPP)
		FAIL("UC QP: want NULL and EOPNOTSUPP, errno %d", errno);

	/* 1. RDMA WRITE through the ibv_qp_ex API: the bytes land in b's
	 * memory with no call from b. */
	for (int i = 0; i < 50000; i++)
		a.buf[i] = (char)(i * 13 + 1);
	ibv_wr_start(a.qx);
	a.qx->wr_id = 11;
	a.qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(a.qx, b.mr->rkey, (uint64_t)b.buf + 1000);
	ibv_wr_set_sge(a.qx, a.mr->lkey, (uint64_t)a.buf, 50000);
	if (ibv_wr_complete(a.qx))
		FAIL("wr_complete");
	wc = wait_wc(&a, 0);
	if (wc.status != IBV_WC_SUCCESS || wc.wr_id != 11 || wc.opcode != IBV_WC_RDMA_WRITE)
		FAIL("write: status %s wr_id %lu opcode %d", ibv_wc_status_str(wc.status), (unsigned long)wc.wr_id,
		     wc.opcode);
	if (memcmp(b.buf + 1000, a.buf, 50000))
		FAIL("write: the bytes are not in the target's memory");

	/* 2. SEND with immediate, inline, received by an event-driven CQ. */
	struct ibv_sge rs = { .addr = (uint64_t)b.buf, .length = 256, .lkey = b.mr->lkey };
	struct ibv_recv_wr rw = { .wr_id = 21, .sg_list = &rs, .num_sge = 1 }, *bad_rw;
	if (ibv_post_recv(b.qp, &rw, &bad_rw))
		FAIL("post_recv");
	char msg[40] = "inline hello from rocelab's selftest";
	ibv_wr_start(a.qx);
	a.qx->wr_id = 22;
	a.qx->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	ibv_wr_send_imm(a.qx, htobe32(0xC0FFEE));
	ibv_wr_set_inline_data(a.qx, msg, sizeof(msg));
	if (ibv_wr_complete(a.qx))
		FAIL("wr_complete send_imm");
	memset(msg, 'x', sizeof(msg)); /* inline: the program may reuse it now */
	wc = wait_wc(&b, 1);
	if (wc.status != IBV_WC_SUCCESS || wc.wr_id != 21 || wc.opcode != IBV_WC_RECV ||
	    !(wc.wc_flags & IBV_WC_WITH_IMM) || be32toh(wc.imm_data) != 0xC0FFEE || wc.byte_len != 40 ||
	    strcmp(b.buf, "inline hello from rocelab's selftest"))
		FAIL("send_imm: status %s opcode %d flags %d imm %#x len %u data %.40s", ibv_wc_status_str(wc.status),
		     wc.opcode, wc.wc_flags, be32toh(wc.imm_data), wc.byte_len, b.buf);
	wc = wait_wc(&a, 0);
	if (wc.status != IBV_WC_SUCCESS || wc.wr_id != 22)
		FAIL("send_imm sender: %s", ibv_wc_status_str(wc.status));

	/* 2b. A SEND gathered from three pieces of a's buffer, scattered
	 * over two of b's; a WRITE from two pieces (ibv_wr_set_sge_list). */
	for (int i = 0; i < 9000; i++)
		a.buf[i] = (char)(i * 7 + 3);
	struct ibv_sge rl[2] = { { .addr = (uint64_t)b.buf + 40000, .length = 5000, .lkey = b.mr->lkey },
				 { .addr = (uint64_t)b.buf + 50000, .length = 5000, .lkey = b.mr->lkey } };
	struct ibv_recv_wr rw2 = { .wr_id = 23, .sg_list = rl, .num_sge = 2 };
	if (ibv_post_recv(b.qp, &rw2, &bad_rw))
		FAIL("post_recv of a two-entry list: %s", strerror(errno));
	struct ibv_sge gl[3] = { { .addr = (uint64_t)a.buf, .length = 1000, .lkey = a.mr->lkey },
				 { .addr = (uint64_t)a.buf + 1000, .length = 6000, .lkey = a.mr->lkey },
				 { .addr = (uint64_t)a.buf + 7000, .length = 2000, .lkey = a.mr->lkey } };
	struct ibv_send_wr gw = { .wr_id = 24, .sg_list = gl, .num_sge = 3, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad_gw;
	if (ibv_post_send(a.qp, &gw, &bad_gw))
		FAIL("post_send of a three-entry list: %s", strerror(errno));
	wc = wait_wc(&b, 1);
	if (wc.status != IBV_WC_SUCCESS || wc.wr_id != 23 || wc.byte_len != 9000 || memcmp(b.buf + 40000, a.buf, 5000) ||
	    memcmp(b.buf + 50000, a.buf + 5000, 4000))
		FAIL("gathered SEND: status %s len %u, or the bytes are not where the list put them",
		     ibv_wc_status_str(wc.status), wc.byte_len);
	wc = wait_wc(&a, 0);
	if (wc.status != IBV_WC_SUCCESS || wc.wr_id != 24)
		FAIL("gathered SEND sender: %s", ibv_wc_status_str(wc.status));
	struct ibv_sge wl[2] = { { .addr = (uint64_t)a.buf + 100, .length = 300, .lkey = a.mr->lkey },
				 { .addr = (uint64_t)a.buf + 5000, .length = 700, .lkey = a.mr->lkey } };
	ibv_wr_start(a.qx);
	a.qx->wr_id = 25;
	a.qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(a.qx, b.mr->rkey, (uint64_t)b.buf + 60000);
	ibv_wr_set_sge_list(a.qx, 2, wl);
	if (ibv_wr_complete(a.qx))
		FAIL("wr_complete of a two-entry WRITE");
	wc = wait_wc(&a, 0);
	if (wc.status != IBV_WC_SUCCESS || wc.wr_id != 25 || memcmp(b.buf + 60000, a.buf + 100, 300) ||
	    memcmp(b.buf + 60300, a.buf + 5000, 700))
		FAIL("gathered WRITE: %s, or the bytes are not in order", ibv_wc_status_str(wc.status));

	/* 3. RDMA READ with the classic ibv_post_send. */
	for (int i = 0; i < 30000; i++)
		b.buf[20000 + i] = (char)(i * 3 + 5);
	struct ibv_sge ls = { .addr = (uint64_t)b.buf + 0, .length = 30000, .lkey = b.mr->lkey };
	struct ibv_send_wr sw = { .wr_id = 31, .sg_list = &ls, .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
				  .send_flags = IBV_SEND_SIGNALED }, *bad_sw;
	for (int i = 0; i < 30000; i++)
		a.buf[20000 + i] = (char)(i * 3 + 5);
	/* b reads a's bytes into the start of its buffer */
	sw.wr.rdma.remote_addr = (uint64_t)a.buf + 20000;
	sw.wr.rdma.rkey = a.mr->rkey;
	if (ibv_post_send(b.qp, &sw, &bad_sw))
		FAIL("post_send read");
	wc = wait_wc(&b, 0);
	if (wc.status != IBV_WC_SUCCESS || wc.wr_id != 31 || wc.opcode != IBV_WC_RDMA_READ)
		FAIL("read: %s", ibv_wc_status_str(wc.status));
	if (memcmp(b.buf, a.buf + 20000, 30000))
		FAIL("read: the bytes are not in the reader's memory");

	/* 3b. Atomics: a FetchAdd with ibv_post_send, a CmpSwap (hit, then
	 * miss) with the ibv_qp_ex API, on a word of b's memory. */
	struct ibv_device_attr da;
	if (ibv_query_device(a.ctx, &da) || da.atomic_cap == IBV_ATOMIC_NONE)
		FAIL("query_device: atomic_cap %d, want atomics", da.atomic_cap);
	uint64_t *word = (uint64_t *)(b.buf + 40960), *orig = (uint64_t *)(a.buf + 40960);
	*word = 40;
	struct ibv_sge os = { .addr = (uint64_t)orig, .length = 8, .lkey = a.mr->lkey };
	struct ibv_send_wr fw = { .wr_id = 35, .sg_list = &os, .num_sge = 1, .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
				  .send_flags = IBV_SEND_SIGNALED };
	fw.wr.atomic.remote_addr = (uint64_t)word;
	fw.wr.atomic.rkey = b.mr->rkey;
	fw.wr.atomic.compare_add = 2;
	if (ibv_post_send(a.qp, &fw, &bad_sw))
		FAIL("post_send fetch-add: %s", strerror(errno));
	wc = wait_wc(&a, 0);
	if (wc.status != IBV_WC_SUCCESS || wc.wr_id != 35 || wc.opcode != IBV_WC_FETCH_ADD || wc.byte_len != 8 ||
	    *orig != 40 || *word != 42)
		FAIL("fetch-add: %s opcode %d len %u, original %lu (want 40), word %lu (want 42)",
		     ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len, (unsigned long)*orig, (unsigned long)*word);
	for (int hit = 1; hit >= 0; hit--) {
		ibv_wr_start(a.qx);
		a.qx->wr_id = 36;
		a.qx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_atomic_cmp_swp(a.qx, b.mr->rkey, (uint64_t)word, 42, 7);
		ibv_wr_set_sge(a.qx, a.mr->lkey, (uint64_t)orig, 8);
		if (ibv_wr_complete(a.qx))
			FAIL("wr_complete cmp-swap");
		wc = wait_wc(&a, 0);
		if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_COMP_SWAP || *orig != (hit ? 42 : 7) || *word != 7)
			FAIL("cmp-swap (%s): %s, original %lu, word %lu", hit ? "hit" : "miss", ibv_wc_status_str(wc.status),
			     (unsigned long)*orig, (unsigned long)*word);
	}

	/* 4. A WRITE past the target region: remote access error, then the
	 * QP is in ERR and flushes. */
	struct ibv_sge es = { .addr = (uint64_t)b.buf, .length = 100, .lkey = b.mr->lkey };
	struct ibv_send_wr ew = { .wr_id = 41, .sg_list = &es, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED };
	ew.wr.rdma.remote_addr = (uint64_t)a.buf + SIZE - 10;
	ew.wr.rdma.rkey = a.mr->rkey;
	if (ibv_post_send(b.qp, &ew, &bad_sw))
		FAIL("post_send bad write");
	wc = wait_wc(&b, 0);
	if (wc.status != IBV_WC_REM_ACCESS_ERR || wc.wr_id != 41)
		FAIL("write past the region: %s, want remote access error", ibv_wc_status_str(wc.status));
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	if (ibv_query_qp(b.qp, &qa, IBV_QP_STATE, &qi) || qa.qp_state != IBV_QPS_ERR)
		FAIL("QP after a remote access error: state %d, want ERR", qa.qp_state);

	if (ibv_destroy_qp(a.qp) || ibv_destroy_qp(b.qp) || ibv_dereg_mr(a.mr) || ibv_dereg_mr(b.mr) ||
	    ibv_destroy_cq(a.cq) || ibv_destroy_cq(b.cq) || ibv_destroy_comp_channel(a.ch) ||
	    ibv_destroy_comp_channel(b.ch) || ibv_dealloc_pd(a.pd) || ibv_dealloc_pd(b.pd) ||
	    ibv_close_device(a.ctx) || ibv_close_device(b.ctx))
		FAIL("teardown: %s", strerror(errno));
	ibv_free_device_list(devs);
	printf("selftest: ok\n");
	return 0;
}
