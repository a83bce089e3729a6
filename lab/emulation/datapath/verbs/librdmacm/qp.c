/*
 * qp.c: the QPs of rdma_cm ids. A QP is the program's, made through the
 * verbs API (rocelab's libibverbs); rdma_cm readies it: INIT when it is
 * made, RTR and RTS when the connection's parameters are known (the
 * passive side before its REP, the active side on the REP), ERR when the
 * connection ends.
 */
#include "rdmacm.h"

/* rl_ah_attr is the address of p's peer: RoCE v2 over IPv4, through the
 * GID of the NIC's IPv4 address. */
void rl_ah_attr(struct rl_cm_id *p, struct ibv_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->is_global = 1;
	ah->port_num = p->id.port_num ? p->id.port_num : 1;
	ah->dlid = 0;
	ah->grh.dgid = p->id.route.addr.addr.ibaddr.dgid;
	ah->grh.sgid_index = RL_GID_IPV4;
	ah->grh.hop_limit = 64;
}

void rl_clamp(struct rl_cm_id *p)
{
	struct ibv_device_attr a;

	if (!p->id.verbs || ibv_query_device(p->id.verbs, &a) != 0)
		return;
	if (p->rr == RDMA_MAX_RESP_RES || p->rr > a.max_qp_rd_atom)
		p->rr = a.max_qp_rd_atom;
	if (p->depth == RDMA_MAX_INIT_DEPTH || p->depth > a.max_qp_init_rd_atom)
		p->depth = a.max_qp_init_rd_atom;
	if (p->retry > 7)
		p->retry = 7;
	if (p->rnr > 7)
		p->rnr = 7;
}

int rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr, int *qp_attr_mask)
{
	struct rl_cm_id *p = (struct rl_cm_id *)id;
	enum ibv_qp_state want = qp_attr->qp_state;

	memset(qp_attr, 0, sizeof(*qp_attr));
	qp_attr->qp_state = want;
	switch (want) {
	case IBV_QPS_INIT:
		qp_attr->port_num = id->port_num ? id->port_num : 1;
		qp_attr->pkey_index = 0;
		*qp_attr_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		if (id->qp_type == IBV_QPT_UD) {
			qp_attr->qkey = RDMA_UDP_QKEY;
			*qp_attr_mask |= IBV_QP_QKEY;
		} else {
			qp_attr->qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
						   IBV_ACCESS_REMOTE_ATOMIC;
			*qp_attr_mask |= IBV_QP_ACCESS_FLAGS;
		}
		return 0;
	case IBV_QPS_RTR:
		*qp_attr_mask = IBV_QP_STATE;
		if (id->qp_type == IBV_QPT_UD)
			return 0;
		rl_clamp(p);
		qp_attr->path_mtu = p->path.mtu ? p->path.mtu : IBV_MTU_1024;
		if (p->remote_mtu && p->remote_mtu < qp_attr->path_mtu)
			qp_attr->path_mtu = p->remote_mtu;
		qp_attr->dest_qp_num = p->remote_qpn;
		qp_attr->rq_psn = p->remote_psn;
		qp_attr->max_dest_rd_atomic = p->rr;
		qp_attr->min_rnr_timer = 12;
		rl_ah_attr(p, &qp_attr->ah_attr);
		*qp_attr_mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER;
		return 0;
	case IBV_QPS_RTS:
		qp_attr->sq_psn = p->psn;
		*qp_attr_mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
		if (id->qp_type == IBV_QPT_UD)
			return 0;
		rl_clamp(p);
		qp_attr->timeout = 14;
		qp_attr->retry_cnt = p->retry;
		qp_attr->rnr_retry = p->rnr;
		qp_attr->max_rd_atomic = p->depth;
		*qp_attr_mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
		return 0;
	default:
		errno = EINVAL;
		return -1;
	}
}

static int move(struct rl_cm_id *p, enum ibv_qp_state to)
{
	struct ibv_qp_attr a = {.qp_state = to};
	int mask, ret;

	if (rdma_init_qp_attr(&p->id, &a, &mask) < 0)
		return -1;
	ret = ibv_modify_qp(p->id.qp, &a, mask);
	if (ret) {
		errno = ret;
		return -1;
	}
	return 0;
}

/* rl_qp_init readies a new QP: INIT, and for UD RTR and RTS as well. */
int rl_qp_init(struct rl_cm_id *p)
{
	if (move(p, IBV_QPS_INIT) < 0)
		return -1;
	if (p->id.qp_type == IBV_QPT_UD && (move(p, IBV_QPS_RTR) < 0 || move(p, IBV_QPS_RTS) < 0))
		return -1;
	return 0;
}

/* rl_qp_connect moves p's QP to RTR then RTS with the peer's side. */
int rl_qp_connect(struct rl_cm_id *p)
{
	if (!p->id.qp)
		return 0;
	if (move(p, IBV_QPS_RTR) < 0 || move(p, IBV_QPS_RTS) < 0)
		return -1;
	return 0;
}

/* rl_qp_error flushes p's QP when its connection ends. */
void rl_qp_error(struct rl_cm_id *p)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};

	if (p->id.qp && p->id.qp_type != IBV_QPT_UD)
		ibv_modify_qp(p->id.qp, &a, IBV_QP_STATE);
}

