// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-ucpcheck: moves known bytes through UCX's UCP layer between two
 * hosts and checks every byte that arrives, which ucx_perftest does not.
 *
 *   server: sroce-ucpcheck [-p PORT] [-n ROUNDS]
 *   client: sroce-ucpcheck [-p PORT] [-n ROUNDS] SERVER
 *
 * The two exchange their UCP worker addresses and the server's memory key
 * over a TCP connection, then the client runs, printing TAP:
 *
 *   tag:  messages of several sizes (eager and rendezvous) to the server,
 *         which checks each and sends it back; the client checks the echo;
 *   get:  reads the server's registered region, filled with a pattern the
 *         client also computes, in pieces of several sizes;
 *   put:  writes another pattern over that region, flushes, and the server
 *         checks its region.
 *
 * Transports and devices are UCX's choice, steered by UCX_TLS and
 * UCX_NET_DEVICES. Exit status: 0 when every check passed, 1 on a data
 * mismatch, 2 on a setup or transfer error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <ucp/api/ucp.h>

#define UC_REGION	(1u << 20)
#define UC_TAG_ECHO	(1ull << 63)
#define UC_MAX_MSG	(1u << 20)

/* Message sizes: one byte, inline, eager, and past the rendezvous switch. */
static const size_t uc_sizes[] = { 1, 8, 1000, 4096, 65536, 300000, 1u << 20 };
#define UC_NSIZES	(sizeof(uc_sizes) / sizeof(uc_sizes[0]))

/*
 * get and put move pieces of these sizes (odd ones end mid-word), at most
 * UC_OPS of each, spread over the region: a transport that emulates RMA
 * with messages pays a round trip per piece.
 */
static const size_t uc_pieces[] = { 8, 4093, 65536, 1u << 20 };
#define UC_NPIECES	(sizeof(uc_pieces) / sizeof(uc_pieces[0]))
#define UC_OPS		16

struct uc {
	ucp_context_h ctx;
	ucp_worker_h worker;
	ucp_ep_h ep;
	int sock;
	int tap;
	int failed;
};

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "sroce-ucpcheck: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(2);
}

static void tap(struct uc *uc, int good, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", good ? "" : "not ", ++uc->tap);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!good)
		uc->failed++;
}

/*
 * The byte at position i of the pattern of SEED: a xorshift stream per
 * 8-byte word, so that any piece of a buffer can be computed alone.
 */
static uint8_t pat_byte(uint64_t seed, size_t i)
{
	uint64_t x = (seed + 1) * 0x9e3779b97f4a7c15ull + i / 8;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	x *= 0x2545f4914f6cdd1dull;
	return x >> (8 * (i % 8));
}

static void pat_fill(uint8_t *buf, size_t len, uint64_t seed, size_t off)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = pat_byte(seed, off + i);
}

/* Index of the first byte that differs from the pattern, or LEN. */
static size_t pat_check(const uint8_t *buf, size_t len, uint64_t seed,
			size_t off)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (buf[i] != pat_byte(seed, off + i))
			return i;
	return len;
}

/* The control connection: whole buffers, or the process ends. */
static void sock_send(struct uc *uc, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = send(uc->sock, p, len, MSG_NOSIGNAL);
		if (n <= 0)
			die("control connection: send: %s", strerror(errno));
		p += n;
		len -= n;
	}
}

/*
 * Waiting for the peer on the control connection, keep UCP progressing:
 * a transport without RDMA (ud_verbs, tcp) emulates put and get with
 * messages that this side's worker must answer.
 */
static void sock_recv(struct uc *uc, void *buf, size_t len)
{
	struct pollfd pfd = { .fd = uc->sock, .events = POLLIN };
	char *p = buf;
	ssize_t n;

	while (len) {
		while (uc->worker && poll(&pfd, 1, 0) == 0)
			ucp_worker_progress(uc->worker);
		n = recv(uc->sock, p, len, 0);
		if (n <= 0)
			die("control connection: %s",
			    n ? strerror(errno) : "closed by the peer");
		p += n;
		len -= n;
	}
}

static void send_u64(struct uc *uc, uint64_t v)
{
	sock_send(uc, &v, sizeof(v));
}

static uint64_t recv_u64(struct uc *uc)
{
	uint64_t v;

	sock_recv(uc, &v, sizeof(v));
	return v;
}

/* A length-prefixed blob; the caller frees what it receives. */
static void send_blob(struct uc *uc, const void *buf, size_t len)
{
	send_u64(uc, len);
	sock_send(uc, buf, len);
}

