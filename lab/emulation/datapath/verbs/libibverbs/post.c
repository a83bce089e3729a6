/* rocelab's libibverbs: posting work requests (ibv_post_send, ibv_post_recv and the ibv_qp_ex API). */
#include "rocelab.h"

/* ---- posting ---- */

/* rl_flush sends the batch of p (wr_lock held); 0 or an errno. */
static int rl_flush(struct rl_qp *p)
{
	struct rl_post hdr = { .n = (uint32_t)p->nbatch };
	uint8_t buf[sizeof(hdr) + sizeof(p->batch)];
	int err;

	if (p->nbatch == 0)
		return 0;
	memcpy(buf, &hdr, sizeof(hdr));
	memcpy(buf + sizeof(hdr), p->batch, sizeof(p->batch[0]) * p->nbatch);
	err = rl_post(ctx_of(p->qpx.qp_base.context), RL_OP_POST_SEND, p->h, buf,
		      sizeof(hdr) + sizeof(p->batch[0]) * p->nbatch, p->inl, p->inl_len);
	p->nbatch = 0;
	p->inl_len = 0;
	return err;
}

/* rl_add_sgl puts the entries of a list after its first (in w itself) in
 * the trailing area, and marks w (RL_WR_SGL); a list of one adds nothing. */
static void rl_add_sgl(struct rl_qp *p, struct rl_send_wr *w, const struct ibv_sge *sg, size_t n)
{
	size_t i;

	if (n < 2)
		return;
	for (i = 1; i < n; i++) {
		struct rl_sge e = { .addr = sg[i].addr, .length = sg[i].length, .lkey = sg[i].lkey };
		memcpy(p->inl + p->inl_len, &e, sizeof(e));
		p->inl_len += sizeof(e);
	}
	w->flags |= RL_WR_SGL;
	w->inline_len = (uint16_t)((n - 1) * sizeof(struct rl_sge));
}

/* rl_add_ud puts a UD WR's destination in the trailing area. */
static void rl_add_ud(struct rl_qp *p, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey)
{
	struct rl_ud_dest u = { .qpn = qpn, .qkey = qkey };
	memcpy(u.dgid, ((struct rl_ah *)ah)->attr.grh.dgid.raw, 16);
	memcpy(p->inl + p->inl_len, &u, sizeof(u));
	p->inl_len += sizeof(u);
}

/* rl_add_wr appends one send WR (wr_lock held). inline data, if any, is
 * copied from the gather list; a UD WR's destination goes first (ah). */
static int rl_add_wr(struct rl_qp *p, const struct rl_send_wr *w, const struct ibv_sge *sg, int nsg,
		     struct ibv_ah *ah, uint32_t qpn, uint32_t qkey, const struct rl_atomic *at)
{
	struct rl_send_wr *d;
	int err, i;

	if (nsg > RL_MAX_SGE)
		return EINVAL;
	if (p->nbatch == RL_BATCH ||
	    p->inl_len + sizeof(struct rl_ud_dest) + sizeof(struct rl_atomic) + RL_MAX_INLINE +
			    RL_MAX_SGE * sizeof(struct rl_sge) > sizeof(p->inl))
		if ((err = rl_flush(p)))
			return err;
	d = &p->batch[p->nbatch];
	*d = *w;
	if (ah) {
		rl_add_ud(p, ah, qpn, qkey);
		d->flags |= RL_WR_UD;
	}
	if (at) {
		memcpy(p->inl + p->inl_len, at, sizeof(*at));
		p->inl_len += sizeof(*at);
		d->flags |= RL_WR_ATOMIC;
	}
	if (w->flags & RL_WR_INLINE) {
		size_t total = 0;
		for (i = 0; i < nsg; i++)
			total += sg[i].length;
		if (total > p->max_inline || total > RL_MAX_INLINE)
			return EINVAL;
		for (i = 0; i < nsg; i++) {
			memcpy(p->inl + p->inl_len, (void *)sg[i].addr, sg[i].length);
			p->inl_len += sg[i].length;
		}
		d->inline_len = (uint16_t)total;
		d->length = (uint32_t)total;
	} else if (nsg >= 1) {
		d->addr = sg[0].addr;
		d->length = sg[0].length;
		d->lkey = sg[0].lkey;
		rl_add_sgl(p, d, sg, (size_t)nsg);
	}
	p->nbatch++;
	p->sent = true;
	p->last_send_id = w->wr_id;
	return 0;
}

