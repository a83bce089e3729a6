/*
 * rocelab's librdmacm.so.1: rdma-core's rdma_cm ABI for programs on a lab
 * host, whose machine has no kernel RDMA stack (no /dev/infiniband/rdma_cm).
 * A process's requests go to the host's endpoint node over the verbs
 * socket ($ROCELAB_VERBS_SOCKET, like rocelab's libibverbs); the node's
 * NIC models speak the Communication Manager's MADs across the fabric.
 * Each event channel is one end of a socketpair whose other end the node
 * writes events to, so a program may poll its fd. QPs are the programs'
 * own, made and moved through the public verbs API (rocelab's
 * libibverbs): this library readies them as rdma_cm does (qp.c).
 */
#include "rdmacm.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/un.h>
#include <unistd.h>

static pthread_mutex_t cm_lock = PTHREAD_MUTEX_INITIALIZER; /* the connection, one call at a time */
static int cm_fd = -1;
static pthread_mutex_t ids_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rl_cm_id *ids;

static void rl_cm_warn(const char *what)
{
	static bool said;

	if (!said) {
		said = true;
		fprintf(stderr, "rocelab librdmacm: %s\n", what);
	}
}

static int cm_connect(void)
{
	const char *path = getenv("ROCELAB_VERBS_SOCKET");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct {
		struct rl_hdr h;
		uint32_t v;
	} hello = {{RL_OP_HELLO, 0, 4, 0}, RL_PROTO_VERSION};
	uint8_t buf[sizeof(struct rl_reply) + 64];
	int fd;

	if (!path || !*path) {
		rl_cm_warn("ROCELAB_VERBS_SOCKET is not set: run the program with `rocelab exec LAB HOST -- …`");
		return -ENODEV;
	}
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || send(fd, &hello, sizeof(hello), MSG_NOSIGNAL) < 0 ||
	    recv(fd, buf, sizeof(buf), 0) < (ssize_t)sizeof(struct rl_reply) || ((struct rl_reply *)buf)->err) {
		int e = errno ? errno : EPROTO;

		close(fd);
		rl_cm_warn("the lab host's endpoint node does not answer on $ROCELAB_VERBS_SOCKET (is the lab up?)");
		return -(e == ENOENT || e == ECONNREFUSED ? ENODEV : e);
	}
	return fd;
}

/* rl_cm_call sends a request to the node and reads its reply into out:
 * 0, or -1 with errno set. fd (>= 0) is passed along. */
int rl_cm_call(uint32_t op, uint32_t h, const void *body, size_t len, int fd, void *out, size_t out_cap)
{
	struct rl_hdr hdr = {op, h, (uint32_t)len, 0};
	struct iovec iov[2] = {{&hdr, sizeof(hdr)}, {(void *)body, len}};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr m = {.msg_iov = iov, .msg_iovlen = len ? 2 : 1};
	struct {
		struct rl_reply r;
		uint8_t body[1024];
	} rep;
	ssize_t n;
	int err;

	if (fd >= 0) {
		struct cmsghdr *c;

		m.msg_control = u.buf;
		m.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	pthread_mutex_lock(&cm_lock);
	if (cm_fd < 0) {
		cm_fd = cm_connect();
		if (cm_fd < 0) {
			err = -cm_fd;
			cm_fd = -1;
			pthread_mutex_unlock(&cm_lock);
			errno = err;
			return -1;
		}
	}
	if (sendmsg(cm_fd, &m, MSG_NOSIGNAL) < 0) {
		pthread_mutex_unlock(&cm_lock);
		errno = ENODEV;
		return -1;
	}
	do
		n = recv(cm_fd, &rep, sizeof(rep), 0);
	while (n < 0 && errno == EINTR);
	pthread_mutex_unlock(&cm_lock);
	if (n < (ssize_t)sizeof(struct rl_reply)) {
		errno = ENODEV;
		return -1;
	}
	if (rep.r.err) {
		rep.r.msg[sizeof(rep.r.msg) - 1] = 0;
		if (getenv("ROCELAB_VERBS_DEBUG"))
			fprintf(stderr, "rocelab librdmacm: %s\n", rep.r.msg);
		errno = rep.r.err;
		return -1;
	}
	if (out)
		memcpy(out, rep.body, (size_t)n - sizeof(struct rl_reply) < out_cap ? (size_t)n - sizeof(struct rl_reply) : out_cap);
	return 0;
}

struct rl_cm_id *rl_id_of(uint32_t h)
{
	struct rl_cm_id *p;

	pthread_mutex_lock(&ids_lock);
	for (p = ids; p && p->h != h; p = p->next)
		;
	pthread_mutex_unlock(&ids_lock);
	return p;
}

void rl_ids_add(struct rl_cm_id *p)
{
	pthread_mutex_lock(&ids_lock);
	p->next = ids;
	ids = p;
	pthread_mutex_unlock(&ids_lock);
}

static void ids_remove(struct rl_cm_id *p)
{
	struct rl_cm_id **pp;

	pthread_mutex_lock(&ids_lock);
	for (pp = &ids; *pp; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	}
	pthread_mutex_unlock(&ids_lock);
}

/* ---- addresses ---- */

void rl_addr_to_sockaddr(const struct rl_cm_addr *a, struct sockaddr_storage *ss)
{
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	static const uint8_t zero[12];

	memset(ss, 0, sizeof(*ss));
	if (a->family == AF_INET6 && memcmp(a->addr, mapped, 12) != 0) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(a->port);
		memcpy(&s6->sin6_addr, a->addr, 16);
		return;
	}
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

	s4->sin_family = AF_INET;
	s4->sin_port = htons(a->port);
	if (memcmp(a->addr, mapped, 12) == 0 || memcmp(a->addr, zero, 12) == 0)
		memcpy(&s4->sin_addr, a->addr + 12, 4);
}

