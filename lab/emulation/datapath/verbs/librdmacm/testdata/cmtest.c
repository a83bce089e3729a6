/*
 * cmtest: what rping, perftest and qperf leave out of rdma_cm, checked
 * between two hosts of a lab: a non-blocking channel and its fd, event
 * order, private data both ways, the REJ's reason and private data, a port
 * nobody listens on, ports and addresses of an id, data over the connected
 * QP, disconnection; the synchronous API (rdma_create_ep, rdma_get_request,
 * rdma_verbs.h's helpers); UD through SIDR.
 *
 *   cmtest server PORT        serves the three clients below, then exits
 *   cmtest client ADDR PORT   prints "cmtest: ok" when every check passed
 */
#define _GNU_SOURCE /* REG_RIP */
#include <errno.h>
#include <execinfo.h>
#include <signal.h>
#include <ucontext.h>
#include <unistd.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#define CHECK(c, ...)                                                        \
	do {                                                                 \
		if (!(c)) {                                                  \
			fprintf(stderr, "cmtest: %s:%d: %s: ", __func__, __LINE__, #c); \
			fprintf(stderr, __VA_ARGS__);                        \
			fprintf(stderr, " (errno %d %s)\n", errno, strerror(errno)); \
			exit(1);                                             \
		}                                                            \
	} while (0)

static struct rdma_cm_event *next_event(struct rdma_event_channel *ch)
{
	struct rdma_cm_event *ev;
	struct pollfd p = {.fd = ch->fd, .events = POLLIN};

	for (;;) {
		if (rdma_get_cm_event(ch, &ev) == 0)
			return ev;
		CHECK(errno == EAGAIN, "rdma_get_cm_event");
		CHECK(poll(&p, 1, 120000) == 1, "no event within 120 s");
	}
}

static struct rdma_cm_event *expect(struct rdma_event_channel *ch, enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev = next_event(ch);

	CHECK(ev->event == want, "event %s (status %d), want %s", rdma_event_str(ev->event), ev->status, rdma_event_str(want));
	return ev;
}

static struct sockaddr_in addr_of(const char *host, int port)
{
	struct addrinfo *ai, h = {.ai_family = AF_INET};
	struct sockaddr_in sin;

	CHECK(getaddrinfo(host, NULL, &h, &ai) == 0, "resolve %s", host);
	memcpy(&sin, ai->ai_addr, sizeof(sin));
	sin.sin_port = htons(port);
	freeaddrinfo(ai);
	return sin;
}

/* ---- the server ---- */

struct conn {
	struct rdma_cm_id *id;
	struct ibv_mr *mr;
	char buf[64];
};

static void serve_ud(struct rdma_cm_event *ev);

/* serve serves the RC clients on port and the UD client on port+1. */
static void serve(struct rdma_event_channel *ch, int port)
{
	struct rdma_cm_id *l, *lu;
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(port)};
	struct conn c = {0};
	int served = 0;

	CHECK(rdma_create_id(ch, &l, &served, RDMA_PS_TCP) == 0, "create id");
	CHECK(rdma_bind_addr(l, (struct sockaddr *)&sin) == 0, "bind");
	CHECK(ntohs(rdma_get_src_port(l)) == port, "bound port %d", ntohs(rdma_get_src_port(l)));
	CHECK(rdma_listen(l, 4) == 0, "listen");
	sin.sin_port = htons(port + 1);
	CHECK(rdma_create_id(ch, &lu, NULL, RDMA_PS_UDP) == 0, "create UD id");
	CHECK(rdma_bind_addr(lu, (struct sockaddr *)&sin) == 0 && rdma_listen(lu, 1) == 0, "UD listen");
	while (served < 3) {
		struct rdma_cm_event *ev = next_event(ch);
		struct rdma_cm_id *id = ev->id;

		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST && ev->listen_id == lu) {
			serve_ud(ev);
			served++;
			continue;
		}
		switch (ev->event) {
		case RDMA_CM_EVENT_CONNECT_REQUEST: {
			CHECK(ev->listen_id == l && id->context == &served, "the request's id inherits the listener's context");
			CHECK(id->verbs && ev->param.conn.private_data_len >= 8, "request: device %p, %d bytes of private data",
			      (void *)id->verbs, ev->param.conn.private_data_len);
			if (memcmp(ev->param.conn.private_data, "reject-me", 9) == 0) {
				CHECK(rdma_reject(id, "no-thanks", 10) == 0, "reject");
				rdma_ack_cm_event(ev);
				rdma_destroy_id(id);
				served++;
				continue;
			}
			CHECK(memcmp(ev->param.conn.private_data, "ping-A", 7) == 0, "private data %.8s",
			      (const char *)ev->param.conn.private_data);
			struct ibv_qp_init_attr qa = {.cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1},
						      .qp_type = IBV_QPT_RC, .sq_sig_all = 1};
			CHECK(rdma_create_qp(id, NULL, &qa) == 0, "create qp");
			c.id = id;
			c.mr = rdma_reg_msgs(id, c.buf, sizeof(c.buf));
			CHECK(c.mr, "reg msgs");
			CHECK(rdma_post_recv(id, NULL, c.buf, sizeof(c.buf), c.mr) == 0, "post recv");
			struct rdma_conn_param p = {.private_data = "pong-A", .private_data_len = 7, .responder_resources = 1,
						    .initiator_depth = 1, .rnr_retry_count = 7};
			CHECK(rdma_accept(id, &p) == 0, "accept");
			break;
		}
		case RDMA_CM_EVENT_ESTABLISHED: {
			struct ibv_wc wc;

			CHECK(id == c.id, "established on another id");
			rdma_ack_cm_event(ev);
			CHECK(rdma_get_recv_comp(id, &wc) == 1 && wc.status == IBV_WC_SUCCESS, "receive the client's message");
			c.buf[sizeof(c.buf) - 1] = 0;
			strcat(c.buf, "+echo");
			CHECK(rdma_post_send(id, NULL, c.buf, strlen(c.buf) + 1, c.mr, 0) == 0, "send the echo");
			CHECK(rdma_get_send_comp(id, &wc) == 1 && wc.status == IBV_WC_SUCCESS, "echo sent");
			continue;
		}
		case RDMA_CM_EVENT_DISCONNECTED:
			CHECK(id == c.id, "disconnected another id");
			rdma_ack_cm_event(ev);
			rdma_dereg_mr(c.mr);
			rdma_destroy_qp(id);
			rdma_destroy_id(id);
			served++;
			continue;
		default:
			CHECK(0, "unexpected %s", rdma_event_str(ev->event));
		}
		rdma_ack_cm_event(ev);
	}
	rdma_destroy_id(l);
	rdma_destroy_id(lu);
}

