/* rocelab's libibverbs: shared receive queues (an endpoint.SRQ of the NIC
 * model each). */
#include "rocelab.h"

struct rl_srq {
	struct ibv_srq srq;
	uint32_t h;
};

#define RL_MAX_SRQ_WR 32768

struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct rl_ctx *c = ctx_of(pd->context);
	struct rl_create_srq req = { 0 };
	struct rl_handle_reply r;
	struct rl_srq *s;

	if (attr->attr.max_wr == 0 || attr->attr.max_wr > RL_MAX_SRQ_WR || attr->attr.max_sge > RL_MAX_SGE ||
	    attr->attr.srq_limit > attr->attr.max_wr)
		return rl_null(EINVAL);
	s = calloc(1, sizeof(*s));
	if (!s)
		return rl_null(ENOMEM);
	req.pd = ((struct rl_pd *)pd)->h;
	req.max_wr = attr->attr.max_wr;
	req.limit = attr->attr.srq_limit;
	if (rl_call(c, RL_OP_CREATE_SRQ, 0, &req, sizeof(req), NULL, 0, NULL, 0, &r, sizeof(r))) {
		int e = errno;
		if (c->reply_msg[0])
			rl_warn("create SRQ: %s", c->reply_msg);
		free(s);
		errno = e;
		return NULL;
	}
	s->h = r.handle;
	s->srq.context = pd->context;
	s->srq.srq_context = attr->srq_context;
	s->srq.pd = pd;
	s->srq.handle = r.handle;
	s->srq.events_completed = 0;
	pthread_mutex_init(&s->srq.mutex, NULL);
	pthread_cond_init(&s->srq.cond, NULL);
	return &s->srq;
}

int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask)
{
	struct rl_srq *s = (struct rl_srq *)srq;
	struct rl_modify_srq req = { 0 };

	if (mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT))
		return EINVAL;
	req.mask = (uint32_t)mask;
	req.max_wr = attr->max_wr;
	req.limit = attr->srq_limit;
	if (rl_call(ctx_of(srq->context), RL_OP_MODIFY_SRQ, s->h, &req, sizeof(req), NULL, 0, NULL, 0, NULL, 0))
		return errno;
	return 0;
}

int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct rl_srq *s = (struct rl_srq *)srq;
	struct rl_srq_state st;

	if (rl_call(ctx_of(srq->context), RL_OP_QUERY_SRQ, s->h, NULL, 0, NULL, 0, NULL, 0, &st, sizeof(st)))
		return errno;
	attr->max_wr = st.max_wr;
	attr->max_sge = RL_MAX_SGE;
	attr->srq_limit = st.limit;
	return 0;
}

int ibv_destroy_srq(struct ibv_srq *srq)
{
	struct rl_srq *s = (struct rl_srq *)srq;
	int err = rl_destroy(ctx_of(srq->context), RL_OP_DESTROY_SRQ, s->h);

	if (err)
		return err;
	free(s);
	return 0;
}

uint32_t rl_srq_handle(struct ibv_srq *srq)
{
	return ((struct rl_srq *)srq)->h;
}

int rl_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct rl_srq *s = (struct rl_srq *)srq;
	return rl_post_recv_wrs(ctx_of(srq->context), RL_OP_POST_SRQ_RECV, s->h, wr, bad, NULL);
}