int rl_sockaddr_to_addr(const struct sockaddr *sa, struct rl_cm_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (!sa)
		return 0;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;

		if (s4->sin_addr.s_addr != htonl(INADDR_ANY)) {
			a->addr[10] = a->addr[11] = 0xff;
			memcpy(a->addr + 12, &s4->sin_addr, 4);
		}
		a->port = ntohs(s4->sin_port);
		a->family = AF_INET;
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;

		memcpy(a->addr, &s6->sin6_addr, 16);
		a->port = ntohs(s6->sin6_port);
		a->family = AF_INET6;
		return 0;
	}
	if (sa->sa_family == AF_UNSPEC) {
		a->family = AF_INET;
		return 0;
	}
	errno = EAFNOSUPPORT;
	return -1;
}

/* ---- devices ---- */

static pthread_mutex_t dev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ibv_context **devs;
static struct ibv_pd **pds;
static uint8_t (*dev_gids)[16];
static int ndevs;

static void open_devices(void)
{
	struct ibv_device **list;
	int i, n;

	if (devs)
		return;
	list = ibv_get_device_list(&n);
	if (!list)
		n = 0;
	devs = calloc(n + 1, sizeof(*devs));
	pds = calloc(n + 1, sizeof(*pds));
	dev_gids = calloc(n + 1, sizeof(*dev_gids));
	for (i = 0; i < n && devs; i++) {
		union ibv_gid g;

		devs[ndevs] = ibv_open_device(list[i]);
		if (!devs[ndevs])
			continue;
		if (ibv_query_gid(devs[ndevs], 1, RL_GID_IPV4, &g) == 0)
			memcpy(dev_gids[ndevs], g.raw, 16);
		ndevs++;
	}
	if (list)
		ibv_free_device_list(list);
}

/* rl_device_of is the open device whose IPv4 address is a's. */
struct ibv_context *rl_device_of(const struct rl_cm_addr *a)
{
	struct ibv_context *ctx = NULL;
	int i;

	pthread_mutex_lock(&dev_lock);
	open_devices();
	for (i = 0; i < ndevs; i++) {
		if (memcmp(dev_gids[i], a->addr, 16) == 0) {
			ctx = devs[i];
			break;
		}
	}
	pthread_mutex_unlock(&dev_lock);
	return ctx;
}

struct ibv_pd *rl_default_pd(struct ibv_context *ctx)
{
	struct ibv_pd *pd = NULL;
	int i;