/* listen_sync: the synchronous API's listener, on port+2. */
static struct rdma_cm_id *listen_sync(int port)
{
	struct rdma_addrinfo h = {.ai_flags = RAI_PASSIVE, .ai_port_space = RDMA_PS_TCP}, *res;
	struct ibv_qp_init_attr qa = {.cap = {.max_send_wr = 2, .max_recv_wr = 2, .max_send_sge = 1, .max_recv_sge = 1},
				      .sq_sig_all = 1};
	struct rdma_cm_id *l;
	char svc[16];

	snprintf(svc, sizeof(svc), "%d", port + 2);
	CHECK(rdma_getaddrinfo(NULL, svc, &h, &res) == 0, "getaddrinfo passive");
	CHECK(rdma_create_ep(&l, res, NULL, &qa) == 0, "create passive ep");
	rdma_freeaddrinfo(res);
	CHECK(rdma_listen(l, 1) == 0, "listen");
	return l;
}

/* serve_sync serves the synchronous client. */
static void serve_sync(struct rdma_cm_id *l)
{
	struct rdma_cm_id *id;
	char buf[32];
	struct ibv_mr *mr;
	struct ibv_wc wc;

	CHECK(rdma_get_request(l, &id) == 0, "get request");
	CHECK(id->qp, "the request's id has the ep's QP");
	mr = rdma_reg_msgs(id, buf, sizeof(buf));
	CHECK(mr && rdma_post_recv(id, NULL, buf, sizeof(buf), mr) == 0, "post recv");
	CHECK(rdma_accept(id, NULL) == 0, "accept (synchronous: returns established)");
	CHECK(rdma_get_recv_comp(id, &wc) == 1 && wc.status == IBV_WC_SUCCESS, "receive");
	CHECK(strcmp(buf, "sync-hello") == 0, "got %s", buf);
	rdma_dereg_mr(mr);
	rdma_destroy_ep(id);
	rdma_destroy_ep(l);
}

