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
 */
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

static void rl_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void rl_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("rocelab verbs: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

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

struct rl_channel {
	struct ibv_comp_channel ch;
	int pipe[2];
};

static inline struct rl_ctx *ctx_of(struct ibv_context *c)
{
	return (struct rl_ctx *)((char *)c - offsetof(struct rl_ctx, vctx.context));
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

static void rl_mark_dead(struct rl_ctx *c)
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
static int rl_call(struct rl_ctx *c, uint32_t op, uint32_t handle, const void *a, size_t alen, const void *b,
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

/* rl_post sends a request that has no reply (the data path). */
static int rl_post(struct rl_ctx *c, uint32_t op, uint32_t handle, const void *a, size_t alen, const void *b,
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
	if (!list) {
		errno = ENOMEM;
		return NULL;
	}
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

static uint64_t rl_guid(const uint8_t mac[6])
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

static int rl_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);
static int rl_req_notify_cq(struct ibv_cq *cq, int solicited);
static int rl_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
static int rl_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
static int rl_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
static int rl_query_port_op(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr, size_t len);
static struct ibv_qp *rl_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr);

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
		errno = ENODEV;
		return NULL;
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
		errno = ENOMEM;
		return NULL;
	}
	c->dev = d;
	c->fd = fd;
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->cq_lock, NULL);
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

/* ---- queries ---- */

static enum ibv_mtu rl_mtu_enum(uint32_t bytes)
{
	if (bytes >= 4096)
		return IBV_MTU_4096;
	if (bytes >= 2048)
		return IBV_MTU_2048;
	if (bytes >= 1024)
		return IBV_MTU_1024;
	if (bytes >= 512)
		return IBV_MTU_512;
	return IBV_MTU_256;
}

int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *a)
{
	struct rl_ctx *c = ctx_of(context);

	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "rocelab %u", RL_PROTO_VERSION);
	a->node_guid = rl_guid(c->dev->info.mac);
	a->sys_image_guid = a->node_guid;
	a->max_mr_size = 1ULL << 40;
	a->page_size_cap = 0xfffff000;
	a->vendor_id = 0x0;
	a->vendor_part_id = 0x1ce;
	a->hw_ver = 1;
	a->max_qp = (int)c->dev->info.max_qp;
	a->max_qp_wr = 32768;
	a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_PORT_ACTIVE_EVENT;
	a->max_sge = 1;
	a->max_sge_rd = 1;
	a->max_cq = 65536;
	a->max_cqe = 1 << 22;
	a->max_mr = 1 << 20;
	a->max_pd = 1 << 16;
	a->max_qp_rd_atom = 16;
	a->max_qp_init_rd_atom = 16;
	a->max_res_rd_atom = 16 * a->max_qp;
	a->atomic_cap = IBV_ATOMIC_NONE;
	a->max_pkeys = 1;
	a->phys_port_cnt = 1;
	return 0;
}

/* rl_speed picks the IB width and speed codes that multiply to the rate. */
static void rl_speed(uint64_t bps, uint8_t *width, uint8_t *speed)
{
	static const struct {
		uint64_t lane;
		uint8_t code;
	} speeds[] = { { 100000000000ULL, 128 /* NDR */ }, { 50000000000ULL, 64 /* HDR */ },
		       { 25000000000ULL, 32 /* EDR */ },   { 10000000000ULL, 16 /* FDR10 */ },
		       { 5000000000ULL, 4 /* QDR */ },     { 2500000000ULL, 1 /* SDR */ } };
	static const struct {
		int lanes;
		uint8_t code;
	} widths[] = { { 1, 1 }, { 4, 2 }, { 8, 4 }, { 12, 8 } };
	size_t i, j;

	for (i = 0; i < sizeof(speeds) / sizeof(speeds[0]); i++)
		for (j = 0; j < sizeof(widths) / sizeof(widths[0]); j++)
			if (speeds[i].lane * widths[j].lanes == bps) {
				*width = widths[j].code;
				*speed = speeds[i].code;
				return;
			}
	*width = 2;
	*speed = 32;
}