int rl_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct rl_qp *p = (struct rl_qp *)qp;
	int err = 0;

	if (p->state != IBV_QPS_RTS) {
		*bad = wr;
		return EINVAL;
	}
	pthread_mutex_lock(&p->wr_lock);
	for (; wr; wr = wr->next) {
		struct rl_send_wr w = { .wr_id = wr->wr_id, .opcode = (uint8_t)wr->opcode };
		struct rl_atomic at, *atp = NULL;
		switch (wr->opcode) {
		case IBV_WR_SEND:
			break;
		case IBV_WR_SEND_WITH_IMM:
			w.imm = wr->imm_data;
			w.flags |= RL_WR_IMM;
			break;
		case IBV_WR_RDMA_WRITE_WITH_IMM:
			w.imm = wr->imm_data;
			w.flags |= RL_WR_IMM;
			/* fall through */
		case IBV_WR_RDMA_WRITE:
		case IBV_WR_RDMA_READ:
			w.remote_addr = wr->wr.rdma.remote_addr;
			w.rkey = wr->wr.rdma.rkey;
			break;
		case IBV_WR_ATOMIC_CMP_AND_SWP:
		case IBV_WR_ATOMIC_FETCH_AND_ADD:
			w.remote_addr = wr->wr.atomic.remote_addr;
			w.rkey = wr->wr.atomic.rkey;
			at.compare_add = wr->wr.atomic.compare_add;
			at.swap = wr->wr.atomic.swap;
			atp = &at;
			break;
		default:
			err = EOPNOTSUPP;
			break;
		}
		if (!err) {
			if ((wr->send_flags & IBV_SEND_SIGNALED) || p->sq_sig_all)
				w.flags |= RL_WR_SIGNALED;
			if ((wr->send_flags & IBV_SEND_INLINE) && wr->opcode != IBV_WR_RDMA_READ && !atp)
				w.flags |= RL_WR_INLINE;
			bool ud = qp->qp_type == IBV_QPT_UD;
			if (ud && (!wr->wr.ud.ah || (wr->opcode != IBV_WR_SEND && wr->opcode != IBV_WR_SEND_WITH_IMM)))
				err = EINVAL;
			else
				err = rl_add_wr(p, &w, wr->sg_list, wr->num_sge, ud ? wr->wr.ud.ah : NULL,
						wr->wr.ud.remote_qpn, wr->wr.ud.remote_qkey, atp);
		}
		if (err) {
			*bad = wr;
			break;
		}
	}
	if (!err)
		err = rl_flush(p);
	else
		rl_flush(p);
	pthread_mutex_unlock(&p->wr_lock);
	return err;
}

/* rl_post_recv_wrs sends the receive WRs of the list wr, in batches, to
 * the queue handle names (a QP's with RL_OP_POST_RECV, an SRQ's with
 * RL_OP_POST_SRQ_RECV); p, if not NULL, records them for its QP. */
int rl_post_recv_wrs(struct rl_ctx *c, uint32_t op, uint32_t handle, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad, struct rl_qp *p)
{
	struct {
		struct rl_post h;
		struct rl_recv_wr w[RL_BATCH];
	} m;
	struct rl_sge sg[RL_BATCH];
	int err = 0, nsg;

	while (wr && !err) {
		m.h.n = 0;
		nsg = 0;
		for (; wr && m.h.n < RL_BATCH; wr = wr->next) {
			struct rl_recv_wr *w = &m.w[m.h.n];
			int i;
			if (wr->num_sge > RL_MAX_SGE || wr->num_sge < 0) {
				err = EINVAL;
				*bad = wr;
				break;
			}
			if (wr->num_sge > 1 && nsg + wr->num_sge - 1 > RL_BATCH)
				break; /* the list goes in the next batch */
			memset(w, 0, sizeof(*w));
			w->wr_id = wr->wr_id;
			if (wr->num_sge >= 1) {
				w->addr = wr->sg_list[0].addr;
				w->length = wr->sg_list[0].length;
				w->lkey = wr->sg_list[0].lkey;
			}
			for (i = 1; i < wr->num_sge; i++) {
				sg[nsg].addr = wr->sg_list[i].addr;
				sg[nsg].length = wr->sg_list[i].length;
				sg[nsg].lkey = wr->sg_list[i].lkey;
				nsg++;
			}
			w->nsge = wr->num_sge > 1 ? (uint32_t)wr->num_sge - 1 : 0;
			m.h.n++;
			if (p) {
				p->received = true;
				p->last_recv_id = wr->wr_id;
			}
		}
		if (m.h.n > 0) {
			int e = rl_post(c, op, handle, &m, sizeof(m.h) + sizeof(m.w[0]) * m.h.n, sg, sizeof(sg[0]) * nsg);
			if (e && !err) {
				err = e;
				*bad = wr;
			}
		}
	}
	return err;
}