/* serve_ud answers the UD client's request (RDMA_PS_UDP, port+1). */
static void serve_ud(struct rdma_cm_event *ev)
{
	struct rdma_cm_id *id = ev->id;
	char buf[40 + 32];
	struct ibv_mr *mr;
	struct ibv_wc wc;

	CHECK(ev->param.ud.private_data_len >= 6 && memcmp(ev->param.ud.private_data, "ud-hi", 6) == 0, "UD private data");
	rdma_ack_cm_event(ev);
	struct ibv_qp_init_attr qa = {.cap = {.max_send_wr = 2, .max_recv_wr = 2, .max_send_sge = 1, .max_recv_sge = 1},
				      .qp_type = IBV_QPT_UD, .sq_sig_all = 1};
	CHECK(rdma_create_qp(id, NULL, &qa) == 0, "UD qp");
	mr = rdma_reg_msgs(id, buf, sizeof(buf));
	CHECK(mr && rdma_post_recv(id, NULL, buf, sizeof(buf), mr) == 0, "UD post recv");
	struct rdma_conn_param p = {.qp_num = id->qp->qp_num};
	CHECK(rdma_accept(id, &p) == 0, "UD accept");
	CHECK(rdma_get_recv_comp(id, &wc) == 1 && wc.status == IBV_WC_SUCCESS && (wc.wc_flags & IBV_WC_GRH), "UD receive");
	CHECK(strcmp(buf + 40, "datagram") == 0, "UD got %s", buf + 40);
	rdma_dereg_mr(mr);
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
}

/* ---- the client ---- */

static struct rdma_cm_id *resolve(struct rdma_event_channel *ch, struct sockaddr_in *dst, enum rdma_port_space ps)
{
	struct rdma_cm_id *id;

	CHECK(rdma_create_id(ch, &id, NULL, ps) == 0, "create id");
	CHECK(rdma_resolve_addr(id, NULL, (struct sockaddr *)dst, 2000) == 0, "resolve addr");
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED));
	CHECK(id->verbs && strncmp(ibv_get_device_name(id->verbs->device), "rocelab_", 8) == 0, "resolved to a lab device");
	CHECK(rdma_resolve_route(id, 2000) == 0, "resolve route");
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED));
	CHECK(id->route.num_paths == 1 && id->route.path_rec, "one path");
	return id;
}

