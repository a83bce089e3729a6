/*
 * rocelab's libibverbs.so.1: the verbs ABI over a lab's endpoint node.
 *
 * A program linked against libibverbs (perftest, ibv_rc_pingpong, a user's
 * own code) loads this library instead of the system's when `rocelab exec`
 * puts it first on LD_LIBRARY_PATH. Every device is one NIC of the lab
 * host the program runs on; every verb becomes a message to that host's
 * endpoint node (lab/emulation/verbs), which runs the QPs on the lab's
 * endpoint model, so the program's traffic crosses the modelled fabric.
 *
 * Memory: ibv_reg_mr moves the region's pages onto a memfd (copying them,
 * then mapping the memfd over the same addresses) and hands the memfd to
 * the node, which maps it too: the NIC model reads and writes the
 * program's memory directly, as a NIC does by DMA.
 *
 * Data path: post_send/post_recv are one datagram each (no reply); the
 * node writes completions into a ring in shared memory that poll_cq reads
 * without a system call.
 *
 * Files: verbs.c (messages, devices, contexts), query.c, memory.c, cq.c,
 * qp.c, post.c, misc.c; rocelab.h what they share; proto.h the messages;
 * stubs.c what rdma-core exports and rocelab does not implement;
 * libibverbs.map the symbol versions.
 */
#include "rocelab.h"

