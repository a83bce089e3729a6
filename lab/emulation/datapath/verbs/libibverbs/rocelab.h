/*
 * rocelab.h: what the files of rocelab's libibverbs share (see verbs.c).
 */
#ifndef ROCELAB_VERBS_H
#define ROCELAB_VERBS_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <infiniband/verbs.h>

#include "proto.h"

#define RL_ENV_SOCKET "ROCELAB_VERBS_SOCKET"
#define RL_MAX_DEVS 64
#define RL_BATCH 256

/* ---- devices ---- */

struct rl_dev {
	struct ibv_device dev; /* first: ibv_device * is rl_dev * */
	struct rl_device info;
	int index;
	char socket[108];
};

/* ---- contexts and objects ---- */

struct rl_cq;

struct rl_ctx {
	struct verbs_context vctx; /* vctx.context is what the program holds */
	struct rl_dev *dev;
	int fd;
	pthread_mutex_t lock; /* one request and its reply at a time */
	int async_pipe[2];
	bool dead;
	char reply_msg[120];
	pthread_mutex_t cq_lock;
	struct rl_cq *cqs; /* for the comp-channel and death scans */
	/* the completion-channel watcher (cq.c): started by the first
	 * ibv_req_notify_cq on a CQ with a channel, stopped by close */
	pthread_cond_t armed_cond;
	pthread_t watcher;
	bool watching, stopping;
	pthread_mutex_t seg_lock;
	struct rl_seg *segs;
};

struct rl_pd {
	struct ibv_pd pd;
	uint32_t h;
};

/* A segment is page range of the program moved onto a memfd. */
struct rl_seg {
	uint64_t start, end;
	int fd;
	int refs;
	struct rl_seg *next;
};

struct rl_mr {
	struct ibv_mr mr;
	uint32_t h;
	int nsegs;
	struct rl_seg *segs[RL_MAX_PIECES];
};

struct rl_qp;

struct rl_cq {
	struct ibv_cq cq;
	uint32_t h;
	uint8_t *ring;
	size_t ring_len;
	uint32_t mask;
	bool armed;
	bool signalled; /* the watcher wrote this CQ's event to its channel */
	bool death_reported;
	uint32_t empty_polls;
	struct rl_cq *next;
};

struct rl_qp {
	struct ibv_qp_ex qpx; /* first: qpx.qp_base is the program's ibv_qp */
	uint32_t h;
	enum ibv_qp_state state;
	uint32_t max_inline;
	int sq_sig_all;
	struct ibv_qp_cap cap;
	uint64_t last_send_id, last_recv_id;
	bool sent, received;
	/* the new post-send API's batch */
	pthread_mutex_t wr_lock;
	struct rl_send_wr batch[RL_BATCH];
	uint8_t inl[RL_BATCH * 64];
	size_t inl_len;
	int nbatch;
	int wr_err;
	struct ibv_qp_attr attr; /* what was set, for ibv_query_qp */
};

struct rl_ah {
	struct ibv_ah ah; /* first: ibv_ah * is rl_ah * */
	struct ibv_ah_attr attr;
};

struct rl_channel {
	struct ibv_comp_channel ch;
	int pipe[2];
};

/* rl_null fails a verb that returns an object: errno e, NULL. */
static inline void *rl_null(int e)
{
	errno = e;
	return NULL;
}

static inline struct rl_ctx *ctx_of(struct ibv_context *c)
{
	return (struct rl_ctx *)((char *)c - offsetof(struct rl_ctx, vctx.context));
}


/* verbs.c */
void rl_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int rl_call(struct rl_ctx *c, uint32_t op, uint32_t handle, const void *a, size_t alen, const void *b, size_t blen, const int *fds, int nfds, void *out, size_t out_cap);
/* rl_destroy asks the node to destroy the object handle names (op is a
 * destroy, dealloc or dereg): 0 also when the node is gone (ENODEV), since
 * its objects went with it. */
int rl_destroy(struct rl_ctx *c, uint32_t op, uint32_t handle);
int rl_post(struct rl_ctx *c, uint32_t op, uint32_t handle, const void *a, size_t alen, const void *b, size_t blen);
void rl_mark_dead(struct rl_ctx *c);
uint64_t rl_guid(const uint8_t mac[6]);
int rl_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);
int rl_req_notify_cq(struct ibv_cq *cq, int solicited);
int rl_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
int rl_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
int rl_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
int rl_post_recv_wrs(struct rl_ctx *c, uint32_t op, uint32_t handle, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad, struct rl_qp *p);
uint32_t rl_srq_handle(struct ibv_srq *srq);
int rl_query_port_op(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr, size_t len);
struct ibv_qp *rl_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *a);
bool rl_node_alive(struct rl_ctx *c);
int rl_report_death(struct rl_cq *q, int n, struct ibv_wc *wc);
void rl_stop_watcher(struct rl_ctx *c);
void rl_wr_start(struct ibv_qp_ex *qx);
int rl_wr_complete(struct ibv_qp_ex *qx);
void rl_wr_abort(struct ibv_qp_ex *qx);
void rl_wr_send(struct ibv_qp_ex *qx);
void rl_wr_send_imm(struct ibv_qp_ex *qx, __be32 imm);
void rl_wr_rdma_write(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr);
void rl_wr_rdma_write_imm(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr, __be32 imm);
void rl_wr_rdma_read(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr);
void rl_wr_set_sge(struct ibv_qp_ex *qx, uint32_t lkey, uint64_t addr, uint32_t len);
void rl_wr_set_sge_list(struct ibv_qp_ex *qx, size_t n, const struct ibv_sge *sg);
void rl_wr_set_inline_data(struct ibv_qp_ex *qx, void *addr, size_t len);
void rl_wr_set_inline_data_list(struct ibv_qp_ex *qx, size_t n, const struct ibv_data_buf *b);
void rl_wr_atomic_cmp_swp(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr, uint64_t compare, uint64_t swap);
void rl_wr_atomic_fetch_add(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr, uint64_t add);
void rl_wr_set_ud_addr(struct ibv_qp_ex *qx, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey);
void rl_wr_unsupported_u32(struct ibv_qp_ex *qx, uint32_t v);

extern struct rl_qp *rl_qp_list[4096];
extern pthread_mutex_t rl_qp_list_lock;

#endif