static void client(const char *host, int port)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in dst = addr_of(host, port);
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	char buf[64];
	struct ibv_mr *mr;
	struct ibv_wc wc;

	CHECK(ch, "channel");
	CHECK(fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK) == 0, "non-blocking");
	CHECK(rdma_get_cm_event(ch, &ev) == -1 && errno == EAGAIN, "an empty non-blocking channel says EAGAIN");

	/* A: connected, data both ways, disconnected. */
	id = resolve(ch, &dst, RDMA_PS_TCP);
	/* rdma_create_qp writes the CQs it made back into its attributes,
	 * as rdma-core's does: each QP below starts from rc_attr. */
	const struct ibv_qp_init_attr rc_attr = {.cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1},
						 .qp_type = IBV_QPT_RC, .sq_sig_all = 1};
	struct ibv_qp_init_attr qa = rc_attr;

	CHECK(rdma_create_qp(id, NULL, &qa) == 0, "create qp");
	mr = rdma_reg_msgs(id, buf, sizeof(buf));
	CHECK(mr && rdma_post_recv(id, NULL, buf, sizeof(buf), mr) == 0, "post recv");
	struct rdma_conn_param p = {.private_data = "ping-A", .private_data_len = 7, .responder_resources = 1,
				    .initiator_depth = 1, .retry_count = 7, .rnr_retry_count = 7};
	CHECK(rdma_connect(id, &p) == 0, "connect");
	ev = expect(ch, RDMA_CM_EVENT_ESTABLISHED);
	CHECK(ev->param.conn.private_data_len >= 7 && memcmp(ev->param.conn.private_data, "pong-A", 7) == 0,
	      "the REP's private data");
	rdma_ack_cm_event(ev);
	CHECK(ntohs(rdma_get_dst_port(id)) == port && rdma_get_src_port(id) != 0, "ports %d, %d", ntohs(rdma_get_src_port(id)),
	      ntohs(rdma_get_dst_port(id)));
	strcpy(buf, "hello");
	struct ibv_mr *smr = rdma_reg_msgs(id, "hello", 6);
	CHECK(smr && rdma_post_send(id, NULL, "hello", 6, smr, 0) == 0, "send");
	CHECK(rdma_get_send_comp(id, &wc) == 1 && wc.status == IBV_WC_SUCCESS, "sent");
	CHECK(rdma_get_recv_comp(id, &wc) == 1 && wc.status == IBV_WC_SUCCESS, "echo received");
	CHECK(strcmp(buf, "hello+echo") == 0, "echo %s", buf);
	CHECK(rdma_disconnect(id) == 0, "disconnect");
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_DISCONNECTED));
	rdma_dereg_mr(smr);
	rdma_dereg_mr(mr);
	rdma_destroy_qp(id);
	CHECK(rdma_destroy_id(id) == 0, "destroy");

	/* B: refused by the program: REJECTED, reason 28, its private data. */
	id = resolve(ch, &dst, RDMA_PS_TCP);
	qa = rc_attr;
	CHECK(rdma_create_qp(id, NULL, &qa) == 0, "create qp");
	p.private_data = "reject-me";
	p.private_data_len = 10;
	CHECK(rdma_connect(id, &p) == 0, "connect");
	ev = expect(ch, RDMA_CM_EVENT_REJECTED);
	CHECK(ev->status == 28, "reason %d, want 28 (consumer)", ev->status);
	CHECK(ev->param.conn.private_data && memcmp(ev->param.conn.private_data, "no-thanks", 10) == 0, "the REJ's private data");
	rdma_ack_cm_event(ev);
	rdma_destroy_qp(id);
	rdma_destroy_id(id);

	/* C: a port nobody listens on: REJECTED, reason 8. */
	struct sockaddr_in none = dst;

	none.sin_port = htons(port + 7);
	id = resolve(ch, &none, RDMA_PS_TCP);
	qa = rc_attr;
	CHECK(rdma_create_qp(id, NULL, &qa) == 0, "create qp");
	p.private_data = NULL;
	p.private_data_len = 0;
	CHECK(rdma_connect(id, &p) == 0, "connect");
	ev = expect(ch, RDMA_CM_EVENT_REJECTED);
	CHECK(ev->status == 8, "reason %d, want 8 (invalid service ID)", ev->status);
	rdma_ack_cm_event(ev);
	rdma_destroy_qp(id);
	rdma_destroy_id(id);

	/* D: UD through SIDR on port+1. */
	struct sockaddr_in ud = dst;

	ud.sin_port = htons(port + 1);
	id = resolve(ch, &ud, RDMA_PS_UDP);
	struct ibv_qp_init_attr ua = {.cap = {.max_send_wr = 2, .max_recv_wr = 2, .max_send_sge = 1, .max_recv_sge = 1},
				      .qp_type = IBV_QPT_UD, .sq_sig_all = 1};
	CHECK(rdma_create_qp(id, NULL, &ua) == 0, "UD qp");
	struct rdma_conn_param up = {.private_data = "ud-hi", .private_data_len = 6};
	CHECK(rdma_connect(id, &up) == 0, "UD connect");
	ev = expect(ch, RDMA_CM_EVENT_ESTABLISHED);
	CHECK(ev->param.ud.qp_num && ev->param.ud.qkey == RDMA_UDP_QKEY && ev->param.ud.ah_attr.is_global, "UD param qpn %u qkey %#x",
	      ev->param.ud.qp_num, ev->param.ud.qkey);
	struct ibv_ah *ah = ibv_create_ah(id->pd ? id->pd : id->qp->pd, &ev->param.ud.ah_attr);
	uint32_t rqpn = ev->param.ud.qp_num, rqkey = ev->param.ud.qkey;

	rdma_ack_cm_event(ev);
	CHECK(ah, "AH from the event");
	struct ibv_mr *dmr = rdma_reg_msgs(id, "datagram", 9);
	CHECK(dmr && rdma_post_ud_send(id, NULL, "datagram", 9, dmr, 0, ah, rqpn) == 0, "UD send");
	(void)rqkey;
	CHECK(rdma_get_send_comp(id, &wc) == 1 && wc.status == IBV_WC_SUCCESS, "UD sent");
	ibv_destroy_ah(ah);
	rdma_dereg_mr(dmr);
	rdma_destroy_qp(id);
	rdma_destroy_id(id);

	/* E: the synchronous API on port+2. */
	struct rdma_addrinfo h = {.ai_port_space = RDMA_PS_TCP}, *res;
	char svc[16];

	snprintf(svc, sizeof(svc), "%d", port + 2);
	CHECK(rdma_getaddrinfo(host, svc, &h, &res) == 0, "getaddrinfo");
	qa = rc_attr;
	CHECK(rdma_create_ep(&id, res, NULL, &qa) == 0, "create ep");
	rdma_freeaddrinfo(res);
	CHECK(rdma_connect(id, NULL) == 0, "connect (synchronous)");
	struct ibv_mr *emr = rdma_reg_msgs(id, "sync-hello", 11);
	CHECK(emr && rdma_post_send(id, NULL, "sync-hello", 11, emr, 0) == 0, "send");
	CHECK(rdma_get_send_comp(id, &wc) == 1 && wc.status == IBV_WC_SUCCESS, "sent");
	rdma_dereg_mr(emr);
	rdma_disconnect(id);
	rdma_destroy_ep(id);
	rdma_destroy_event_channel(ch);
	printf("cmtest: ok\n");
}

