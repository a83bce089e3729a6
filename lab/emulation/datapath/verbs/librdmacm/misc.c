/*
 * misc.c: address information, endpoints (the synchronous API), options,
 * and what the lab does not offer: multicast, ECE, rsockets.
 */
#include "rdmacm.h"

#include <poll.h>
#include <sys/select.h>
#include <rdma/rsocket.h>

/* ---- rdma_getaddrinfo ---- */

static struct sockaddr *dup_addr(const struct sockaddr *sa, socklen_t len)
{
	struct sockaddr *d = malloc(len);

	if (d)
		memcpy(d, sa, len);
	return d;
}

int rdma_getaddrinfo(const char *node, const char *service, const struct rdma_addrinfo *hints, struct rdma_addrinfo **res)
{
	struct rdma_addrinfo *r;
	struct addrinfo h = {0}, *ai = NULL, *a;
	int ret;

	if (!res || (!node && !service && !hints)) {
		errno = EINVAL;
		return -1;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		errno = ENOMEM;
		return -1;
	}
	r->ai_flags = hints ? hints->ai_flags & (RAI_PASSIVE | RAI_NUMERICHOST | RAI_NOROUTE | RAI_FAMILY) : 0;
	r->ai_port_space = hints && hints->ai_port_space ? hints->ai_port_space : RDMA_PS_TCP;
	r->ai_qp_type = hints && hints->ai_qp_type ? hints->ai_qp_type :
			r->ai_port_space == RDMA_PS_UDP ? IBV_QPT_UD : IBV_QPT_RC;
	r->ai_family = hints && hints->ai_family ? hints->ai_family : AF_INET;
	if (hints && hints->ai_src_addr && hints->ai_src_len) {
		r->ai_src_addr = dup_addr(hints->ai_src_addr, hints->ai_src_len);
		r->ai_src_len = hints->ai_src_len;
	}
	if (hints && hints->ai_dst_addr && hints->ai_dst_len) {
		r->ai_dst_addr = dup_addr(hints->ai_dst_addr, hints->ai_dst_len);
		r->ai_dst_len = hints->ai_dst_len;
	}
	if (node || service) {
		h.ai_family = hints && hints->ai_family ? hints->ai_family : AF_UNSPEC;
		h.ai_socktype = SOCK_STREAM;
		h.ai_flags = (r->ai_flags & RAI_NUMERICHOST ? AI_NUMERICHOST : 0) | (r->ai_flags & RAI_PASSIVE ? AI_PASSIVE : 0);
		ret = getaddrinfo(node, service, &h, &ai);
		if (ret) {
			rdma_freeaddrinfo(r);
			errno = ret == EAI_SYSTEM ? errno : ret == EAI_MEMORY ? ENOMEM : ENOENT;
			return ret;
		}
		for (a = ai; a && a->ai_family != AF_INET && a->ai_family != AF_INET6; a = a->ai_next)
			;
		if (!a) {
			freeaddrinfo(ai);
			rdma_freeaddrinfo(r);
			errno = EADDRNOTAVAIL;
			return EAI_NONAME;
		}
		r->ai_family = a->ai_family;
		if (r->ai_flags & RAI_PASSIVE) {
			free(r->ai_src_addr);
			r->ai_src_addr = dup_addr(a->ai_addr, a->ai_addrlen);
			r->ai_src_len = a->ai_addrlen;
		} else {
			free(r->ai_dst_addr);
			r->ai_dst_addr = dup_addr(a->ai_addr, a->ai_addrlen);
			r->ai_dst_len = a->ai_addrlen;
		}
		if (node && a->ai_canonname)
			r->ai_dst_canonname = strdup(a->ai_canonname);
		freeaddrinfo(ai);
	}
	if (r->ai_src_addr)
		r->ai_family = r->ai_src_addr->sa_family;
	*res = r;
	return 0;
}

void rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	struct rdma_addrinfo *next;

	for (; res; res = next) {
		next = res->ai_next;
		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_route);
		free(res->ai_connect);
		free(res);
	}
}

/* ---- endpoints ---- */

int rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res, struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cm;
	struct rl_cm_id *p;

	if (!id || !res) {
		errno = EINVAL;
		return -1;
	}
	if (rdma_create_id(NULL, &cm, NULL, res->ai_port_space) < 0)
		return -1;
	p = (struct rl_cm_id *)cm;
	cm->qp_type = res->ai_qp_type;
	if (res->ai_flags & RAI_PASSIVE) {
		if (rdma_bind_addr(cm, res->ai_src_addr) < 0)
			goto fail;
		if (qp_init_attr) {
			p->ep_attr = malloc(sizeof(*p->ep_attr));
			if (!p->ep_attr)
				goto fail;
			*p->ep_attr = *qp_init_attr;
			p->ep_pd = pd;
		}
		*id = cm;
		return 0;
	}
	if (rdma_resolve_addr(cm, res->ai_src_addr, res->ai_dst_addr, 2000) < 0 || rdma_resolve_route(cm, 2000) < 0)
		goto fail;
	if (qp_init_attr) {
		qp_init_attr->qp_type = res->ai_qp_type;
		if (rdma_create_qp(cm, pd, qp_init_attr) < 0)
			goto fail;
	}
	*id = cm;
	return 0;
fail:;
	int e = errno;

	rdma_destroy_id(cm);
	errno = e;
	return -1;
}

void rdma_destroy_ep(struct rdma_cm_id *id)
{
	rdma_destroy_qp(id);
	rdma_destroy_srq(id);
	rdma_destroy_id(id);
}

/* ---- options and ports ---- */

int rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval, size_t optlen)
{
	(void)id;
	(void)optval;
	(void)optlen;
	if (level == RDMA_OPTION_ID &&
	    (optname == RDMA_OPTION_ID_TOS || optname == RDMA_OPTION_ID_REUSEADDR || optname == RDMA_OPTION_ID_AFONLY ||
	     optname == RDMA_OPTION_ID_ACK_TIMEOUT))
		return 0; /* taken; the lab's CM keeps its own timeouts and class */
	errno = ENOSYS;
	return -1;
}

int rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	(void)id;
	(void)event;
	return 0;
}

static __be16 port_of(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_port;
	if (sa->sa_family == AF_INET6)
		return ((const struct sockaddr_in6 *)sa)->sin6_port;
	return 0;
}

__be16 rdma_get_src_port(struct rdma_cm_id *id)
{
	return port_of(&id->route.addr.src_addr);
}

__be16 rdma_get_dst_port(struct rdma_cm_id *id)
{
	return port_of(&id->route.addr.dst_addr);
}

/* ---- not in the lab: multicast, ECE ---- */

int rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr, void *context)
{
	(void)id;
	(void)addr;
	(void)context;
	errno = ENOSYS; /* the lab's switches forward no multicast */
	return -1;
}

int rdma_join_multicast_ex(struct rdma_cm_id *id, struct rdma_cm_join_mc_attr_ex *mc_join_attr, void *context)
{
	(void)mc_join_attr;
	return rdma_join_multicast(id, NULL, context);
}

int rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	(void)id;
	(void)addr;
	errno = EADDRNOTAVAIL;
	return -1;
}

int rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	(void)id;
	(void)ece;
	errno = EOPNOTSUPP;
	return -1;
}

int rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	(void)id;
	memset(ece, 0, sizeof(*ece));
	errno = EOPNOTSUPP;
	return -1;
}

/* ---- rsockets: not offered; every call fails with ENOSYS ---- */

static int rs_none(void)
{
	static bool said;

	if (!said) {
		said = true;
		fprintf(stderr, "rocelab librdmacm: rsockets are not supported in the lab (see docs/verbs.md)\n");
	}
	errno = ENOSYS;
	return -1;
}

int rsocket(int domain, int type, int protocol) { (void)domain; (void)type; (void)protocol; return rs_none(); }
int rbind(int s, const struct sockaddr *a, socklen_t l) { (void)s; (void)a; (void)l; return rs_none(); }
int rlisten(int s, int b) { (void)s; (void)b; return rs_none(); }
int raccept(int s, struct sockaddr *a, socklen_t *l) { (void)s; (void)a; (void)l; return rs_none(); }
int rconnect(int s, const struct sockaddr *a, socklen_t l) { (void)s; (void)a; (void)l; return rs_none(); }
int rshutdown(int s, int how) { (void)s; (void)how; return rs_none(); }
int rclose(int s) { (void)s; return rs_none(); }
ssize_t rrecv(int s, void *b, size_t n, int f) { (void)s; (void)b; (void)n; (void)f; return rs_none(); }
ssize_t rrecvfrom(int s, void *b, size_t n, int f, struct sockaddr *a, socklen_t *l)
{ (void)s; (void)b; (void)n; (void)f; (void)a; (void)l; return rs_none(); }
ssize_t rrecvmsg(int s, struct msghdr *m, int f) { (void)s; (void)m; (void)f; return rs_none(); }
ssize_t rsend(int s, const void *b, size_t n, int f) { (void)s; (void)b; (void)n; (void)f; return rs_none(); }
ssize_t rsendto(int s, const void *b, size_t n, int f, const struct sockaddr *a, socklen_t l)
{ (void)s; (void)b; (void)n; (void)f; (void)a; (void)l; return rs_none(); }
ssize_t rsendmsg(int s, const struct msghdr *m, int f) { (void)s; (void)m; (void)f; return rs_none(); }
ssize_t rread(int s, void *b, size_t n) { (void)s; (void)b; (void)n; return rs_none(); }
ssize_t rreadv(int s, const struct iovec *v, int n) { (void)s; (void)v; (void)n; return rs_none(); }
ssize_t rwrite(int s, const void *b, size_t n) { (void)s; (void)b; (void)n; return rs_none(); }
ssize_t rwritev(int s, const struct iovec *v, int n) { (void)s; (void)v; (void)n; return rs_none(); }
int rpoll(struct pollfd *f, nfds_t n, int t) { (void)f; (void)n; (void)t; return rs_none(); }
int rselect(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *t)
{ (void)n; (void)r; (void)w; (void)e; (void)t; return rs_none(); }
int rgetpeername(int s, struct sockaddr *a, socklen_t *l) { (void)s; (void)a; (void)l; return rs_none(); }
int rgetsockname(int s, struct sockaddr *a, socklen_t *l) { (void)s; (void)a; (void)l; return rs_none(); }
int rsetsockopt(int s, int lv, int o, const void *v, socklen_t l) { (void)s; (void)lv; (void)o; (void)v; (void)l; return rs_none(); }
int rgetsockopt(int s, int lv, int o, void *v, socklen_t *l) { (void)s; (void)lv; (void)o; (void)v; (void)l; return rs_none(); }
int rfcntl(int s, int cmd, ...) { (void)s; (void)cmd; return rs_none(); }
off_t riomap(int s, void *b, size_t n, int p, int f, off_t o)
{ (void)s; (void)b; (void)n; (void)p; (void)f; (void)o; return rs_none(); }
int riounmap(int s, void *b, size_t n) { (void)s; (void)b; (void)n; return rs_none(); }
size_t riowrite(int s, const void *b, size_t n, off_t o, int f)
{ (void)s; (void)b; (void)n; (void)o; (void)f; rs_none(); return 0; }