void rl_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("rocelab verbs: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* ---- messages ---- */

static int rl_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* rl_sendmsg sends header + two payload parts and fds as one datagram. */
static int rl_sendmsg(int fd, uint32_t op, uint32_t handle, const void *a, size_t alen, const void *b,
		      size_t blen, const int *fds, int nfds)
{
	struct rl_hdr h = { .op = op, .handle = handle, .len = (uint32_t)(alen + blen) };
	struct iovec iov[3] = { { &h, sizeof(h) }, { (void *)a, alen }, { (void *)b, blen } };
	char cbuf[CMSG_SPACE(sizeof(int) * RL_MAX_PIECES)];
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = 3 };
	ssize_t n;

	if (nfds > 0) {
		struct cmsghdr *c;
		memset(cbuf, 0, sizeof(cbuf));
		m.msg_control = cbuf;
		m.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	do
		n = sendmsg(fd, &m, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	return 0;
}

void rl_mark_dead(struct rl_ctx *c)
{
	if (c->dead)
		return;
	c->dead = true;
	rl_warn("the lab's endpoint node for %s is gone (its socket closed)", c->dev->info.name);
	if (c->async_pipe[1] >= 0) {
		struct ibv_async_event ev = { .event_type = IBV_EVENT_DEVICE_FATAL };
		ev.element.port_num = 1;
		if (write(c->async_pipe[1], &ev, sizeof(ev)) < 0) {
			/* nobody reads async events: nothing to do */
		}
	}
}

/* rl_call sends a request and waits for its reply; it returns 0 or an
 * errno (and sets errno). Replies larger than out_cap are cut. */
int rl_call(struct rl_ctx *c, uint32_t op, uint32_t handle, const void *a, size_t alen, const void *b,
		   size_t blen, const int *fds, int nfds, void *out, size_t out_cap)
{
	struct {
		struct rl_reply r;
		uint8_t body[RL_MAX_MSG];
	} *rep;
	ssize_t n;
	int err;

	if (c->dead) {
		errno = ENODEV;
		return ENODEV;
	}
	rep = malloc(sizeof(*rep));
	if (!rep) {
		errno = ENOMEM;
		return ENOMEM;
	}
	pthread_mutex_lock(&c->lock);
	if (rl_sendmsg(c->fd, op, handle, a, alen, b, blen, fds, nfds) < 0) {
		err = errno;
		pthread_mutex_unlock(&c->lock);
		free(rep);
		if (err == EPIPE || err == ECONNRESET || err == ENOTCONN)
			rl_mark_dead(c);
		errno = err == EPIPE ? ENODEV : err;
		return errno;
	}
	do
		n = recv(c->fd, rep, sizeof(*rep), 0);
	while (n < 0 && errno == EINTR);
	pthread_mutex_unlock(&c->lock);
	if (n <= 0) {
		free(rep);
		rl_mark_dead(c);
		errno = ENODEV;
		return ENODEV;
	}
	if ((size_t)n < sizeof(struct rl_reply)) {
		free(rep);
		errno = EPROTO;
		return EPROTO;
	}
	err = rep->r.err;
	memcpy(c->reply_msg, rep->r.msg, sizeof(c->reply_msg));
	c->reply_msg[sizeof(c->reply_msg) - 1] = 0;
	if (err == 0 && out) {
		size_t got = (size_t)n - sizeof(struct rl_reply);
		memcpy(out, rep->body, got < out_cap ? got : out_cap);
	}
	free(rep);
	if (err != 0 && c->reply_msg[0] && getenv("ROCELAB_VERBS_DEBUG"))
		rl_warn("%s", c->reply_msg);
	errno = err;
	return err;
}

int rl_destroy(struct rl_ctx *c, uint32_t op, uint32_t handle)
{
	int err = rl_call(c, op, handle, NULL, 0, NULL, 0, NULL, 0, NULL, 0);

	return err == ENODEV ? 0 : err;
}

/* rl_post sends a request that has no reply (the data path). */
int rl_post(struct rl_ctx *c, uint32_t op, uint32_t handle, const void *a, size_t alen, const void *b,
		   size_t blen)
{
	int err = 0;

	if (c->dead)
		return ENODEV;
	pthread_mutex_lock(&c->lock);
	if (rl_sendmsg(c->fd, op, handle, a, alen, b, blen, NULL, 0) < 0)
		err = errno;
	pthread_mutex_unlock(&c->lock);
	if (err == EPIPE || err == ECONNRESET || err == ENOTCONN) {
		rl_mark_dead(c);
		err = ENODEV;
	}
	return err;
}

/* ---- device list ---- */

static int rl_hello(int fd, struct rl_device *devs, int max)
{
	struct {
		struct rl_reply r;
		struct rl_hello_reply h;
		struct rl_device d[RL_MAX_DEVS];
	} rep;
	uint32_t v = RL_PROTO_VERSION;
	ssize_t n;
	int nd;

	if (rl_sendmsg(fd, RL_OP_HELLO, 0, &v, sizeof(v), NULL, 0, NULL, 0) < 0)
		return -1;
	n = recv(fd, &rep, sizeof(rep), 0);
	if (n < (ssize_t)(sizeof(rep.r) + sizeof(rep.h)) || rep.r.err) {
		errno = n <= 0 ? ECONNRESET : (rep.r.err ? rep.r.err : EPROTO);
		return -1;
	}
	if (rep.h.version != RL_PROTO_VERSION) {
		rl_warn("the node speaks protocol %u, this library %u: use the library of the same rocelab",
			rep.h.version, RL_PROTO_VERSION);
		errno = EPROTO;
		return -1;
	}
	nd = rep.h.ndev < (uint32_t)max ? (int)rep.h.ndev : max;
	memcpy(devs, rep.d, sizeof(struct rl_device) * nd);
	return nd;
}

struct ibv_device **ibv_get_device_list(int *num)
{
	const char *path = getenv(RL_ENV_SOCKET);
	struct rl_device devs[RL_MAX_DEVS];
	struct ibv_device **list;
	int fd, n = 0, i;

	if (num)
		*num = 0;
	if (path && *path) {
		fd = rl_connect(path);
		if (fd < 0) {
			rl_warn("cannot reach the lab's endpoint node at %s: %s", path, strerror(errno));
		} else {
			n = rl_hello(fd, devs, RL_MAX_DEVS);
			if (n < 0) {
				rl_warn("the lab's endpoint node at %s did not answer: %s", path, strerror(errno));
				n = 0;
			}
			close(fd);
		}
	}
	list = calloc(n + 1, sizeof(*list));
	if (!list)
		return rl_null(ENOMEM);
	for (i = 0; i < n; i++) {
		struct rl_dev *d = calloc(1, sizeof(*d));
		if (!d)
			break;
		d->info = devs[i];
		d->index = i;
		snprintf(d->socket, sizeof(d->socket), "%s", path);
		d->dev.node_type = IBV_NODE_CA;
		d->dev.transport_type = IBV_TRANSPORT_IB;
		snprintf(d->dev.name, sizeof(d->dev.name), "%.63s", devs[i].name);
		snprintf(d->dev.dev_name, sizeof(d->dev.dev_name), "uverbs%d", i);
		snprintf(d->dev.dev_path, sizeof(d->dev.dev_path), "%s", path);
		snprintf(d->dev.ibdev_path, sizeof(d->dev.ibdev_path), "/sys/class/infiniband/%.63s", devs[i].name);
		list[i] = &d->dev;
	}
	if (num)
		*num = i;
	return list;
}

void ibv_free_device_list(struct ibv_device **list)
{
	/* Devices stay: an open context points at its device. */
	free(list);
}

const char *ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

uint64_t rl_guid(const uint8_t mac[6])
{
	/* EUI-64 from the MAC, as RoCE NICs derive their GUID. */
	uint8_t g[8] = { mac[0] ^ 2, mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4], mac[5] };
	uint64_t v;
	memcpy(&v, g, 8);
	return v; /* already in network order, as __be64 */
}

__be64 ibv_get_device_guid(struct ibv_device *device)
{
	return rl_guid(((struct rl_dev *)device)->info.mac);
}

int ibv_get_device_index(struct ibv_device *device)
{
	return ((struct rl_dev *)device)->index;
}

/* ---- context ---- */


struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct rl_dev *d = (struct rl_dev *)device;
	struct rl_device devs[RL_MAX_DEVS];
	struct rl_ctx *c;
	int fd;

	fd = rl_connect(d->socket);
	if (fd < 0) {
		rl_warn("open %s: cannot reach the lab's endpoint node at %s: %s", d->info.name, d->socket,
			strerror(errno));
		return rl_null(ENODEV);
	}
	if (rl_hello(fd, devs, RL_MAX_DEVS) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return rl_null(ENOMEM);
	}
	c->dev = d;
	c->fd = fd;
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->cq_lock, NULL);
	pthread_cond_init(&c->armed_cond, NULL);
	pthread_mutex_init(&c->seg_lock, NULL);
	if (pipe2(c->async_pipe, O_CLOEXEC) < 0)
		c->async_pipe[0] = c->async_pipe[1] = -1;
	struct rl_open o;
	memset(&o, 0, sizeof(o));
	if (getenv("ROCELAB_VERBS_CC"))
		snprintf(o.cc, sizeof(o.cc), "%s", getenv("ROCELAB_VERBS_CC"));
	if (getenv("ROCELAB_VERBS_MODE"))
		snprintf(o.mode, sizeof(o.mode), "%s", getenv("ROCELAB_VERBS_MODE"));
	if (rl_call(c, RL_OP_OPEN, d->index, &o, sizeof(o), NULL, 0, NULL, 0, NULL, 0)) {
		int e = errno;
		if (c->reply_msg[0])
			rl_warn("open %s: %s", d->info.name, c->reply_msg);
		close(fd);
		free(c);
		errno = e;
		return NULL;
	}
	c->vctx.sz = sizeof(struct verbs_context);
	c->vctx.query_port = rl_query_port_op;
	c->vctx.create_qp_ex = rl_create_qp_ex;
	c->vctx.context.device = device;
	c->vctx.context.cmd_fd = fd;
	c->vctx.context.async_fd = c->async_pipe[0];
	c->vctx.context.num_comp_vectors = 1;
	c->vctx.context.abi_compat = __VERBS_ABI_IS_EXTENDED;
	pthread_mutex_init(&c->vctx.context.mutex, NULL);
	c->vctx.context.ops.poll_cq = rl_poll_cq;
	c->vctx.context.ops.req_notify_cq = rl_req_notify_cq;
	c->vctx.context.ops.post_send = rl_post_send;
	c->vctx.context.ops.post_recv = rl_post_recv;
	c->vctx.context.ops.post_srq_recv = rl_post_srq_recv;
	return &c->vctx.context;
}

int ibv_close_device(struct ibv_context *context)
{
	struct rl_ctx *c = ctx_of(context);
	/* Closing the socket is enough: the node frees whatever the
	 * program left (QPs, MRs, mappings) when its connection ends. */
	rl_stop_watcher(c);
	close(c->fd);
	if (c->async_pipe[0] >= 0) {
		close(c->async_pipe[0]);
		close(c->async_pipe[1]);
	}
	free(c);
	return 0;
}

int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	struct rl_ctx *c = ctx_of(context);
	ssize_t n;

	if (c->async_pipe[0] < 0)
		return -1;
	do
		n = read(c->async_pipe[0], event, sizeof(*event));
	while (n < 0 && errno == EINTR);
	if (n != sizeof(*event))
		return -1;
	event->element.port_num = 1;
	return 0;
}

void ibv_ack_async_event(struct ibv_async_event *event)
{
	(void)event;
}