int rl_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct rl_qp *p = (struct rl_qp *)qp;

	/* A QP with an SRQ has no receive queue of its own. */
	if (p->state == IBV_QPS_RESET || p->state == IBV_QPS_ERR || qp->srq) {
		*bad = wr;
		return EINVAL;
	}
	return rl_post_recv_wrs(ctx_of(qp->context), RL_OP_POST_RECV, p->h, wr, bad, p);
}

/* The new post-send API (struct ibv_qp_ex): WRs are collected between
 * wr_start and wr_complete and sent as one batch. */

void rl_wr_start(struct ibv_qp_ex *qx)
{
	struct rl_qp *p = (struct rl_qp *)qx;
	pthread_mutex_lock(&p->wr_lock);
	p->wr_err = p->state == IBV_QPS_RTS ? 0 : EINVAL;
}

int rl_wr_complete(struct ibv_qp_ex *qx)
{
	struct rl_qp *p = (struct rl_qp *)qx;
	int err = p->wr_err;
	if (!err)
		err = rl_flush(p);
	p->nbatch = 0;
	p->inl_len = 0;
	pthread_mutex_unlock(&p->wr_lock);
	return err;
}

void rl_wr_abort(struct ibv_qp_ex *qx)
{
	struct rl_qp *p = (struct rl_qp *)qx;
	p->nbatch = 0;
	p->inl_len = 0;
	pthread_mutex_unlock(&p->wr_lock);
}

static void rl_wr_new(struct ibv_qp_ex *qx, uint8_t op, uint32_t rkey, uint64_t raddr, uint32_t imm, int has_imm)
{
	struct rl_qp *p = (struct rl_qp *)qx;
	struct rl_send_wr *w;

	if (p->wr_err)
		return;
	if (p->nbatch == RL_BATCH && (p->wr_err = rl_flush(p)))
		return;
	w = &p->batch[p->nbatch++];
	memset(w, 0, sizeof(*w));
	w->wr_id = qx->wr_id;
	w->opcode = op;
	w->rkey = rkey;
	w->remote_addr = raddr;
	w->imm = imm;
	if (has_imm)
		w->flags |= RL_WR_IMM;
	if ((qx->wr_flags & IBV_SEND_SIGNALED) || p->sq_sig_all)
		w->flags |= RL_WR_SIGNALED;
	p->sent = true;
	p->last_send_id = qx->wr_id;
}

static struct rl_send_wr *rl_wr_cur(struct ibv_qp_ex *qx)
{
	struct rl_qp *p = (struct rl_qp *)qx;
	if (p->wr_err || p->nbatch == 0)
		return NULL;
	return &p->batch[p->nbatch - 1];
}

void rl_wr_send(struct ibv_qp_ex *qx)
{
	rl_wr_new(qx, IBV_WR_SEND, 0, 0, 0, 0);
}

void rl_wr_send_imm(struct ibv_qp_ex *qx, __be32 imm)
{
	rl_wr_new(qx, IBV_WR_SEND_WITH_IMM, 0, 0, imm, 1);
}

void rl_wr_rdma_write(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr)
{
	rl_wr_new(qx, IBV_WR_RDMA_WRITE, rkey, raddr, 0, 0);
}

void rl_wr_rdma_write_imm(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr, __be32 imm)
{
	rl_wr_new(qx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, raddr, imm, 1);
}

void rl_wr_rdma_read(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr)
{
	rl_wr_new(qx, IBV_WR_RDMA_READ, rkey, raddr, 0, 0);
}

void rl_wr_set_sge(struct ibv_qp_ex *qx, uint32_t lkey, uint64_t addr, uint32_t len)
{
	struct rl_send_wr *w = rl_wr_cur(qx);
	if (!w)
		return;
	w->lkey = lkey;
	w->addr = addr;
	w->length = len;
}