static void *recv_blob(struct uc *uc, size_t *len)
{
	void *buf;

	*len = recv_u64(uc);
	if (*len > (1u << 20))
		die("control connection: blob of %zu bytes", *len);
	buf = malloc(*len ? *len : 1);
	if (!buf)
		die("out of memory");
	sock_recv(uc, buf, *len);
	return buf;
}

static int listen_accept(const char *port)
{
	struct addrinfo hints = { .ai_family = AF_INET6,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE };
	struct addrinfo *ai;
	int one = 1, zero = 0, fd, conn;

	if (getaddrinfo(NULL, port, &hints, &ai))
		die("bad port %s", port);
	fd = socket(ai->ai_family, ai->ai_socktype, 0);
	if (fd < 0)
		die("socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* Clients over IPv4 too. */
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 1))
		die("listen on port %s: %s", port, strerror(errno));
	freeaddrinfo(ai);
	conn = accept(fd, NULL, NULL);
	if (conn < 0)
		die("accept: %s", strerror(errno));
	close(fd);
	return conn;
}

static int connect_to(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai;
	int fd, tries;

	if (getaddrinfo(host, port, &hints, &ai))
		die("cannot resolve %s", host);
	/* The server may still be starting: try for about ten seconds. */
	for (tries = 0; tries < 100; tries++) {
		fd = socket(ai->ai_family, ai->ai_socktype, 0);
		if (fd < 0)
			die("socket: %s", strerror(errno));
		if (!connect(fd, ai->ai_addr, ai->ai_addrlen)) {
			freeaddrinfo(ai);
			return fd;
		}
		close(fd);
		usleep(100000);
	}
	die("cannot connect to %s port %s: %s", host, port, strerror(errno));
	return -1;
}

/* Wait for a UCP operation; its final status. */
static ucs_status_t wait_req(struct uc *uc, ucs_status_ptr_t req)
{
	ucs_status_t st;

	if (!UCS_PTR_IS_PTR(req))
		return UCS_PTR_STATUS(req);
	while ((st = ucp_request_check_status(req)) == UCS_INPROGRESS)
		ucp_worker_progress(uc->worker);
	ucp_request_free(req);
	return st;
}

static void must(ucs_status_t st, const char *what)
{
	if (st != UCS_OK)
		die("%s: %s", what, ucs_status_string(st));
}

static void tag_send(struct uc *uc, const void *buf, size_t len, uint64_t tag)
{
	ucp_request_param_t prm = { .op_attr_mask = 0 };

	must(wait_req(uc, ucp_tag_send_nbx(uc->ep, buf, len, tag, &prm)),
	     "tag send");
}

/* Receive tag TAG into BUF; the length that arrived. */
static size_t tag_recv(struct uc *uc, void *buf, size_t len, uint64_t tag)
{
	ucp_tag_recv_info_t info = { 0 };
	ucp_request_param_t prm = {
		.op_attr_mask = UCP_OP_ATTR_FIELD_RECV_INFO,
		.recv_info.tag_info = &info,
	};
	ucs_status_ptr_t req;
	ucs_status_t st;

	req = ucp_tag_recv_nbx(uc->worker, buf, len, tag, ~0ull, &prm);
	if (UCS_PTR_IS_ERR(req))
		die("tag receive: %s", ucs_status_string(UCS_PTR_STATUS(req)));
	if (req) {
		while ((st = ucp_tag_recv_request_test(req, &info)) ==
		       UCS_INPROGRESS)
			ucp_worker_progress(uc->worker);
		ucp_request_free(req);
		must(st, "tag receive");
	}
	return info.length;
}

static void ucp_setup(struct uc *uc)
{
	ucp_params_t params = {
		.field_mask = UCP_PARAM_FIELD_FEATURES,
		.features = UCP_FEATURE_TAG | UCP_FEATURE_RMA,
	};
	ucp_worker_params_t wp = {
		.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
		.thread_mode = UCS_THREAD_MODE_SINGLE,
	};
	ucp_ep_params_t ep = { 0 };
	ucp_address_t *addr;
	size_t len, peer_len;
	void *peer;

	must(ucp_init(&params, NULL, &uc->ctx), "ucp_init");
	must(ucp_worker_create(uc->ctx, &wp, &uc->worker), "ucp_worker_create");
	must(ucp_worker_get_address(uc->worker, &addr, &len),
	     "ucp_worker_get_address");
	send_blob(uc, addr, len);
	ucp_worker_release_address(uc->worker, addr);
	peer = recv_blob(uc, &peer_len);
	ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
	ep.address = peer;
	must(ucp_ep_create(uc->worker, &ep, &uc->ep), "ucp_ep_create");
	free(peer);
}

