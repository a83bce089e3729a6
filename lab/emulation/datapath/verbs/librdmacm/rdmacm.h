/*
 * rdmacm.h: what the files of rocelab's librdmacm share (see cma.c).
 */
#ifndef ROCELAB_RDMACM_H
#define ROCELAB_RDMACM_H

#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "../libibverbs/proto.h"

/* The GID index of a NIC's IPv4 RoCE v2 address (::ffff:a.b.c.d), as
 * rocelab's libibverbs numbers its GID table. */
#define RL_GID_IPV4 3

struct rl_cm_id {
	struct rdma_cm_id id; /* first: rdma_cm_id * is rl_cm_id * */
	uint32_t h;
	int nic;
	/* a synchronous id (no channel given): its own channel, and every
	 * call waits for its event */
	struct rdma_event_channel *sync;
	uint32_t psn;
	/* the peer's side, from its REQ or REP */
	uint32_t remote_qpn, remote_psn;
	uint8_t remote_rr, remote_depth, remote_mtu;
	/* what this side asked (rdma_connect, rdma_accept) */
	uint8_t rr, depth, retry, rnr;
	struct ibv_sa_path_rec path;
	/* rdma_create_ep on a passive id: every request gets such a QP */
	struct ibv_qp_init_attr *ep_attr;
	struct ibv_pd *ep_pd;
	bool own_cqs;
	struct rl_cm_id *next;
};

/* An event and the private data it points at. */
struct rl_event {
	struct rdma_cm_event ev;
	uint8_t private_data[RL_CM_PRIVATE];
};

/* cma.c */
int rl_cm_call(uint32_t op, uint32_t h, const void *body, size_t len, int fd, void *out, size_t out_cap);
struct rl_cm_id *rl_id_of(uint32_t h);
void rl_ids_add(struct rl_cm_id *p);
struct ibv_context *rl_device_of(const struct rl_cm_addr *a);
struct ibv_pd *rl_default_pd(struct ibv_context *ctx);
void rl_addr_to_sockaddr(const struct rl_cm_addr *a, struct sockaddr_storage *ss);
int rl_sockaddr_to_addr(const struct sockaddr *sa, struct rl_cm_addr *a);
int rl_wait_event(struct rl_cm_id *p, enum rdma_cm_event_type want, struct rdma_cm_event **out);

/* qp.c */
int rl_qp_init(struct rl_cm_id *p);
int rl_qp_connect(struct rl_cm_id *p);
void rl_qp_error(struct rl_cm_id *p);
void rl_ah_attr(struct rl_cm_id *p, struct ibv_ah_attr *ah);
void rl_clamp(struct rl_cm_id *p);

#endif
