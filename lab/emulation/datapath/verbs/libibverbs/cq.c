/* rocelab's libibverbs: completion queues (rings in shared memory) and completion channels. */
#include "rocelab.h"

/* ---- completion queues ---- */

static uint32_t rl_pow2(uint32_t v)
{
	uint32_t p = 16;
	while (p < v && p < (1u << 24))
		p <<= 1;
	return p;
}

struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
			     struct ibv_comp_channel *channel, int comp_vector)
{
	struct rl_ctx *c = ctx_of(context);
	struct rl_create_cq req = { 0 };
	struct rl_handle_reply r;
	struct rl_cq *q;
	int fd;

	(void)comp_vector;
	if (cqe <= 0 || cqe > (1 << 22))
		return rl_null(EINVAL);
	q = calloc(1, sizeof(*q));
	if (!q)
		return rl_null(ENOMEM);
	req.entries = rl_pow2((uint32_t)cqe + 1);
	q->mask = req.entries - 1;
	q->ring_len = RL_RING_ENTRIES + (size_t)req.entries * sizeof(struct rl_cqe);
	fd = memfd_create("rocelab-cq", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0 || ftruncate(fd, (off_t)q->ring_len) < 0)
		goto fail;
	q->ring = mmap(NULL, q->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (q->ring == MAP_FAILED)
		goto fail;
	if (rl_call(c, RL_OP_CREATE_CQ, 0, &req, sizeof(req), NULL, 0, &fd, 1, &r, sizeof(r))) {
		int e = errno;
		munmap(q->ring, q->ring_len);
		close(fd);
		free(q);
		errno = e;
		return NULL;
	}
	close(fd);
	q->h = r.handle;
	q->cq.context = context;
	q->cq.channel = channel;
	q->cq.cq_context = cq_context;
	q->cq.handle = r.handle;
	q->cq.cqe = (int)q->mask;
	pthread_mutex_init(&q->cq.mutex, NULL);
	pthread_cond_init(&q->cq.cond, NULL);
	pthread_mutex_lock(&c->cq_lock);
	q->next = c->cqs;
	c->cqs = q;
	pthread_mutex_unlock(&c->cq_lock);
	return &q->cq;
fail : {
	int e = errno;
	if (fd >= 0)
		close(fd);
	free(q);
	errno = e;
	return NULL;
}
}

int ibv_destroy_cq(struct ibv_cq *cq)
{
	struct rl_cq *q = (struct rl_cq *)cq;
	struct rl_ctx *c = ctx_of(cq->context);
	struct rl_cq **pp;
	int err = rl_destroy(c, RL_OP_DESTROY_CQ, q->h);

	if (err)
		return err;
	pthread_mutex_lock(&c->cq_lock);
	for (pp = &c->cqs; *pp; pp = &(*pp)->next)
		if (*pp == q) {
			*pp = q->next;
			break;
		}
	pthread_mutex_unlock(&c->cq_lock);
	munmap(q->ring, q->ring_len);
	free(q);
	return 0;
}

/* rl_node_alive checks, without blocking, that the node still holds the
 * other end of the socket. */
bool rl_node_alive(struct rl_ctx *c)
{
	char b;
	ssize_t n;

	if (c->dead)
		return false;
	if (pthread_mutex_trylock(&c->lock) != 0)
		return true; /* a call is in flight: it will notice */
	n = recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
	pthread_mutex_unlock(&c->lock);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
		rl_mark_dead(c);
		return false;
	}
	return true;
}


/* rl_report_death gives each QP on cq one error completion: the program
 * sees its transfer fail as a NIC's retries running out would. */
int rl_report_death(struct rl_cq *q, int n, struct ibv_wc *wc)
{
	int got = 0, i;

	if (q->death_reported)
		return 0;
	pthread_mutex_lock(&rl_qp_list_lock);
	for (i = 0; i < 4096 && got < n; i++) {
		struct rl_qp *p = rl_qp_list[i];
		if (!p)
			continue;
		if (p->qpx.qp_base.send_cq == &q->cq && p->sent) {
			memset(&wc[got], 0, sizeof(wc[got]));
			wc[got].wr_id = p->last_send_id;
			wc[got].status = IBV_WC_RETRY_EXC_ERR;
			wc[got].qp_num = p->qpx.qp_base.qp_num;
			got++;
		} else if (p->qpx.qp_base.recv_cq == &q->cq && p->received) {
			memset(&wc[got], 0, sizeof(wc[got]));
			wc[got].wr_id = p->last_recv_id;
			wc[got].status = IBV_WC_WR_FLUSH_ERR;
			wc[got].opcode = IBV_WC_RECV;
			wc[got].qp_num = p->qpx.qp_base.qp_num;
			got++;
		}
	}
	pthread_mutex_unlock(&rl_qp_list_lock);
	q->death_reported = true;
	return got;
}

int rl_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	struct rl_cq *q = (struct rl_cq *)cq;
	uint32_t head = __atomic_load_n((uint32_t *)(q->ring + RL_RING_HEAD), __ATOMIC_ACQUIRE);
	uint32_t tail = *(uint32_t *)(q->ring + RL_RING_TAIL);
	const struct rl_cqe *ents = (const struct rl_cqe *)(q->ring + RL_RING_ENTRIES);
	int got = 0;

	while (got < n && tail != head) {
		const struct rl_cqe *e = &ents[tail & q->mask];
		struct ibv_wc *w = &wc[got++];
		memset(w, 0, sizeof(*w));
		w->wr_id = e->wr_id;
		w->status = e->status;
		w->opcode = e->opcode;
		w->vendor_err = e->vendor_err;
		w->byte_len = e->byte_len;
		w->imm_data = e->imm;
		w->qp_num = e->qp_num;
		w->wc_flags = e->wc_flags;
		w->src_qp = e->src_qp;
		w->sl = e->sl;
		w->pkey_index = 0;
		tail++;
	}
	if (got > 0) {
		__atomic_store_n((uint32_t *)(q->ring + RL_RING_TAIL), tail, __ATOMIC_RELEASE);
		q->empty_polls = 0;
		return got;
	}
	if (++q->empty_polls >= 4096) {
		struct rl_ctx *c = ctx_of(cq->context);
		q->empty_polls = 0;
		if (!rl_node_alive(c))
			return rl_report_death(q, n, wc);
	}
	return 0;
}