/* crashed says where, for a test log: the faulting address, the
 * instruction's address and the mapping it is in, and a backtrace. */
static void crashed(int sig, siginfo_t *si, void *uc)
{
	void *pcs[32];
	int n = backtrace(pcs, 32);
	uintptr_t ip = (uintptr_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
	uintptr_t sp = (uintptr_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RSP];
	char line[512];
	FILE *maps;

	fprintf(stderr, "cmtest: signal %d, address %p, ip %#lx, sp %#lx, at:\n", sig, si->si_addr, (unsigned long)ip, (unsigned long)sp);
	maps = fopen("/proc/self/maps", "r");
	while (maps && fgets(line, sizeof(line), maps)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && ((ip >= lo && ip < hi) || (sp >= lo && sp < hi) ||
							      ((uintptr_t)si->si_addr >= lo && (uintptr_t)si->si_addr < hi)))
			fprintf(stderr, "cmtest: map %s", line);
	}
	if (maps)
		fclose(maps);
	/* The words around the stack pointer: a return address lost shows as
	 * the zero the instruction pointer took. */
	for (int k = -4; k < 12; k++)
		fprintf(stderr, "cmtest: sp%+d: %#lx\n", 8 * k, ((unsigned long *)sp)[k]);
	backtrace_symbols_fd(pcs, n, 2);
	_exit(3);
}

int main(int argc, char **argv)
{
	struct sigaction sa = {.sa_sigaction = crashed, .sa_flags = SA_SIGINFO};

	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	if (argc == 3 && strcmp(argv[1], "server") == 0) {
		struct rdma_event_channel *ch = rdma_create_event_channel();
		int port = atoi(argv[2]);

		CHECK(ch, "channel");
		CHECK(fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK) == 0, "non-blocking");
		struct rdma_cm_id *sync = listen_sync(port);

		printf("cmtest: listening\n");
		fflush(stdout);
		serve(ch, port);
		serve_sync(sync);
		rdma_destroy_event_channel(ch);
		printf("cmtest: served\n");
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "client") == 0) {
		client(argv[2], atoi(argv[3]));
		return 0;
	}
	fprintf(stderr, "usage: cmtest server PORT | cmtest client ADDR PORT\n");
	return 2;
}