	pthread_mutex_lock(&dev_lock);
	for (i = 0; i < ndevs; i++) {
		if (devs[i] == ctx) {
			if (!pds[i])
				pds[i] = ibv_alloc_pd(ctx);
			pd = pds[i];
		}
	}
	pthread_mutex_unlock(&dev_lock);
	return pd;
}

struct ibv_context **rdma_get_devices(int *num_devices)
{
	struct ibv_context **out;

	pthread_mutex_lock(&dev_lock);
	open_devices();
	out = calloc(ndevs + 1, sizeof(*out));
	if (out)
		memcpy(out, devs, ndevs * sizeof(*out));
	if (num_devices)
		*num_devices = out ? ndevs : 0;
	pthread_mutex_unlock(&dev_lock);
	if (!out)
		errno = ENOMEM;
	return out;
}

void rdma_free_devices(struct ibv_context **list)
{
	free(list);
}

/* ---- event channels ---- */

struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct rdma_event_channel *ch;
	uint32_t reply[2];
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return NULL;
	if (rl_cm_call(RL_OP_CM_CHANNEL, 0, NULL, 0, sv[1], reply, sizeof(reply)) < 0) {
		int e = errno;

		close(sv[0]);
		close(sv[1]);
		errno = e;
		return NULL;
	}
	close(sv[1]);
	ch = calloc(1, sizeof(*ch) + sizeof(uint32_t));
	if (!ch) {
		close(sv[0]);
		errno = ENOMEM;
		return NULL;
	}
	ch->fd = sv[0];
	memcpy(ch + 1, &reply[0], sizeof(uint32_t)); /* the node's handle, after the public struct */
	return ch;
}

static uint32_t channel_handle(struct rdma_event_channel *ch)
{
	uint32_t h;

	memcpy(&h, ch + 1, sizeof(h));
	return h;
}

void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	if (!channel)
		return;
	rl_cm_call(RL_OP_CM_DESTROY_CHANNEL, channel_handle(channel), NULL, 0, -1, NULL, 0);
	close(channel->fd);
	free(channel);
}

/* ---- ids ---- */

/* channel_or_own is ch, or for a synchronous id (no channel) a channel of
 * its own, made here and put in *own: NULL when it cannot be made. */
static struct rdma_event_channel *channel_or_own(struct rdma_event_channel *ch, struct rdma_event_channel **own)
{
	if (ch)
		return ch;
	*own = rdma_create_event_channel();
	return *own;
}

static struct rl_cm_id *new_id(struct rdma_event_channel *ch, void *context, enum rdma_port_space ps, enum ibv_qp_type qpt)
{
	struct rl_cm_id *p = calloc(1, sizeof(*p));

	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	p->id.channel = ch;
	p->id.context = context;
	p->id.ps = ps;
	p->id.qp_type = qpt;
	p->nic = -1;
	p->psn = (uint32_t)random() & 0xffffff;
	return p;
}

static int create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context, enum rdma_port_space ps,
		     enum ibv_qp_type qpt)
{
	struct rl_cm_create_id req = {0};
	struct rdma_event_channel *sync = NULL;
	struct rl_cm_id *p;
	uint32_t reply[2];

	if (!id) {
		errno = EINVAL;
		return -1;
	}
	channel = channel_or_own(channel, &sync);
	if (!channel)
		return -1;
	req.channel = channel_handle(channel);
	req.ps = ps;
	req.qp_type = qpt;
	if (rl_cm_call(RL_OP_CM_CREATE_ID, 0, &req, sizeof(req), -1, reply, sizeof(reply)) < 0) {
		if (sync)
			rdma_destroy_event_channel(sync);
		return -1;
	}
	p = new_id(channel, context, ps, qpt);
	if (!p)
		return -1;
	p->h = reply[0];
	p->sync = sync;
	rl_ids_add(p);
	*id = &p->id;
	return 0;
}

int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context, enum rdma_port_space ps)
{
	return create_id(channel, id, context, ps, ps == RDMA_PS_UDP || ps == RDMA_PS_IPOIB ? IBV_QPT_UD : IBV_QPT_RC);
}