static bool rl_cq_ready(struct rl_cq *q)
{
	uint32_t head = __atomic_load_n((uint32_t *)(q->ring + RL_RING_HEAD), __ATOMIC_ACQUIRE);
	return head != *(uint32_t *)(q->ring + RL_RING_TAIL);
}

/*
 * Completion channels. Completions arrive in shared memory, not as
 * events, so a watcher thread (one per context, started by the first
 * ibv_req_notify_cq on a CQ with a channel) checks the armed CQs' rings
 * and writes one byte to a channel's pipe for each armed CQ that holds a
 * completion (or whose node is gone). The channel's fd is then readable
 * as rdma-core's is: programs that poll() or epoll it (UCX's async
 * thread, rping) wake up, and ibv_get_cq_event reads the byte. The
 * watcher checks every 20 µs after an arm and backs off to 1 ms while
 * nothing arrives; with nothing armed it sleeps on a condition variable.
 */
static void *rl_watch(void *arg)
{
	struct rl_ctx *c = arg;
	long wait_ns = 20000;
	unsigned idle = 0;

	pthread_mutex_lock(&c->cq_lock);
	while (!c->stopping) {
		bool armed = false, fired = false;
		struct rl_cq *q;

		for (q = c->cqs; q; q = q->next) {
			struct rl_channel *ch = (struct rl_channel *)q->cq.channel;
			if (!ch || !q->armed || q->signalled)
				continue;
			armed = true;
			if (rl_cq_ready(q) || c->dead) {
				q->signalled = true;
				fired = true;
				if (write(ch->pipe[1], "c", 1) < 0) {
					/* a full pipe is readable already */
				}
			}
		}
		if (!armed) {
			wait_ns = 20000;
			pthread_cond_wait(&c->armed_cond, &c->cq_lock);
			continue;
		}
		if (fired)
			wait_ns = 20000;
		else if (wait_ns < 1000000)
			wait_ns *= 2;
		pthread_mutex_unlock(&c->cq_lock);
		if (++idle % 1000 == 0)
			rl_node_alive(c); /* marks c dead when the node is gone */
		struct timespec ts = { 0, wait_ns };
		nanosleep(&ts, NULL);
		pthread_mutex_lock(&c->cq_lock);
	}
	pthread_mutex_unlock(&c->cq_lock);
	return NULL;
}

int rl_req_notify_cq(struct ibv_cq *cq, int solicited)
{
	struct rl_cq *q = (struct rl_cq *)cq;
	struct rl_ctx *c = ctx_of(cq->context);
	int err = 0;

	(void)solicited;
	pthread_mutex_lock(&c->cq_lock);
	q->armed = true;
	if (cq->channel && !c->watching) {
		err = pthread_create(&c->watcher, NULL, rl_watch, c);
		c->watching = err == 0;
	}
	pthread_cond_signal(&c->armed_cond);
	pthread_mutex_unlock(&c->cq_lock);
	return err;
}

void rl_stop_watcher(struct rl_ctx *c)
{
	pthread_mutex_lock(&c->cq_lock);
	c->stopping = true;
	pthread_cond_signal(&c->armed_cond);
	pthread_mutex_unlock(&c->cq_lock);
	if (c->watching)
		pthread_join(c->watcher, NULL);
	c->watching = false;
}

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	struct rl_channel *ch = calloc(1, sizeof(*ch));
	if (!ch)
		return rl_null(ENOMEM);
	/* Blocking until the program says otherwise (fcntl O_NONBLOCK), as
	 * rdma-core's channel fd is. */
	if (pipe2(ch->pipe, O_CLOEXEC) < 0) {
		free(ch);
		return NULL;
	}
	ch->ch.context = context;
	ch->ch.fd = ch->pipe[0];
	return &ch->ch;
}

int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct rl_channel *ch = (struct rl_channel *)channel;
	close(ch->pipe[0]);
	close(ch->pipe[1]);
	free(ch);
	return 0;
}

/* ibv_get_cq_event reads the channel's fd (blocking unless the program
 * made it non-blocking: then -1 and EAGAIN when no event is there) and
 * returns the CQ whose event that was, disarmed. */
int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
	struct rl_ctx *c = ctx_of(channel->context);

	for (;;) {
		struct rl_cq *q;
		char b;
		ssize_t n = read(channel->fd, &b, 1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			return -1;
		}
		pthread_mutex_lock(&c->cq_lock);
		for (q = c->cqs; q; q = q->next)
			if (q->cq.channel == channel && q->signalled) {
				q->signalled = false;
				q->armed = false;
				*cq = &q->cq;
				*cq_context = q->cq.cq_context;
				pthread_mutex_unlock(&c->cq_lock);
				return 0;
			}
		pthread_mutex_unlock(&c->cq_lock);
		/* the event of a CQ destroyed since: read on */
	}
}

void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_signal(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}

int ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	(void)cq;
	(void)cqe;
	return EOPNOTSUPP;
}
