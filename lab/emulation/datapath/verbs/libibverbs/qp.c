/* rocelab's libibverbs: queue pairs. */
#include "rocelab.h"

struct rl_qp *rl_qp_list[4096];
pthread_mutex_t rl_qp_list_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- queue pairs ---- */


struct ibv_qp *rl_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *a)
{
	struct rl_ctx *c = ctx_of(context);
	struct rl_create_qp req = { 0 };
	struct rl_qp_reply r;
	struct rl_qp *p;
	int i;

	if (!(a->comp_mask & IBV_QP_INIT_ATTR_PD) || !a->pd || !a->send_cq || !a->recv_cq)
		return rl_null(EINVAL);
	if (a->qp_type != IBV_QPT_RC && a->qp_type != IBV_QPT_UD) {
		rl_warn("only RC and UD QPs are supported (asked for type %d)", a->qp_type);
		return rl_null(EOPNOTSUPP);
	}
	if ((a->comp_mask & ~(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)) ||
	    ((a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	     (a->send_ops_flags & ~(uint64_t)(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
					      IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
					      IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
					      IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)))) {
		rl_warn("unsupported QP attributes (comp_mask %#x, send ops %#llx): TSO, memory windows, masked atomics and XRC are not modelled",
			a->comp_mask, (unsigned long long)a->send_ops_flags);
		return rl_null(EOPNOTSUPP);
	}
	if (a->cap.max_send_sge > RL_MAX_SGE || a->cap.max_recv_sge > RL_MAX_SGE || a->cap.max_inline_data > RL_MAX_INLINE ||
	    a->cap.max_send_wr > 32768 || a->cap.max_recv_wr > 32768)
		return rl_null(EINVAL);
	p = calloc(1, sizeof(*p));
	if (!p)
		return rl_null(ENOMEM);
	req.pd = ((struct rl_pd *)a->pd)->h;
	req.send_cq = ((struct rl_cq *)a->send_cq)->h;
	req.recv_cq = ((struct rl_cq *)a->recv_cq)->h;
	req.max_send_wr = a->cap.max_send_wr;
	req.max_recv_wr = a->cap.max_recv_wr;
	req.max_inline = a->cap.max_inline_data;
	req.sq_sig_all = (uint32_t)a->sq_sig_all;
	req.srq = a->srq ? rl_srq_handle(a->srq) : 0;
	req.qp_type = a->qp_type;
	if (rl_call(c, RL_OP_CREATE_QP, 0, &req, sizeof(req), NULL, 0, NULL, 0, &r, sizeof(r))) {
		int e = errno;
		if (c->reply_msg[0])
			rl_warn("create QP: %s", c->reply_msg);
		errno = e;
		free(p);
		errno = e;
		return NULL;
	}
	p->h = r.handle;
	p->state = IBV_QPS_RESET;
	p->max_inline = a->cap.max_inline_data;
	p->sq_sig_all = a->sq_sig_all;
	p->cap = a->cap;
	pthread_mutex_init(&p->wr_lock, NULL);
	struct ibv_qp *q = &p->qpx.qp_base;
	q->context = context;
	q->qp_context = a->qp_context;
	q->pd = a->pd;
	q->send_cq = a->send_cq;
	q->recv_cq = a->recv_cq;
	q->srq = a->srq;
	q->handle = r.handle;
	q->qp_num = r.qpn;
	q->state = IBV_QPS_RESET;
	q->qp_type = a->qp_type;
	pthread_mutex_init(&q->mutex, NULL);
	pthread_cond_init(&q->cond, NULL);
	p->qpx.comp_mask = 0;
	p->qpx.wr_start = rl_wr_start;
	p->qpx.wr_complete = rl_wr_complete;
	p->qpx.wr_abort = rl_wr_abort;
	p->qpx.wr_send = rl_wr_send;
	p->qpx.wr_send_imm = rl_wr_send_imm;
	p->qpx.wr_rdma_write = rl_wr_rdma_write;
	p->qpx.wr_rdma_write_imm = rl_wr_rdma_write_imm;
	p->qpx.wr_rdma_read = rl_wr_rdma_read;
	p->qpx.wr_set_sge = rl_wr_set_sge;
	p->qpx.wr_set_sge_list = rl_wr_set_sge_list;
	p->qpx.wr_set_inline_data = rl_wr_set_inline_data;
	p->qpx.wr_set_inline_data_list = rl_wr_set_inline_data_list;
	p->qpx.wr_atomic_cmp_swp = rl_wr_atomic_cmp_swp;
	p->qpx.wr_atomic_fetch_add = rl_wr_atomic_fetch_add;
	p->qpx.wr_set_ud_addr = rl_wr_set_ud_addr;
	p->qpx.wr_set_xrc_srqn = rl_wr_unsupported_u32;
	p->qpx.wr_local_inv = rl_wr_unsupported_u32;
	p->qpx.wr_send_inv = rl_wr_unsupported_u32;
	pthread_mutex_lock(&rl_qp_list_lock);
	for (i = 0; i < 4096; i++)
		if (!rl_qp_list[i]) {
			rl_qp_list[i] = p;
			break;
		}
	pthread_mutex_unlock(&rl_qp_list_lock);
	return q;
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *a)
{
	struct ibv_qp_init_attr_ex x;

	memset(&x, 0, sizeof(x));
	x.qp_context = a->qp_context;
	x.send_cq = a->send_cq;
	x.recv_cq = a->recv_cq;
	x.srq = a->srq;
	x.cap = a->cap;
	x.qp_type = a->qp_type;
	x.sq_sig_all = a->sq_sig_all;
	x.comp_mask = IBV_QP_INIT_ATTR_PD;
	x.pd = pd;
	return rl_create_qp_ex(pd->context, &x);
}

struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	return &((struct rl_qp *)qp)->qpx;
}