int rdma_destroy_id(struct rdma_cm_id *id)
{
	struct rl_cm_id *p = (struct rl_cm_id *)id;

	rl_cm_call(RL_OP_CM_DESTROY_ID, p->h, NULL, 0, -1, NULL, 0);
	ids_remove(p);
	if (p->sync)
		rdma_destroy_event_channel(p->sync);
	free(id->route.path_rec);
	free(p->ep_attr);
	free(p);
	return 0;
}

static void set_bound(struct rl_cm_id *p, const struct rl_cm_bound *b)
{
	p->nic = b->nic;
	rl_addr_to_sockaddr(&b->src, &p->id.route.addr.src_storage);
	if (b->nic >= 0) {
		p->id.verbs = rl_device_of(&b->src);
		p->id.port_num = 1;
		memcpy(p->id.route.addr.addr.ibaddr.sgid.raw, b->src.addr, 16);
		p->id.route.addr.addr.ibaddr.pkey = htons(0xffff);
	}
}

int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct rl_cm_id *p = (struct rl_cm_id *)id;
	struct rl_cm_addr a;
	struct rl_cm_bound b;

	if (!addr || rl_sockaddr_to_addr(addr, &a) < 0) {
		errno = addr ? errno : EINVAL;
		return -1;
	}
	if (rl_cm_call(RL_OP_CM_BIND, p->h, &a, sizeof(a), -1, &b, sizeof(b)) < 0)
		return -1;
	set_bound(p, &b);
	return 0;
}

/* sync_wait: a synchronous id waits for the event its call started. */
static int sync_wait(struct rl_cm_id *p, enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev;
	int ret;

	if (!p->sync)
		return 0;
	ret = rl_wait_event(p, want, &ev);
	if (ret == 0)
		rdma_ack_cm_event(ev);
	return ret;
}

int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr, struct sockaddr *dst_addr, int timeout_ms)
{
	struct rl_cm_id *p = (struct rl_cm_id *)id;
	struct rl_cm_resolve r = {0};
	struct rl_cm_bound b;

	if (!dst_addr || rl_sockaddr_to_addr(src_addr, &r.src) < 0 || rl_sockaddr_to_addr(dst_addr, &r.dst) < 0) {
		errno = dst_addr ? errno : EINVAL;
		return -1;
	}
	r.timeout_ms = timeout_ms;
	if (rl_cm_call(RL_OP_CM_RESOLVE_ADDR, p->h, &r, sizeof(r), -1, &b, sizeof(b)) < 0)
		return -1;
	set_bound(p, &b);
	rl_addr_to_sockaddr(&b.dst, &id->route.addr.dst_storage);
	memcpy(id->route.addr.addr.ibaddr.dgid.raw, b.dst.addr, 16);
	return sync_wait(p, RDMA_CM_EVENT_ADDR_RESOLVED);
}

int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	struct rl_cm_id *p = (struct rl_cm_id *)id;

	(void)timeout_ms;
	if (rl_cm_call(RL_OP_CM_RESOLVE_ROUTE, p->h, NULL, 0, -1, NULL, 0) < 0)
		return -1;
	return sync_wait(p, RDMA_CM_EVENT_ROUTE_RESOLVED);
}

int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	(void)backlog;
	return rl_cm_call(RL_OP_CM_LISTEN, ((struct rl_cm_id *)id)->h, NULL, 0, -1, NULL, 0);
}

static void conn_from_param(struct rl_cm_conn *c, const struct rdma_conn_param *param)
{
	if (!param)
		return;
	c->responder_resources = param->responder_resources;
	c->initiator_depth = param->initiator_depth;
	c->retry_count = param->retry_count;
	c->rnr_retry_count = param->rnr_retry_count;
	c->srq = param->srq;
	if (param->private_data && param->private_data_len) {
		c->private_len = param->private_data_len;
		memcpy(c->private_data, param->private_data, param->private_data_len);
	}
}

/* take_side keeps what this side asks for in p, clamped to the device
 * (RDMA_MAX_RESP_RES and RDMA_MAX_INIT_DEPTH mean its maximum), and puts
 * the clamped values back into c. */
static void take_side(struct rl_cm_id *p, struct rl_cm_conn *c)
{
	p->rr = c->responder_resources;
	p->depth = c->initiator_depth;
	p->retry = c->retry_count;
	p->rnr = c->rnr_retry_count;
	rl_clamp(p);
	c->responder_resources = p->rr;
	c->initiator_depth = p->depth;
	c->retry_count = p->retry;
	c->rnr_retry_count = p->rnr;
}