/* Flush, agree over TCP that both are done, then close without talking. */
static void ucp_teardown(struct uc *uc, ucp_mem_h memh)
{
	ucp_request_param_t prm = {
		.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
		.flags = UCP_EP_CLOSE_FLAG_FORCE,
	};

	must(wait_req(uc, ucp_ep_flush_nbx(uc->ep, &(ucp_request_param_t){ 0 })),
	     "flush");
	send_u64(uc, 0);
	recv_u64(uc);
	wait_req(uc, ucp_ep_close_nbx(uc->ep, &prm));
	if (memh)
		must(ucp_mem_unmap(uc->ctx, memh), "ucp_mem_unmap");
	ucp_worker_destroy(uc->worker);
	ucp_cleanup(uc->ctx);
}

static void *xalloc(size_t len)
{
	void *p = aligned_alloc(4096, len);

	if (!p)
		die("out of memory");
	return p;
}

/* Offset of piece K of LEN bytes: UC_OPS slots over the region. */
static size_t piece_off(unsigned int k, size_t len)
{
	size_t slot = UC_REGION / UC_OPS;

	return len >= slot ? k * len : k * slot + (k * 61) % (slot - len + 1);
}

static unsigned int piece_count(size_t len)
{
	return len >= UC_REGION / UC_OPS ? UC_REGION / len : UC_OPS;
}

/* Pieces of LEN in BUF that differ from the pattern of SEED. */
static size_t pieces_check(const uint8_t *buf, size_t len, uint64_t seed)
{
	unsigned int k;
	size_t off, bad = 0;

	for (k = 0; k < piece_count(len); k++) {
		off = piece_off(k, len);
		if (pat_check(buf + off, len, seed, off) != len)
			bad++;
	}
	return bad;
}

static void server(struct uc *uc, int rounds)
{
	ucp_mem_map_params_t mp = {
		.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
			      UCP_MEM_MAP_PARAM_FIELD_LENGTH,
		.length = UC_REGION,
	};
	uint8_t *region = xalloc(UC_REGION), *msg = xalloc(UC_MAX_MSG);
	uint64_t seed, tag;
	ucp_mem_h memh;
	void *rkey;
	size_t rkey_len, got, bad;
	unsigned int i;
	int r, wrong = 0;

	seed = recv_u64(uc);
	pat_fill(region, UC_REGION, seed, 0);
	mp.address = region;
	must(ucp_mem_map(uc->ctx, &mp, &memh), "ucp_mem_map");
	must(ucp_rkey_pack(uc->ctx, memh, &rkey, &rkey_len), "ucp_rkey_pack");
	send_u64(uc, (uintptr_t)region);
	send_blob(uc, rkey, rkey_len);
	ucp_rkey_buffer_release(rkey);

	/* tag: check each message, echo it back as it came. */
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < UC_NSIZES; i++) {
			tag = (uint64_t)r << 8 | i;
			got = tag_recv(uc, msg, UC_MAX_MSG, tag);
			bad = pat_check(msg, got, seed + tag + 1, 0);
			if (got != uc_sizes[i] || bad != got) {
				fprintf(stderr,
					"tag %#llx: %zu bytes of %zu, first bad byte %zu\n",
					(unsigned long long)tag, got,
					uc_sizes[i], bad);
				wrong++;
			}
			tag_send(uc, msg, got, tag | UC_TAG_ECHO);
		}
	}
	send_u64(uc, wrong);

	/* get is the client's alone; each put pass is checked here. */
	for (i = 0; i < UC_NPIECES; i++) {
		recv_u64(uc);
		bad = pieces_check(region, uc_pieces[i], ~seed - i);
		if (bad)
			fprintf(stderr, "put in pieces of %zu: %zu bad\n",
				uc_pieces[i], bad);
		send_u64(uc, bad);
		wrong += bad;
	}

	ucp_teardown(uc, memh);
	free(region);
	free(msg);
	exit(!!wrong);
}

/* get or put the pieces of LEN between LOCAL and the server's region. */
static void rma_pass(struct uc *uc, int put, uint8_t *local, uint64_t raddr,
		     ucp_rkey_h rkey, size_t len)
{
	ucp_request_param_t prm = { .op_attr_mask = 0 };
	ucs_status_ptr_t req;
	unsigned int k;
	size_t off;

	for (k = 0; k < piece_count(len); k++) {
		off = piece_off(k, len);
		if (put)
			req = ucp_put_nbx(uc->ep, local + off, len, raddr + off,
					  rkey, &prm);
		else
			req = ucp_get_nbx(uc->ep, local + off, len, raddr + off,
					  rkey, &prm);
		must(wait_req(uc, req), put ? "put" : "get");
	}
	must(wait_req(uc, ucp_ep_flush_nbx(uc->ep, &prm)), "flush");
}