static int own_cqs(struct rl_cm_id *p, struct ibv_qp_init_attr_ex *a)
{
	struct rdma_cm_id *id = &p->id;
	int n;

	if (a->send_cq && a->recv_cq)
		return 0;
	n = (int)(a->cap.max_send_wr > a->cap.max_recv_wr ? a->cap.max_send_wr : a->cap.max_recv_wr) + 1;
	if (!a->send_cq) {
		id->send_cq_channel = ibv_create_comp_channel(id->verbs);
		id->send_cq = id->send_cq_channel ? ibv_create_cq(id->verbs, n, id, id->send_cq_channel, 0) : NULL;
		if (!id->send_cq)
			return -1;
		a->send_cq = id->send_cq;
	}
	if (!a->recv_cq) {
		id->recv_cq_channel = ibv_create_comp_channel(id->verbs);
		id->recv_cq = id->recv_cq_channel ? ibv_create_cq(id->verbs, n, id, id->recv_cq_channel, 0) : NULL;
		if (!id->recv_cq)
			return -1;
		a->recv_cq = id->recv_cq;
	}
	p->own_cqs = true;
	return 0;
}

static void free_cqs(struct rl_cm_id *p)
{
	struct rdma_cm_id *id = &p->id;

	if (!p->own_cqs)
		return;
	if (id->send_cq)
		ibv_destroy_cq(id->send_cq);
	if (id->recv_cq)
		ibv_destroy_cq(id->recv_cq);
	if (id->send_cq_channel)
		ibv_destroy_comp_channel(id->send_cq_channel);
	if (id->recv_cq_channel)
		ibv_destroy_comp_channel(id->recv_cq_channel);
	id->send_cq = id->recv_cq = NULL;
	id->send_cq_channel = id->recv_cq_channel = NULL;
	p->own_cqs = false;
}

int rdma_create_qp_ex(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *attr)
{
	struct rl_cm_id *p = (struct rl_cm_id *)id;
	struct ibv_qp *qp;

	if (!id->verbs) {
		errno = EINVAL; /* not bound to a device yet */
		return -1;
	}
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd) {
		attr->pd = id->pd ? id->pd : rl_default_pd(id->verbs);
		attr->comp_mask |= IBV_QP_INIT_ATTR_PD;
	}
	if (!attr->pd || attr->pd->context != id->verbs) {
		errno = EINVAL;
		return -1;
	}
	if (id->srq && !attr->srq)
		attr->srq = id->srq;
	if (own_cqs(p, attr) < 0) {
		free_cqs(p);
		return -1;
	}
	qp = ibv_create_qp_ex(id->verbs, attr);
	if (!qp) {
		free_cqs(p);
		return -1;
	}
	id->qp = qp;
	id->pd = attr->pd;
	if (rl_qp_init(p) < 0) {
		int e = errno;

		ibv_destroy_qp(qp);
		id->qp = NULL;
		free_cqs(p);
		errno = e;
		return -1;
	}
	return 0;
}

int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	struct ibv_qp_init_attr_ex a;
	int ret;

	memset(&a, 0, sizeof(a));
	memcpy(&a, qp_init_attr, sizeof(*qp_init_attr));
	a.qp_type = qp_init_attr->qp_type ? qp_init_attr->qp_type : id->qp_type;
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	a.pd = pd;
	ret = rdma_create_qp_ex(id, &a);
	if (ret == 0) {
		qp_init_attr->send_cq = a.send_cq;
		qp_init_attr->recv_cq = a.recv_cq;
		qp_init_attr->srq = a.srq;
		qp_init_attr->cap = a.cap;
	}
	return ret;
}

void rdma_destroy_qp(struct rdma_cm_id *id)
{
	if (id->qp) {
		ibv_destroy_qp(id->qp);
		id->qp = NULL;
	}
	free_cqs((struct rl_cm_id *)id);
}

int rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr)
{
	struct ibv_srq_init_attr a = {.srq_context = attr->srq_context, .attr = attr->attr};
	struct ibv_pd *pd;

	if (!id->verbs) {
		errno = EINVAL;
		return -1;
	}
	if (attr->srq_type != IBV_SRQT_BASIC && (attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE)) {
		errno = EOPNOTSUPP; /* XRC and tag-matching SRQs: not in the lab's NICs */
		return -1;
	}
	pd = (attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) && attr->pd ? attr->pd : id->pd ? id->pd : rl_default_pd(id->verbs);
	id->srq = ibv_create_srq(pd, &a);
	if (!id->srq)
		return -1;
	id->pd = pd;
	attr->attr = a.attr;
	return 0;
}

int rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.srq_context = attr->srq_context;
	a.attr = attr->attr;
	a.comp_mask = IBV_SRQ_INIT_ATTR_PD;
	a.pd = pd;
	ret = rdma_create_srq_ex(id, &a);
	if (ret == 0)
		attr->attr = a.attr;
	return ret;
}

void rdma_destroy_srq(struct rdma_cm_id *id)
{
	if (id->srq) {
		ibv_destroy_srq(id->srq);
		id->srq = NULL;
	}
}
