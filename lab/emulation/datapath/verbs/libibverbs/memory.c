/* rocelab's libibverbs: protection domains and memory regions (the program's pages on memfds the node maps). */
#include "rocelab.h"

#include <ucontext.h>

/* ---- protection domains and memory ---- */

struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	struct rl_ctx *c = ctx_of(context);
	struct rl_handle_reply r;
	struct rl_pd *p;

	if (rl_call(c, RL_OP_ALLOC_PD, 0, NULL, 0, NULL, 0, NULL, 0, &r, sizeof(r)))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return rl_null(ENOMEM);
	p->pd.context = context;
	p->pd.handle = r.handle;
	p->h = r.handle;
	return &p->pd;
}

int ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct rl_pd *p = (struct rl_pd *)pd;
	int err = rl_destroy(ctx_of(pd->context), RL_OP_DEALLOC_PD, p->h);
	if (!err)
		free(p);
	return err;
}

/* seg_move moves [start, end) onto a fresh memfd: its bytes are copied
 * and the memfd is mapped over the same addresses. */
static struct rl_seg *seg_move(uint64_t start, uint64_t end)
{
	size_t len = end - start;
	struct rl_seg *s;
	void *tmp;
	int fd;

	fd = memfd_create("rocelab-mr", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return NULL;
	if (ftruncate(fd, (off_t)len) < 0)
		goto fail;
	tmp = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (tmp == MAP_FAILED)
		goto fail;
	memcpy(tmp, (void *)start, len);
	munmap(tmp, len);
	if (mmap((void *)start, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED)
		goto fail;
	s = calloc(1, sizeof(*s));
	if (!s)
		goto fail;
	s->start = start;
	s->end = end;
	s->fd = fd;
	return s;
fail : {
	int e = errno;
	close(fd);
	errno = e;
	return NULL;
}
}

struct seg_job {
	uint64_t start, end;
	struct rl_seg *seg;
	int err;
	ucontext_t caller, mover;
};

static void seg_job_run(unsigned hi, unsigned lo)
{
	struct seg_job *j = (struct seg_job *)(((uintptr_t)hi << 32) | lo);

	j->seg = seg_move(j->start, j->end);
	j->err = j->seg ? 0 : errno;
}

/* on_own_stack reports whether [start, end) overlaps the calling
 * thread's stack, and gives the stack's lowest address. */
static bool on_own_stack(uint64_t start, uint64_t end, uint64_t *lowest)
{
	pthread_attr_t a;
	void *base;
	size_t size;
	bool on = false;

	if (pthread_getattr_np(pthread_self(), &a) != 0)
		return false;
	if (pthread_attr_getstack(&a, &base, &size) == 0) {
		on = start < (uint64_t)base + size && end > (uint64_t)base;
		*lowest = (uint64_t)base;
	}
	pthread_attr_destroy(&a);
	return on;
}

/* grow_stack touches the stack's pages below start, down to 1 MiB or the
 * stack's limit: the main thread's stack grows down on demand, and once
 * pages of it are a memfd's, it can grow only where it already reached
 * below them. */
static void grow_stack(uint64_t start, uint64_t lowest)
{
	const uint64_t ps = (uint64_t)sysconf(_SC_PAGESIZE), want = 1 << 20;
	uint64_t to = start > lowest + want ? start - want : lowest + ps;
	uint64_t a;

	for (a = start - ps; a >= to && a < start; a -= ps)
		(void)*(volatile char *)a;
}

/* rl_seg_new moves [start, end) onto a fresh memfd. A buffer on the
 * calling thread's own stack is moved from another stack (swapcontext):
 * what the thread wrote on its stack between the copy and the remapping
 * (the calls' own frames) would otherwise be lost. Nothing writes to it
 * while the mover runs, since the thread itself runs the mover. */
static struct rl_seg *rl_seg_new(uint64_t start, uint64_t end)
{
	const size_t stack = 256 * 1024;
	uint64_t lowest = 0;
	struct seg_job *j;
	struct rl_seg *s;
	void *sp;

	if (!on_own_stack(start, end, &lowest))
		return seg_move(start, end);
	grow_stack(start, lowest);
	j = calloc(1, sizeof(*j));
	sp = mmap(NULL, stack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!j || sp == MAP_FAILED) {
		free(j);
		errno = ENOMEM;
		return NULL;
	}
	j->start = start;
	j->end = end;
	if (getcontext(&j->mover) < 0)
		goto fail;
	j->mover.uc_stack.ss_sp = sp;
	j->mover.uc_stack.ss_size = stack;
	j->mover.uc_link = &j->caller;
	makecontext(&j->mover, (void (*)(void))seg_job_run, 2, (unsigned)((uintptr_t)j >> 32), (unsigned)(uintptr_t)j);
	if (swapcontext(&j->caller, &j->mover) < 0)
		goto fail;
	munmap(sp, stack);
	s = j->seg;
	errno = j->err;
	free(j);
	return s;
fail:
	munmap(sp, stack);
	free(j);
	return NULL;
}

/* rl_cover finds or makes the segments that cover [start, end), in
 * order, taking a reference on each (caller holds seg_lock). */
static int rl_cover(struct rl_ctx *c, uint64_t start, uint64_t end, struct rl_seg **out, int max)
{
	uint64_t at = start;
	int n = 0;

	while (at < end) {
		struct rl_seg *s, *best = NULL;
		uint64_t gap_end = end;

		for (s = c->segs; s; s = s->next) {
			if (s->start <= at && at < s->end) {
				best = s;
				break;
			}
			if (s->start > at && s->start < gap_end)
				gap_end = s->start;
		}
		if (!best) {
			best = rl_seg_new(at, gap_end);
			if (!best)
				goto fail;
			best->next = c->segs;
			c->segs = best;
		}
		if (n == max) {
			errno = ENOMEM;
			goto fail;
		}
		best->refs++;
		out[n++] = best;
		at = best->end;
	}
	return n;
fail:
	while (n > 0)
		out[--n]->refs--;
	return -1;
}

static void rl_unref(struct rl_ctx *c, struct rl_seg **segs, int n)
{
	int i;
	for (i = 0; i < n; i++) {
		struct rl_seg **pp;
		if (--segs[i]->refs > 0)
			continue;
		/* The pages stay mapped (the program owns the addresses);
		 * a later registration of them makes a new segment. */
		for (pp = &c->segs; *pp; pp = &(*pp)->next)
			if (*pp == segs[i]) {
				*pp = segs[i]->next;
				break;
			}
		close(segs[i]->fd);
		free(segs[i]);
	}
}

#undef ibv_reg_mr
struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	struct rl_ctx *c = ctx_of(pd->context);
	long ps = sysconf(_SC_PAGESIZE);
	uint64_t start = (uint64_t)addr & ~(uint64_t)(ps - 1);
	uint64_t end = ((uint64_t)addr + length + ps - 1) & ~(uint64_t)(ps - 1);
	struct rl_piece pieces[RL_MAX_PIECES];
	int fds[RL_MAX_PIECES];
	struct rl_reg_mr req;
	struct rl_mr_reply r;
	struct rl_mr *m;
	int i, n;

	if (!addr || length == 0)
		return rl_null(EINVAL);
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) && !(access & IBV_ACCESS_LOCAL_WRITE))
		return rl_null(EINVAL); /* as the IB spec requires */
	m = calloc(1, sizeof(*m));
	if (!m)
		return rl_null(ENOMEM);
	pthread_mutex_lock(&c->seg_lock);
	n = rl_cover(c, start, end, m->segs, RL_MAX_PIECES);
	if (n < 0) {
		int e = errno;
		pthread_mutex_unlock(&c->seg_lock);
		free(m);
		rl_warn("register %zu bytes at %p: %s", length, addr, strerror(e));
		errno = e;
		return NULL;
	}
	m->nsegs = n;
	for (i = 0; i < n; i++) {
		struct rl_seg *s = m->segs[i];
		uint64_t a = i == 0 ? start : s->start;
		uint64_t b = s->end < end ? s->end : end;
		pieces[i].addr = a;
		pieces[i].len = b - a;
		pieces[i].offset = a - s->start;
		fds[i] = s->fd;
	}
	memset(&req, 0, sizeof(req));
	req.pd = ((struct rl_pd *)pd)->h;
	req.access = (uint32_t)access;
	req.addr = (uint64_t)addr;
	req.len = length;
	req.npieces = (uint32_t)n;
	if (rl_call(c, RL_OP_REG_MR, 0, &req, sizeof(req), pieces, sizeof(pieces[0]) * n, fds, n, &r, sizeof(r))) {
		int e = errno;
		rl_unref(c, m->segs, n);
		pthread_mutex_unlock(&c->seg_lock);
		free(m);
		errno = e;
		return NULL;
	}
	pthread_mutex_unlock(&c->seg_lock);
	m->h = r.handle;
	m->mr.context = pd->context;
	m->mr.pd = pd;
	m->mr.addr = addr;
	m->mr.length = length;
	m->mr.handle = r.handle;
	m->mr.lkey = r.lkey;
	m->mr.rkey = r.rkey;
	return &m->mr;
}

struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, unsigned int access)
{
	if (iova != (uint64_t)addr)
		return rl_null(EOPNOTSUPP);
	return ibv_reg_mr(pd, addr, length, (int)access);
}

#undef ibv_reg_mr_iova
struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, iova, (unsigned int)access);
}

int ibv_dereg_mr(struct ibv_mr *mr)
{
	struct rl_mr *m = (struct rl_mr *)mr;
	struct rl_ctx *c = ctx_of(mr->context);
	int err = rl_destroy(c, RL_OP_DEREG_MR, m->h);

	if (err)
		return err;
	pthread_mutex_lock(&c->seg_lock);
	rl_unref(c, m->segs, m->nsegs);
	pthread_mutex_unlock(&c->seg_lock);
	free(m);
	return 0;
}