static int rl_port_attr(struct rl_ctx *c, uint8_t port, struct ibv_port_attr *a, size_t len)
{
	struct ibv_port_attr p;

	if (port != 1) {
		errno = EINVAL;
		return EINVAL;
	}
	memset(&p, 0, sizeof(p));
	p.state = c->dead ? IBV_PORT_DOWN : IBV_PORT_ACTIVE;
	p.max_mtu = IBV_MTU_4096;
	p.active_mtu = rl_mtu_enum(c->dev->info.mtu);
	p.gid_tbl_len = 4;
	p.port_cap_flags = IBV_PORT_CM_SUP;
	p.max_msg_sz = 1U << 31;
	p.pkey_tbl_len = 1;
	p.link_layer = IBV_LINK_LAYER_ETHERNET;
	p.phys_state = c->dead ? 3 /* disabled */ : 5 /* link up */;
	rl_speed(c->dev->info.rate_bps, &p.active_width, &p.active_speed);
	memcpy(a, &p, len < sizeof(p) ? len : sizeof(p));
	return 0;
}

static int rl_query_port_op(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr, size_t len)
{
	return rl_port_attr(ctx_of(ctx), port, attr, len);
}

#undef ibv_query_port
int ibv_query_port(struct ibv_context *context, uint8_t port, struct _compat_ibv_port_attr *attr)
{
	/* The compat struct is ibv_port_attr without its last two fields. */
	return rl_port_attr(ctx_of(context), port, (struct ibv_port_attr *)attr,
			    offsetof(struct ibv_port_attr, port_cap_flags2));
}

/* The RoCE GID table as NICs lay it out: 0 and 1 are the link-local
 * address from the MAC (RoCE v1, v2), 2 and 3 the IPv4-mapped BE address
 * (RoCE v1, v2). */
static int rl_gid(struct rl_ctx *c, int index, union ibv_gid *gid, enum ibv_gid_type *type)
{
	const struct rl_device *d = &c->dev->info;

	if (index < 0 || index > 3)
		return -1;
	memset(gid, 0, sizeof(*gid));
	if (index < 2) {
		uint64_t g = rl_guid(d->mac);
		gid->raw[0] = 0xfe;
		gid->raw[1] = 0x80;
		memcpy(&gid->raw[8], &g, 8);
	} else {
		gid->raw[10] = 0xff;
		gid->raw[11] = 0xff;
		memcpy(&gid->raw[12], d->ipv4, 4);
	}
	if (type)
		*type = (index & 1) ? IBV_GID_TYPE_ROCE_V2 : IBV_GID_TYPE_ROCE_V1;
	return 0;
}

int ibv_query_gid(struct ibv_context *context, uint8_t port, int index, union ibv_gid *gid)
{
	if (port != 1)
		return -1;
	return rl_gid(ctx_of(context), index, gid, NULL);
}

/* ibv_query_gid_type is rdma-core's private call (IBVERBS_PRIVATE_34): its
 * type is the sysfs enum, 0 for RoCE v1 and 1 for RoCE v2. */
int ibv_query_gid_type(struct ibv_context *context, uint8_t port, unsigned int index, int *type)
{
	union ibv_gid g;
	enum ibv_gid_type t;
	if (port != 1 || rl_gid(ctx_of(context), (int)index, &g, &t))
		return -1;
	*type = t == IBV_GID_TYPE_ROCE_V2 ? 1 : 0;
	return 0;
}