static void client(struct uc *uc, int rounds)
{
	uint8_t *local = xalloc(UC_REGION), *msg = xalloc(UC_MAX_MSG);
	uint8_t *echo = xalloc(UC_MAX_MSG);
	uint64_t seed, raddr, tag, wrong;
	ucp_rkey_h rkey;
	size_t rkey_len, got, bad, total = 0;
	unsigned int i;
	void *packed;
	int r, echo_bad = 0;

	seed = (uint64_t)time(NULL) << 16 ^ (uint64_t)getpid();
	printf("# pattern seed %#llx\n", (unsigned long long)seed);
	send_u64(uc, seed);
	raddr = recv_u64(uc);
	packed = recv_blob(uc, &rkey_len);
	must(ucp_ep_rkey_unpack(uc->ep, packed, &rkey), "ucp_ep_rkey_unpack");
	free(packed);

	for (r = 0; r < rounds; r++) {
		for (i = 0; i < UC_NSIZES; i++) {
			tag = (uint64_t)r << 8 | i;
			pat_fill(msg, uc_sizes[i], seed + tag + 1, 0);
			tag_send(uc, msg, uc_sizes[i], tag);
			memset(echo, 0, uc_sizes[i]);
			got = tag_recv(uc, echo, UC_MAX_MSG, tag | UC_TAG_ECHO);
			bad = pat_check(echo, got, seed + tag + 1, 0);
			if (got != uc_sizes[i] || bad != got) {
				printf("# echo %#llx: %zu bytes of %zu, first bad byte %zu\n",
				       (unsigned long long)tag, got,
				       uc_sizes[i], bad);
				echo_bad++;
			}
			total += uc_sizes[i];
		}
	}
	/* The lanes wired up by now: which transport and device carried it. */
	ucp_ep_print_info(uc->ep, stdout);
	wrong = recv_u64(uc);
	tap(uc, !wrong, "tag: %d messages (%zu bytes, 1 B to 1 MiB) intact at the server (%llu bad)",
	    rounds * (int)UC_NSIZES, total, (unsigned long long)wrong);
	tap(uc, !echo_bad, "tag: their echoes intact at the client (%d bad)",
	    echo_bad);

	for (i = 0; i < UC_NPIECES; i++) {
		memset(local, 0, UC_REGION);
		rma_pass(uc, 0, local, raddr, rkey, uc_pieces[i]);
		bad = pieces_check(local, uc_pieces[i], seed);
		tap(uc, !bad, "get: %u piece(s) of %zu bytes match the server's pattern (%zu bad)",
		    piece_count(uc_pieces[i]), uc_pieces[i], bad);
	}

	/* Each put pass writes a pattern of its own, which the server checks. */
	for (i = 0; i < UC_NPIECES; i++) {
		pat_fill(local, UC_REGION, ~seed - i, 0);
		rma_pass(uc, 1, local, raddr, rkey, uc_pieces[i]);
		send_u64(uc, i);
		bad = recv_u64(uc);
		tap(uc, !bad, "put: %u piece(s) of %zu bytes intact at the server (%zu bad)",
		    piece_count(uc_pieces[i]), uc_pieces[i], bad);
	}

	ucp_rkey_destroy(rkey);
	ucp_teardown(uc, NULL);
	printf("1..%d\n", uc->tap);
	free(local);
	free(msg);
	free(echo);
	exit(uc->failed ? 1 : 0);
}

int main(int argc, char **argv)
{
	struct uc uc = { 0 };
	const char *port = "18530";
	int rounds = 3, c;

	while ((c = getopt(argc, argv, "p:n:h")) != -1) {
		switch (c) {
		case 'p':
			port = optarg;
			break;
		case 'n':
			rounds = atoi(optarg);
			if (rounds < 1 || rounds > 255)
				die("-n: 1 to 255 rounds");
			break;
		default:
			fprintf(stderr,
				"usage: %s [-p PORT] [-n ROUNDS] [SERVER]\n",
				argv[0]);
			return 2;
		}
	}
	if (optind < argc) {
		uc.sock = connect_to(argv[optind], port);
		ucp_setup(&uc);
		client(&uc, rounds);
	} else {
		uc.sock = listen_accept(port);
		ucp_setup(&uc);
		server(&uc, rounds);
	}
	return 0;
}