static uint32_t rl_mtu_bytes(enum ibv_mtu m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128u << m : 0;
}

int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
	struct rl_qp *p = (struct rl_qp *)qp;
	struct rl_ctx *c = ctx_of(qp->context);
	struct rl_modify_qp req;
	int err;

	memset(&req, 0, sizeof(req));
	req.mask = (uint32_t)mask;
	req.state = a->qp_state;
	req.access = a->qp_access_flags;
	req.mtu = (mask & IBV_QP_PATH_MTU) ? rl_mtu_bytes(a->path_mtu) : 0;
	req.dest_qpn = a->dest_qp_num;
	req.rq_psn = a->rq_psn;
	req.sq_psn = a->sq_psn;
	req.timeout = a->timeout;
	req.retry_cnt = a->retry_cnt;
	req.rnr_retry = a->rnr_retry;
	req.min_rnr_timer = a->min_rnr_timer;
	req.qkey = a->qkey;
	if (mask & IBV_QP_AV) {
		if (!a->ah_attr.is_global) {
			rl_warn("QP %#x: RTR without a GRH: RoCE needs the peer's GID (e.g. ibv_rc_pingpong -g 3)",
				qp->qp_num);
			errno = EINVAL;
			return EINVAL;
		}
		memcpy(req.dgid, a->ah_attr.grh.dgid.raw, 16);
	}
	err = rl_call(c, RL_OP_MODIFY_QP, p->h, &req, sizeof(req), NULL, 0, NULL, 0, NULL, 0);
	if (err) {
		if (c->reply_msg[0])
			rl_warn("modify QP %#x: %s", qp->qp_num, c->reply_msg);
		return err;
	}
	if (mask & IBV_QP_STATE) {
		p->state = a->qp_state;
		qp->state = a->qp_state;
	}
	if (mask & IBV_QP_PATH_MTU)
		p->attr.path_mtu = a->path_mtu;
	if (mask & IBV_QP_DEST_QPN)
		p->attr.dest_qp_num = a->dest_qp_num;
	if (mask & IBV_QP_RQ_PSN)
		p->attr.rq_psn = a->rq_psn;
	if (mask & IBV_QP_SQ_PSN)
		p->attr.sq_psn = a->sq_psn;
	if (mask & IBV_QP_TIMEOUT)
		p->attr.timeout = a->timeout;
	if (mask & IBV_QP_RETRY_CNT)
		p->attr.retry_cnt = a->retry_cnt;
	if (mask & IBV_QP_RNR_RETRY)
		p->attr.rnr_retry = a->rnr_retry;
	if (mask & IBV_QP_ACCESS_FLAGS)
		p->attr.qp_access_flags = a->qp_access_flags;
	if (mask & IBV_QP_AV)
		p->attr.ah_attr = a->ah_attr;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		p->attr.max_rd_atomic = a->max_rd_atomic;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		p->attr.max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & IBV_QP_MIN_RNR_TIMER)
		p->attr.min_rnr_timer = a->min_rnr_timer;
	if (mask & IBV_QP_QKEY)
		p->attr.qkey = a->qkey;
	return 0;
}

int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask, struct ibv_qp_init_attr *init)
{
	struct rl_qp *p = (struct rl_qp *)qp;
	struct rl_qp_state st = { .state = p->state };

	(void)mask;
	rl_call(ctx_of(qp->context), RL_OP_QUERY_QP, p->h, NULL, 0, NULL, 0, NULL, 0, &st, sizeof(st));
	*attr = p->attr;
	attr->qp_state = (enum ibv_qp_state)st.state;
	attr->cur_qp_state = attr->qp_state;
	attr->cap = p->cap;
	attr->port_num = 1;
	if (init) {
		memset(init, 0, sizeof(*init));
		init->send_cq = qp->send_cq;
		init->recv_cq = qp->recv_cq;
		init->cap = p->cap;
		init->qp_type = IBV_QPT_RC;
		init->sq_sig_all = p->sq_sig_all;
	}
	return 0;
}

int ibv_destroy_qp(struct ibv_qp *qp)
{
	struct rl_qp *p = (struct rl_qp *)qp;
	int err = rl_destroy(ctx_of(qp->context), RL_OP_DESTROY_QP, p->h);
	int i;

	if (err)
		return err;
	pthread_mutex_lock(&rl_qp_list_lock);
	for (i = 0; i < 4096; i++)
		if (rl_qp_list[i] == p)
			rl_qp_list[i] = NULL;
	pthread_mutex_unlock(&rl_qp_list_lock);
	free(p);
	return 0;
}