void rl_wr_set_sge_list(struct ibv_qp_ex *qx, size_t n, const struct ibv_sge *sg)
{
	struct rl_qp *p = (struct rl_qp *)qx;
	struct rl_send_wr *w;

	if (n > RL_MAX_SGE || p->inl_len + (n - 1) * sizeof(struct rl_sge) > sizeof(p->inl)) {
		p->wr_err = EINVAL;
		return;
	}
	if (n == 0)
		return;
	rl_wr_set_sge(qx, sg[0].lkey, sg[0].addr, sg[0].length);
	if ((w = rl_wr_cur(qx)))
		rl_add_sgl(p, w, sg, n);
}

void rl_wr_set_inline_data_list(struct ibv_qp_ex *qx, size_t n, const struct ibv_data_buf *b)
{
	struct rl_qp *p = (struct rl_qp *)qx;
	struct rl_send_wr *w = rl_wr_cur(qx);
	size_t total = 0, i;

	if (!w)
		return;
	for (i = 0; i < n; i++)
		total += b[i].length;
	if (total > p->max_inline || total > RL_MAX_INLINE || p->inl_len + total > sizeof(p->inl)) {
		p->wr_err = EINVAL;
		return;
	}
	for (i = 0; i < n; i++) {
		memcpy(p->inl + p->inl_len, b[i].addr, b[i].length);
		p->inl_len += b[i].length;
	}
	w->flags |= RL_WR_INLINE;
	w->inline_len = (uint16_t)total;
	w->length = (uint32_t)total;
}

void rl_wr_set_inline_data(struct ibv_qp_ex *qx, void *addr, size_t len)
{
	struct ibv_data_buf b = { .addr = addr, .length = len };
	rl_wr_set_inline_data_list(qx, 1, &b);
}

/* rl_wr_atomic starts an atomic WR: its operands go in the trailing area
 * now, before the list ibv_wr_set_sge_list may add. */
static void rl_wr_atomic(struct ibv_qp_ex *qx, uint8_t op, uint32_t rkey, uint64_t raddr, uint64_t compare_add,
			 uint64_t swap)
{
	struct rl_qp *p = (struct rl_qp *)qx;
	struct rl_atomic at = { .compare_add = compare_add, .swap = swap };
	struct rl_send_wr *w;

	rl_wr_new(qx, op, rkey, raddr, 0, 0);
	if (!(w = rl_wr_cur(qx)))
		return;
	if (p->inl_len + sizeof(at) > sizeof(p->inl)) {
		p->wr_err = ENOMEM;
		return;
	}
	memcpy(p->inl + p->inl_len, &at, sizeof(at));
	p->inl_len += sizeof(at);
	w->flags |= RL_WR_ATOMIC;
}

void rl_wr_atomic_cmp_swp(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr, uint64_t compare, uint64_t swap)
{
	rl_wr_atomic(qx, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, raddr, compare, swap);
}

void rl_wr_atomic_fetch_add(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr, uint64_t add)
{
	rl_wr_atomic(qx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, raddr, add, 0);
}

/* rl_wr_set_ud_addr gives the current WR of a UD QP its destination. It
 * goes before the WR's own inline bytes or list in the trailing area
 * (which end it): they move up if the program set them first. */
void rl_wr_set_ud_addr(struct ibv_qp_ex *qx, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey)
{
	struct rl_qp *p = (struct rl_qp *)qx;
	struct rl_send_wr *w = rl_wr_cur(qx);
	struct rl_ud_dest u = { .qpn = qpn, .qkey = qkey };
	size_t own;

	if (!w)
		return;
	if (qx->qp_base.qp_type != IBV_QPT_UD || !ah || (w->flags & RL_WR_UD) ||
	    p->inl_len + sizeof(u) > sizeof(p->inl)) {
		p->wr_err = EINVAL;
		return;
	}
	memcpy(u.dgid, ((struct rl_ah *)ah)->attr.grh.dgid.raw, 16);
	own = w->inline_len;
	memmove(p->inl + p->inl_len - own + sizeof(u), p->inl + p->inl_len - own, own);
	memcpy(p->inl + p->inl_len - own, &u, sizeof(u));
	p->inl_len += sizeof(u);
	w->flags |= RL_WR_UD;
}

void rl_wr_unsupported_u32(struct ibv_qp_ex *qx, uint32_t v)
{
	(void)v;
	((struct rl_qp *)qx)->wr_err = EOPNOTSUPP;
}