int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	struct rl_cm_id *p = (struct rl_cm_id *)id;
	struct rl_cm_conn c = {0};

	conn_from_param(&c, conn_param);
	/* what a REQ (SIDR_REQ) holds after rdma_cm's 36-byte IP header */
	if (c.private_len > (id->qp_type == IBV_QPT_UD ? 180u : 56u)) {
		errno = EINVAL;
		return -1;
	}
	if (!conn_param)
		c.retry_count = c.rnr_retry_count = 7;
	c.qpn = id->qp ? id->qp->qp_num : conn_param ? conn_param->qp_num : 0;
	c.psn = p->psn;
	take_side(p, &c);
	if (rl_cm_call(RL_OP_CM_CONNECT, p->h, &c, sizeof(c), -1, NULL, 0) < 0)
		return -1;
	return sync_wait(p, RDMA_CM_EVENT_ESTABLISHED);
}

int rdma_establish(struct rdma_cm_id *id)
{
	return rl_cm_call(RL_OP_CM_ESTABLISH, ((struct rl_cm_id *)id)->h, NULL, 0, -1, NULL, 0);
}

int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	struct rl_cm_id *p = (struct rl_cm_id *)id;
	struct rl_cm_conn c = {0};

	conn_from_param(&c, conn_param);
	if (c.private_len > (id->qp_type == IBV_QPT_UD ? 136u : 196u)) { /* a SIDR_REP's, a REP's */
		errno = EINVAL;
		return -1;
	}
	if (!conn_param) {
		c.responder_resources = p->remote_depth;
		c.initiator_depth = p->remote_rr;
		c.rnr_retry_count = 7;
	}
	c.retry_count = p->retry ? p->retry : 7;
	take_side(p, &c);
	c.qpn = id->qp ? id->qp->qp_num : conn_param ? conn_param->qp_num : 0;
	c.psn = p->psn;
	c.qkey = RDMA_UDP_QKEY;
	if (id->qp && id->qp_type != IBV_QPT_UD && rl_qp_connect(p) < 0)
		return -1;
	if (rl_cm_call(RL_OP_CM_ACCEPT, p->h, &c, sizeof(c), -1, NULL, 0) < 0)
		return -1;
	if (p->sync && id->qp_type != IBV_QPT_UD)
		return sync_wait(p, RDMA_CM_EVENT_ESTABLISHED);
	return 0;
}

int rdma_reject(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	struct rl_cm_conn c = {0};

	if (private_data && private_data_len) {
		if (private_data_len > 148) { /* a REJ's */
			errno = EINVAL;
			return -1;
		}
		c.private_len = private_data_len;
		memcpy(c.private_data, private_data, private_data_len);
	}
	return rl_cm_call(RL_OP_CM_REJECT, ((struct rl_cm_id *)id)->h, &c, sizeof(c), -1, NULL, 0);
}

int rdma_reject_ece(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	return rdma_reject(id, private_data, private_data_len);
}

int rdma_disconnect(struct rdma_cm_id *id)
{
	struct rl_cm_id *p = (struct rl_cm_id *)id;

	rl_qp_error(p);
	if (rl_cm_call(RL_OP_CM_DISCONNECT, p->h, NULL, 0, -1, NULL, 0) < 0) {
		errno = errno == ENOTCONN ? EINVAL : errno;
		return -1;
	}
	return 0;
}

int rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *channel)
{
	struct rl_cm_id *p = (struct rl_cm_id *)id;
	struct rl_cm_create_id req = {0};
	struct rdma_event_channel *sync = NULL;

	channel = channel_or_own(channel, &sync);
	if (!channel)
		return -1;
	req.channel = channel_handle(channel);
	if (rl_cm_call(RL_OP_CM_MIGRATE, p->h, &req, sizeof(req), -1, NULL, 0) < 0) {
		if (sync)
			rdma_destroy_event_channel(sync);
		return -1;
	}
	if (p->sync)
		rdma_destroy_event_channel(p->sync);
	p->sync = sync;
	id->channel = channel;
	return 0;
}