int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port, uint32_t index, struct ibv_gid_entry *entry,
		      uint32_t flags, size_t entry_size)
{
	struct ibv_gid_entry e;
	enum ibv_gid_type t;

	(void)flags;
	if (port != 1 || index > 3)
		return EINVAL;
	memset(&e, 0, sizeof(e));
	rl_gid(ctx_of(context), (int)index, &e.gid, &t);
	e.gid_index = index;
	e.port_num = 1;
	e.gid_type = t == IBV_GID_TYPE_ROCE_V2 ? IBV_GID_TYPE_ROCE_V2 : IBV_GID_TYPE_IB;
	e.ndev_ifindex = 0;
	memcpy(entry, &e, entry_size < sizeof(e) ? entry_size : sizeof(e));
	return 0;
}

ssize_t _ibv_query_gid_table(struct ibv_context *context, struct ibv_gid_entry *entries, size_t max_entries,
			     uint32_t flags, size_t entry_size)
{
	size_t i;
	for (i = 0; i < 4 && i < max_entries; i++)
		_ibv_query_gid_ex(context, 1, i, (struct ibv_gid_entry *)((char *)entries + i * entry_size), flags,
				  entry_size);
	return (ssize_t)i;
}

int ibv_query_pkey(struct ibv_context *context, uint8_t port, int index, __be16 *pkey)
{
	(void)context;
	if (port != 1 || index != 0)
		return -1;
	*pkey = htons(0xffff);
	return 0;
}

int ibv_get_pkey_index(struct ibv_context *context, uint8_t port, __be16 pkey)
{
	(void)context;
	return port == 1 && pkey == htons(0xffff) ? 0 : -1;
}

/* ---- protection domains and memory ---- */

struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	struct rl_ctx *c = ctx_of(context);
	struct rl_handle_reply r;
	struct rl_pd *p;

	if (rl_call(c, RL_OP_ALLOC_PD, 0, NULL, 0, NULL, 0, NULL, 0, &r, sizeof(r)))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	p->pd.context = context;
	p->pd.handle = r.handle;
	p->h = r.handle;
	return &p->pd;
}

int ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct rl_pd *p = (struct rl_pd *)pd;
	int err = rl_call(ctx_of(pd->context), RL_OP_DEALLOC_PD, p->h, NULL, 0, NULL, 0, NULL, 0, NULL, 0);
	if (err == ENODEV)
		err = 0;
	if (!err)
		free(p);
	return err;
}

/* rl_seg_new moves [start, end) onto a fresh memfd: its bytes are copied
 * and the memfd is mapped over the same addresses. */
static struct rl_seg *rl_seg_new(uint64_t start, uint64_t end)
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

	if (!addr || length == 0) {
		errno = EINVAL;
		return NULL;
	}
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) && !(access & IBV_ACCESS_LOCAL_WRITE)) {
		errno = EINVAL; /* as the IB spec requires */
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
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
	if (iova != (uint64_t)addr) {
		errno = EOPNOTSUPP;
		return NULL;
	}
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
	int err = rl_call(c, RL_OP_DEREG_MR, m->h, NULL, 0, NULL, 0, NULL, 0, NULL, 0);

	if (err == ENODEV)
		err = 0;
	if (err)
		return err;
	pthread_mutex_lock(&c->seg_lock);
	rl_unref(c, m->segs, m->nsegs);
	pthread_mutex_unlock(&c->seg_lock);
	free(m);
	return 0;
}

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
	if (cqe <= 0 || cqe > (1 << 22)) {
		errno = EINVAL;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (!q) {
		errno = ENOMEM;
		return NULL;
	}
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
	int err = rl_call(c, RL_OP_DESTROY_CQ, q->h, NULL, 0, NULL, 0, NULL, 0, NULL, 0);

	if (err == ENODEV)
		err = 0;
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
static bool rl_node_alive(struct rl_ctx *c)
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

static struct rl_qp *rl_qp_list[4096];
static pthread_mutex_t rl_qp_list_lock = PTHREAD_MUTEX_INITIALIZER;

/* rl_report_death gives each QP on cq one error completion: the program
 * sees its transfer fail as a NIC's retries running out would. */
static int rl_report_death(struct rl_cq *q, int n, struct ibv_wc *wc)
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

static int rl_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
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

static int rl_req_notify_cq(struct ibv_cq *cq, int solicited)
{
	(void)solicited;
	((struct rl_cq *)cq)->armed = true;
	return 0;
}

static bool rl_cq_ready(struct rl_cq *q)
{
	uint32_t head = __atomic_load_n((uint32_t *)(q->ring + RL_RING_HEAD), __ATOMIC_ACQUIRE);
	return head != *(uint32_t *)(q->ring + RL_RING_TAIL);
}

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	struct rl_channel *ch = calloc(1, sizeof(*ch));
	if (!ch) {
		errno = ENOMEM;
		return NULL;
	}
	if (pipe2(ch->pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
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

/* ibv_get_cq_event waits for an armed CQ of the channel to hold a
 * completion. Completions arrive in shared memory, not as events, so
 * it checks the rings every 50 µs. */
int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
	struct rl_ctx *c = ctx_of(channel->context);
	unsigned spins = 0;

	for (;;) {
		struct rl_cq *q;
		pthread_mutex_lock(&c->cq_lock);
		for (q = c->cqs; q; q = q->next)
			if (q->cq.channel == channel && q->armed && (rl_cq_ready(q) || c->dead)) {
				q->armed = false;
				*cq = &q->cq;
				*cq_context = q->cq.cq_context;
				pthread_mutex_unlock(&c->cq_lock);
				return 0;
			}
		pthread_mutex_unlock(&c->cq_lock);
		if (++spins % 2000 == 0 && !rl_node_alive(c))
			continue; /* the next pass reports the dead CQs */
		struct timespec ts = { 0, 50000 };
		nanosleep(&ts, NULL);
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

/* ---- queue pairs ---- */

static void rl_wr_start(struct ibv_qp_ex *qx);
static int rl_wr_complete(struct ibv_qp_ex *qx);
static void rl_wr_abort(struct ibv_qp_ex *qx);
static void rl_wr_send(struct ibv_qp_ex *qx);
static void rl_wr_send_imm(struct ibv_qp_ex *qx, __be32 imm);
static void rl_wr_rdma_write(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr);
static void rl_wr_rdma_write_imm(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr, __be32 imm);
static void rl_wr_rdma_read(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr);
static void rl_wr_set_sge(struct ibv_qp_ex *qx, uint32_t lkey, uint64_t addr, uint32_t len);
static void rl_wr_set_sge_list(struct ibv_qp_ex *qx, size_t n, const struct ibv_sge *sg);
static void rl_wr_set_inline_data(struct ibv_qp_ex *qx, void *addr, size_t len);
static void rl_wr_set_inline_data_list(struct ibv_qp_ex *qx, size_t n, const struct ibv_data_buf *b);
static void rl_wr_unsupported_atomic(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr, uint64_t a, uint64_t b);
static void rl_wr_unsupported_fadd(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr, uint64_t a);
static void rl_wr_unsupported_ud(struct ibv_qp_ex *qx, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey);
static void rl_wr_unsupported_u32(struct ibv_qp_ex *qx, uint32_t v);

static struct ibv_qp *rl_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *a)
{
	struct rl_ctx *c = ctx_of(context);
	struct rl_create_qp req = { 0 };
	struct rl_qp_reply r;
	struct rl_qp *p;
	int i;

	if (!(a->comp_mask & IBV_QP_INIT_ATTR_PD) || !a->pd || !a->send_cq || !a->recv_cq) {
		errno = EINVAL;
		return NULL;
	}
	if (a->qp_type != IBV_QPT_RC) {
		rl_warn("only RC QPs are supported (asked for type %d)", a->qp_type);
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (a->srq) {
		rl_warn("shared receive queues are not supported");
		errno = EOPNOTSUPP;
		return NULL;
	}
	if ((a->comp_mask & ~(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)) ||
	    ((a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	     (a->send_ops_flags & ~(uint64_t)(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
					      IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
					      IBV_QP_EX_WITH_RDMA_READ)))) {
		rl_warn("unsupported QP attributes (comp_mask %#x): atomics, TSO, MW and XRC are not modelled",
			a->comp_mask);
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (a->cap.max_send_sge > 1 || a->cap.max_recv_sge > 1 || a->cap.max_inline_data > RL_MAX_INLINE ||
	    a->cap.max_send_wr > 32768 || a->cap.max_recv_wr > 32768) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	req.pd = ((struct rl_pd *)a->pd)->h;
	req.send_cq = ((struct rl_cq *)a->send_cq)->h;
	req.recv_cq = ((struct rl_cq *)a->recv_cq)->h;
	req.max_send_wr = a->cap.max_send_wr;
	req.max_recv_wr = a->cap.max_recv_wr;
	req.max_inline = a->cap.max_inline_data;
	req.sq_sig_all = (uint32_t)a->sq_sig_all;
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
	q->handle = r.handle;
	q->qp_num = r.qpn;
	q->state = IBV_QPS_RESET;
	q->qp_type = IBV_QPT_RC;
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
	p->qpx.wr_atomic_cmp_swp = rl_wr_unsupported_atomic;
	p->qpx.wr_atomic_fetch_add = rl_wr_unsupported_fadd;
	p->qpx.wr_set_ud_addr = rl_wr_unsupported_ud;
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
	int err = rl_call(ctx_of(qp->context), RL_OP_DESTROY_QP, p->h, NULL, 0, NULL, 0, NULL, 0, NULL, 0);
	int i;

	if (err == ENODEV)
		err = 0;
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

/* rl_add_wr appends one send WR (wr_lock held). inline data, if any, is
 * copied from the gather list. */
static int rl_add_wr(struct rl_qp *p, const struct rl_send_wr *w, const struct ibv_sge *sg, int nsg)
{
	struct rl_send_wr *d;
	int err, i;

	if (p->nbatch == RL_BATCH || (w->flags & RL_WR_INLINE && p->inl_len + RL_MAX_INLINE > sizeof(p->inl)))
		if ((err = rl_flush(p)))
			return err;
	d = &p->batch[p->nbatch];
	*d = *w;
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
	} else if (nsg > 1) {
		return EINVAL;
	} else if (nsg == 1) {
		d->addr = sg[0].addr;
		d->length = sg[0].length;
		d->lkey = sg[0].lkey;
	}
	p->nbatch++;
	p->sent = true;
	p->last_send_id = w->wr_id;
	return 0;
}

static int rl_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
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
		default:
			err = EOPNOTSUPP;
			break;
		}
		if (!err) {
			if ((wr->send_flags & IBV_SEND_SIGNALED) || p->sq_sig_all)
				w.flags |= RL_WR_SIGNALED;
			if ((wr->send_flags & IBV_SEND_INLINE) && wr->opcode != IBV_WR_RDMA_READ)
				w.flags |= RL_WR_INLINE;
			err = rl_add_wr(p, &w, wr->sg_list, wr->num_sge);
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

static int rl_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct rl_qp *p = (struct rl_qp *)qp;
	struct {
		struct rl_post h;
		struct rl_recv_wr w[RL_BATCH];
	} m;
	int err = 0;

	if (p->state == IBV_QPS_RESET || p->state == IBV_QPS_ERR) {
		*bad = wr;
		return EINVAL;
	}
	while (wr && !err) {
		m.h.n = 0;
		for (; wr && m.h.n < RL_BATCH; wr = wr->next) {
			struct rl_recv_wr *w = &m.w[m.h.n];
			if (wr->num_sge > 1) {
				err = EINVAL;
				*bad = wr;
				break;
			}
			memset(w, 0, sizeof(*w));
			w->wr_id = wr->wr_id;
			if (wr->num_sge == 1) {
				w->addr = wr->sg_list[0].addr;
				w->length = wr->sg_list[0].length;
				w->lkey = wr->sg_list[0].lkey;
			}
			m.h.n++;
			p->received = true;
			p->last_recv_id = wr->wr_id;
		}
		if (m.h.n > 0) {
			int e = rl_post(ctx_of(qp->context), RL_OP_POST_RECV, p->h, &m,
					sizeof(m.h) + sizeof(m.w[0]) * m.h.n, NULL, 0);
			if (e && !err) {
				err = e;
				*bad = wr;
			}
		}
	}
	return err;
}

static int rl_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	(void)srq;
	*bad = wr;
	return EOPNOTSUPP;
}

/* The new post-send API (struct ibv_qp_ex): WRs are collected between
 * wr_start and wr_complete and sent as one batch. */

static void rl_wr_start(struct ibv_qp_ex *qx)
{
	struct rl_qp *p = (struct rl_qp *)qx;
	pthread_mutex_lock(&p->wr_lock);
	p->wr_err = p->state == IBV_QPS_RTS ? 0 : EINVAL;
}

static int rl_wr_complete(struct ibv_qp_ex *qx)
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

static void rl_wr_abort(struct ibv_qp_ex *qx)
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

static void rl_wr_send(struct ibv_qp_ex *qx)
{
	rl_wr_new(qx, IBV_WR_SEND, 0, 0, 0, 0);
}

static void rl_wr_send_imm(struct ibv_qp_ex *qx, __be32 imm)
{
	rl_wr_new(qx, IBV_WR_SEND_WITH_IMM, 0, 0, imm, 1);
}

static void rl_wr_rdma_write(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr)
{
	rl_wr_new(qx, IBV_WR_RDMA_WRITE, rkey, raddr, 0, 0);
}

static void rl_wr_rdma_write_imm(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr, __be32 imm)
{
	rl_wr_new(qx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, raddr, imm, 1);
}

static void rl_wr_rdma_read(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr)
{
	rl_wr_new(qx, IBV_WR_RDMA_READ, rkey, raddr, 0, 0);
}

static void rl_wr_set_sge(struct ibv_qp_ex *qx, uint32_t lkey, uint64_t addr, uint32_t len)
{
	struct rl_send_wr *w = rl_wr_cur(qx);
	if (!w)
		return;
	w->lkey = lkey;
	w->addr = addr;
	w->length = len;
}

static void rl_wr_set_sge_list(struct ibv_qp_ex *qx, size_t n, const struct ibv_sge *sg)
{
	struct rl_qp *p = (struct rl_qp *)qx;
	if (n > 1) {
		p->wr_err = EINVAL;
		return;
	}
	if (n == 1)
		rl_wr_set_sge(qx, sg[0].lkey, sg[0].addr, sg[0].length);
}

static void rl_wr_set_inline_data_list(struct ibv_qp_ex *qx, size_t n, const struct ibv_data_buf *b)
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

static void rl_wr_set_inline_data(struct ibv_qp_ex *qx, void *addr, size_t len)
{
	struct ibv_data_buf b = { .addr = addr, .length = len };
	rl_wr_set_inline_data_list(qx, 1, &b);
}

static void rl_wr_unsupported_atomic(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr, uint64_t a, uint64_t b)
{
	(void)rkey, (void)raddr, (void)a, (void)b;
	((struct rl_qp *)qx)->wr_err = EOPNOTSUPP;
}

static void rl_wr_unsupported_fadd(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr, uint64_t a)
{
	(void)rkey, (void)raddr, (void)a;
	((struct rl_qp *)qx)->wr_err = EOPNOTSUPP;
}

static void rl_wr_unsupported_ud(struct ibv_qp_ex *qx, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey)
{
	(void)ah, (void)qpn, (void)qkey;
	((struct rl_qp *)qx)->wr_err = EOPNOTSUPP;
}

static void rl_wr_unsupported_u32(struct ibv_qp_ex *qx, uint32_t v)
{
	(void)v;
	((struct rl_qp *)qx)->wr_err = EOPNOTSUPP;
}

/* ---- small helpers programs call ---- */

const char *ibv_wc_status_str(enum ibv_wc_status status)
{
	static const char *const s[] = {
		[IBV_WC_SUCCESS] = "success",
		[IBV_WC_LOC_LEN_ERR] = "local length error",
		[IBV_WC_LOC_QP_OP_ERR] = "local QP operation error",
		[IBV_WC_LOC_EEC_OP_ERR] = "local EE context operation error",
		[IBV_WC_LOC_PROT_ERR] = "local protection error",
		[IBV_WC_WR_FLUSH_ERR] = "Work Request Flushed Error",
		[IBV_WC_MW_BIND_ERR] = "memory management operation error",
		[IBV_WC_BAD_RESP_ERR] = "bad response error",
		[IBV_WC_LOC_ACCESS_ERR] = "local access error",
		[IBV_WC_REM_INV_REQ_ERR] = "remote invalid request error",
		[IBV_WC_REM_ACCESS_ERR] = "remote access error",
		[IBV_WC_REM_OP_ERR] = "remote operation error",
		[IBV_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
		[IBV_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
		[IBV_WC_LOC_RDD_VIOL_ERR] = "local RDD violation error",
		[IBV_WC_REM_INV_RD_REQ_ERR] = "remote invalid RD request",
		[IBV_WC_REM_ABORT_ERR] = "aborted error",
		[IBV_WC_INV_EECN_ERR] = "invalid EE context number",
		[IBV_WC_INV_EEC_STATE_ERR] = "invalid EE context state",
		[IBV_WC_FATAL_ERR] = "fatal error",
		[IBV_WC_RESP_TIMEOUT_ERR] = "response timeout error",
		[IBV_WC_GENERAL_ERR] = "general error",
		[IBV_WC_TM_ERR] = "TM error",
		[IBV_WC_TM_RNDV_INCOMPLETE] = "TM software rendezvous",
	};
	if ((unsigned)status < sizeof(s) / sizeof(s[0]) && s[status])
		return s[status];
	return "unknown";
}

const char *ibv_node_type_str(enum ibv_node_type t)
{
	return t == IBV_NODE_CA ? "InfiniBand channel adapter" : "unknown";
}

const char *ibv_port_state_str(enum ibv_port_state s)
{
	static const char *const n[] = { "NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER" };
	return (unsigned)s < 6 ? n[s] : "unknown";
}

const char *ibv_event_type_str(enum ibv_event_type e)
{
	return e == IBV_EVENT_DEVICE_FATAL ? "local catastrophic error" : "unknown";
}

int ibv_rate_to_mult(enum ibv_rate rate)
{
	(void)rate;
	return 1;
}

int ibv_fork_init(void)
{
	return 0;
}

enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

int ibv_dontfork_range(void *base, size_t size)
{
	(void)base, (void)size;
	return 0;
}

int ibv_dofork_range(void *base, size_t size)
{
	(void)base, (void)size;
	return 0;
}

int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	(void)dir, (void)file, (void)buf, (void)size;
	errno = ENOENT;
	return -1;
}

const char *ibv_get_sysfs_path(void)
{
	return "/sys";
}

int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp, (void)ece;
	return EOPNOTSUPP;
}

int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp, (void)ece;
	return EOPNOTSUPP;
}

int ibv_resolve_eth_l2_from_gid(struct ibv_context *context, struct ibv_ah_attr *attr, uint8_t eth_mac[6],
				uint16_t *vid)
{
	(void)context, (void)attr;
	memset(eth_mac, 0, 6);
	if (vid)
		*vid = 0xffff;
	return EOPNOTSUPP;
}
