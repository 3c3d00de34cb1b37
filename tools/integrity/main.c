// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-integrity: command line, test case list and TAP output.
 *
 *   server: sroce-integrity -d DEV -g GIDX [-p PORT] [options]
 *   client: sroce-integrity -d DEV -g GIDX [-p PORT] [options] SERVER
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "integrity.h"

#define SI_DEFAULT_ITERS	32
#define SI_DEFAULT_WINDOW	32
#define SI_DEFAULT_TIMEOUT	30
#define SI_DEFAULT_WAIT		120
#define SI_DEFAULT_BUDGET	(8ul << 20)
#define SI_MAX_CASES		512

const struct si_op_info si_ops[SI_OP_COUNT] = {
	[SI_OP_RC_SEND] = {
		.name = "rc_send", .label = "rc send", .qpt = IBV_QPT_RC,
		.wr_opcode = IBV_WR_SEND, .send_wc = IBV_WC_SEND,
		.recv = true, .can_inline = true,
	},
	[SI_OP_RC_SEND_IMM] = {
		.name = "rc_send_imm", .label = "rc send_imm",
		.qpt = IBV_QPT_RC, .wr_opcode = IBV_WR_SEND_WITH_IMM,
		.send_wc = IBV_WC_SEND, .recv = true, .imm = true,
		.can_inline = true,
	},
	[SI_OP_RC_WRITE] = {
		.name = "rc_write", .label = "rc write", .qpt = IBV_QPT_RC,
		.wr_opcode = IBV_WR_RDMA_WRITE, .send_wc = IBV_WC_RDMA_WRITE,
		.remote = true, .can_inline = true,
	},
	[SI_OP_RC_WRITE_IMM] = {
		.name = "rc_write_imm", .label = "rc write_imm",
		.qpt = IBV_QPT_RC, .wr_opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
		.send_wc = IBV_WC_RDMA_WRITE, .recv = true, .imm = true,
		.remote = true, .can_inline = true,
	},
	[SI_OP_RC_READ] = {
		.name = "rc_read", .label = "rc read", .qpt = IBV_QPT_RC,
		.wr_opcode = IBV_WR_RDMA_READ, .send_wc = IBV_WC_RDMA_READ,
		.remote = true,
	},
	[SI_OP_RC_CMP_SWP] = {
		.name = "rc_cmp_swp", .label = "rc cmp_swp",
		.qpt = IBV_QPT_RC, .wr_opcode = IBV_WR_ATOMIC_CMP_AND_SWP,
		.send_wc = IBV_WC_COMP_SWAP, .remote = true, .atomic = true,
	},
	[SI_OP_RC_FETCH_ADD] = {
		.name = "rc_fetch_add", .label = "rc fetch_add",
		.qpt = IBV_QPT_RC, .wr_opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
		.send_wc = IBV_WC_FETCH_ADD, .remote = true, .atomic = true,
	},
	[SI_OP_UC_SEND] = {
		.name = "uc_send", .label = "uc send", .qpt = IBV_QPT_UC,
		.wr_opcode = IBV_WR_SEND, .send_wc = IBV_WC_SEND,
		.recv = true, .can_inline = true,
	},
	[SI_OP_UD_SEND] = {
		.name = "ud_send", .label = "ud send", .qpt = IBV_QPT_UD,
		.wr_opcode = IBV_WR_SEND, .send_wc = IBV_WC_SEND,
		.recv = true, .can_inline = true,
	},
};

const char *const si_variant_names[SI_V_COUNT] = {
	[SI_V_PLAIN] = "",
	[SI_V_ODD] = " odd",
	[SI_V_SGE] = " sge3",
	[SI_V_INLINE] = " inline",
	[SI_V_INLINE_SGE] = " inline sge3",
};

int si_verbose;

double si_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Diagnostics on stderr: level 0 always, higher levels with -v. */
void si_vlog(int level, const char *fmt, ...)
{
	va_list ap;

	if (level > si_verbose)
		return;
	fprintf(stderr, "sroce-integrity: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void case_label(const struct si_case *c, char *buf, size_t len)
{
	snprintf(buf, len, "%s %u%s", si_ops[c->op].label, c->size,
		 si_variant_names[c->var]);
}

static void usage(FILE *f)
{
	unsigned int i;

	fprintf(f,
"usage: sroce-integrity -d DEV -g GIDX [options]           (server)\n"
"       sroce-integrity -d DEV -g GIDX [options] SERVER    (client)\n"
"\n"
"Data integrity tests between two RDMA devices. The client drives every\n"
"case, prints TAP and ends with \"N passed, N failed\".\n"
"\n"
"  -d, --dev DEV         RDMA device (default: the first one)\n"
"  -g, --gid-index N     GID index of the local port (required)\n"
"  -i, --ib-port N       device port (default 1)\n"
"  -p, --port PORT       TCP port of the control connection (default %s)\n"
"  -n, --iters N         messages per case (default %u; large messages\n"
"                        are fewer, see --budget)\n"
"  -s, --seed N          pattern seed (default: from the clock, printed)\n"
"  -w, --window N        work requests in flight (default %u)\n"
"  -t, --timeout SEC     time limit of one case (default %u)\n"
"  -a, --ack-timeout N   RC local ACK timeout, 4.096 us << N (default 14,\n"
"                        67 ms; the peer's READ responses must flow at\n"
"                        least this often)\n"
"  -W, --wait SEC        how long to wait for the peer (default %u)\n"
"  -b, --budget BYTES    payload bytes per case at most, at least two\n"
"                        messages (default %lu)\n"
"  -T, --tests LIST      comma-separated tests, or rc, uc, ud, all\n"
"  -q, --quick           a small subset of the cases\n"
"  -k, --keep-going      go on after a failed case\n"
"  -x, --inject KIND     deliberately break the middle message of each\n"
"                        case (payload, imm, short) to see the checks fail\n"
"  -l, --list            list the tests and exit\n"
"  -v, --verbose         more diagnostics (repeat for more)\n"
"  -h, --help            this text\n"
"\n"
"tests:",
		SI_DEFAULT_PORT, SI_DEFAULT_ITERS, SI_DEFAULT_WINDOW,
		SI_DEFAULT_TIMEOUT, SI_DEFAULT_WAIT, SI_DEFAULT_BUDGET);
	for (i = 0; i < SI_OP_COUNT; i++)
		fprintf(f, " %s", si_ops[i].name);
	fprintf(f, "\n");
}

static int parse_tests(const char *arg, uint32_t *mask)
{
	char *list, *tok, *save = NULL;
	unsigned int i;
	bool found;
	int rc = 0;

	list = strdup(arg);
	if (!list)
		return -1;
	*mask = 0;
	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		found = false;
		for (i = 0; i < SI_OP_COUNT; i++) {
			if (!strcmp(tok, "all") || !strcmp(tok, si_ops[i].name) ||
			    (strlen(tok) == 2 &&
			     !strncmp(tok, si_ops[i].name, 2) &&
			     si_ops[i].name[2] == '_')) {
				*mask |= 1u << i;
				found = true;
			}
		}
		if (!found) {
			fprintf(stderr, "sroce-integrity: unknown test '%s'\n",
				tok);
			rc = -1;
		}
	}
	free(list);
	return rc ? rc : *mask ? 0 : -1;
}

static int parse_uint(const char *s, unsigned long long max,
		      unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 0);
	if (errno || end == s || *end || *out > max || *s == '-')
		return -1;
	return 0;
}

static void parse_args(int argc, char **argv, struct si_opts *o)
{
	static const struct option longopts[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "gid-index", required_argument, NULL, 'g' },
		{ "ib-port", required_argument, NULL, 'i' },
		{ "port", required_argument, NULL, 'p' },
		{ "iters", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 's' },
		{ "window", required_argument, NULL, 'w' },
		{ "timeout", required_argument, NULL, 't' },
		{ "wait", required_argument, NULL, 'W' },
		{ "ack-timeout", required_argument, NULL, 'a' },
		{ "budget", required_argument, NULL, 'b' },
		{ "tests", required_argument, NULL, 'T' },
		{ "quick", no_argument, NULL, 'q' },
		{ "keep-going", no_argument, NULL, 'k' },
		{ "inject", required_argument, NULL, 'x' },
		{ "list", no_argument, NULL, 'l' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long long v;
	bool seeded = false;
	unsigned int i;
	int c;

	memset(o, 0, sizeof(*o));
	o->gidx = -1;
	o->ib_port = 1;
	o->port = SI_DEFAULT_PORT;
	o->iters = SI_DEFAULT_ITERS;
	o->window = SI_DEFAULT_WINDOW;
	o->timeout = SI_DEFAULT_TIMEOUT;
	o->wait = SI_DEFAULT_WAIT;
	o->budget = SI_DEFAULT_BUDGET;
	o->tests = (1u << SI_OP_COUNT) - 1;

	while ((c = getopt_long(argc, argv, "d:g:i:p:n:s:w:t:W:a:b:T:x:qklvh",
				longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			o->dev_name = optarg;
			break;
		case 'g':
			if (parse_uint(optarg, 255, &v))
				goto bad;
			o->gidx = v;
			break;
		case 'i':
			if (parse_uint(optarg, 255, &v) || !v)
				goto bad;
			o->ib_port = v;
			break;
		case 'p':
			o->port = optarg;
			break;
		case 'n':
			if (parse_uint(optarg, 1000000, &v) || !v)
				goto bad;
			o->iters = v;
			break;
		case 's':
			if (parse_uint(optarg, UINT64_MAX, &v))
				goto bad;
			o->seed = v;
			seeded = true;
			break;
		case 'w':
			if (parse_uint(optarg, 4096, &v) || !v)
				goto bad;
			o->window = v;
			break;
		case 't':
			if (parse_uint(optarg, 3600, &v) || !v)
				goto bad;
			o->timeout = v;
			break;
		case 'W':
			if (parse_uint(optarg, 86400, &v) || !v)
				goto bad;
			o->wait = v;
			break;
		case 'a':
			/* 0 means no timeout at all: not for a test. */
			if (parse_uint(optarg, 31, &v) || !v)
				goto bad;
			si_ack_timeout = v;
			break;
		case 'b':
			if (parse_uint(optarg, 1ull << 30, &v) || !v)
				goto bad;
			o->budget = v;
			break;
		case 'T':
			if (parse_tests(optarg, &o->tests))
				goto bad;
			break;
		case 'q':
			o->quick = true;
			break;
		case 'k':
			o->keep_going = true;
			break;
		case 'x':
			if (!strcmp(optarg, "payload"))
				o->inject = SI_INJ_PAYLOAD;
			else if (!strcmp(optarg, "imm"))
				o->inject = SI_INJ_IMM;
			else if (!strcmp(optarg, "short"))
				o->inject = SI_INJ_SHORT;
			else
				goto bad;
			break;
		case 'l':
			for (i = 0; i < SI_OP_COUNT; i++)
				printf("%s\n", si_ops[i].name);
			exit(0);
		case 'v':
			o->verbose++;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (optind < argc)
		o->server = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "sroce-integrity: too many arguments\n");
		usage(stderr);
		exit(2);
	}
	if (o->gidx < 0) {
		fprintf(stderr, "sroce-integrity: -g GIDX is required\n");
		usage(stderr);
		exit(2);
	}
	if (!seeded)
		o->seed = si_mix((uint64_t)time(NULL) ^
				 ((uint64_t)getpid() << 32)) & 0xffffffffu;
	si_verbose = o->verbose;
	return;
bad:
	fprintf(stderr, "sroce-integrity: bad value '%s' for -%c\n", optarg, c);
	exit(2);
}

/* ------------------------------------------------------------------ */
/* The case list */

struct case_list {
	struct si_case *c;
	unsigned int n;
};

static bool quick_case(enum si_op op, enum si_variant var, uint32_t size,
		       uint32_t mtu)
{
	bool ud = si_ops[op].qpt == IBV_QPT_UD;
	bool uc = si_ops[op].qpt == IBV_QPT_UC;

	if (si_ops[op].atomic)
		return true;
	switch (var) {
	case SI_V_PLAIN:
		return !size || size == (ud ? mtu : mtu + 1);
	case SI_V_ODD:
		return size == (ud ? 1 : uc ? mtu : 65536);
	case SI_V_SGE:
		return size == (ud ? mtu - 1 : 4096 * 3 + 5);
	case SI_V_INLINE_SGE:
		return true;
	default:
		return false;
	}
}

static void add_case(struct case_list *cl, const struct si_opts *o,
		     enum si_op op, enum si_variant var, uint32_t size,
		     enum ibv_mtu mtu)
{
	struct si_case *c;
	uint64_t r;

	if (o->quick && !quick_case(op, var, size, si_mtu_bytes(mtu)))
		return;
	if (cl->n == SI_MAX_CASES)
		return;
	c = &cl->c[cl->n++];
	memset(c, 0, sizeof(*c));
	c->index = cl->n;
	c->op = op;
	c->var = var;
	c->size = size;
	c->seed = o->seed;
	c->mtu = mtu;
	c->count = o->iters;
	if (!si_ops[op].atomic && size &&
	    (uint64_t)c->count * size > o->budget) {
		c->count = o->budget / size;
		if (c->count < 2)
			c->count = 2;
	}
	/* Every other case starts just short of the PSN wrap. */
	r = si_mix(o->seed ^ ((uint64_t)c->index << 40));
	if (c->index % 2) {
		c->cpsn = 0xffffff - (r % 48);
		c->spsn = 0xffffff - ((r >> 8) % 48);
	} else {
		c->cpsn = r & 0xffffff;
		c->spsn = (r >> 24) & 0xffffff;
	}
}

static void build_cases(struct case_list *cl, const struct si_opts *o,
			const struct si_dev *d, enum ibv_mtu mtu_enum)
{
	uint32_t mtu = si_mtu_bytes(mtu_enum);
	const uint32_t sizes[] = {
		0, 1, mtu - 1, mtu, mtu + 1, 4096 * 3 + 5, 65536,
		1u << 20, 4u << 20,
	};
	const struct si_op_info *op;
	uint32_t nsizes, lim, inl[3], s;
	unsigned int i, j, k;

	for (i = 0; i < SI_OP_COUNT; i++) {
		if (!(o->tests & (1u << i)))
			continue;
		op = &si_ops[i];
		if (op->atomic) {
			add_case(cl, o, i, SI_V_PLAIN, 8, mtu_enum);
			continue;
		}
		nsizes = op->qpt == IBV_QPT_RC ? 9 : op->qpt == IBV_QPT_UC ?
			 7 : 4;
		for (j = 0; j < nsizes; j++) {
			s = sizes[j];
			add_case(cl, o, i, SI_V_PLAIN, s, mtu_enum);
			if (s >= 1)
				add_case(cl, o, i, SI_V_ODD, s, mtu_enum);
			if (s >= 3)
				add_case(cl, o, i, SI_V_SGE, s, mtu_enum);
		}
		lim = op->can_inline ? si_dev_max_inline(d, op->qpt) : 0;
		if (op->qpt == IBV_QPT_UD && lim > mtu)
			lim = mtu;
		if (!lim)
			continue;
		inl[0] = 1;
		inl[1] = lim / 2 + 1;
		inl[2] = lim;
		for (k = 0; k < 3; k++)
			if (inl[k] <= lim && (!k || inl[k] > inl[k - 1]))
				add_case(cl, o, i, SI_V_INLINE, inl[k],
					 mtu_enum);
		if (lim >= 3)
			add_case(cl, o, i, SI_V_INLINE_SGE, lim, mtu_enum);
	}
}

/* ------------------------------------------------------------------ */

static int hello(int fd, const struct si_opts *o, const struct si_dev *d,
		 enum ibv_mtu *peer_mtu, bool client)
{
	struct si_msg m, r;
	double deadline = si_now() + (client ? o->timeout : o->wait);

	memset(&m, 0, sizeof(m));
	m.type = SI_MSG_HELLO;
	m.v[SI_HELLO_VERSION] = SI_PROTO_VERSION;
	m.v[SI_HELLO_MTU] = d->mtu;
	if (client && si_ctl_send(fd, &m))
		return -1;
	if (si_ctl_recv(fd, &r, deadline) || r.type != SI_MSG_HELLO) {
		si_vlog(0, "no greeting from the peer");
		return -1;
	}
	if (r.v[SI_HELLO_VERSION] != SI_PROTO_VERSION) {
		si_vlog(0, "peer speaks protocol version %llu, not %u",
			(unsigned long long)r.v[SI_HELLO_VERSION],
			SI_PROTO_VERSION);
		return -1;
	}
	if (!client && si_ctl_send(fd, &m))
		return -1;
	*peer_mtu = r.v[SI_HELLO_MTU];
	return 0;
}

static int run_server(const struct si_opts *o, struct si_dev *d)
{
	char err[SI_ERR_LEN];
	enum ibv_mtu peer_mtu;
	int lfd, fd, rc;

	lfd = si_ctl_listen(o->port, err, sizeof(err));
	if (lfd < 0) {
		si_vlog(0, "%s", err);
		return 2;
	}
	si_vlog(1, "listening on port %s", o->port);
	fd = si_ctl_accept(lfd, o->wait, err, sizeof(err));
	close(lfd);
	if (fd < 0) {
		si_vlog(0, "%s", err);
		return 2;
	}
	if (hello(fd, o, d, &peer_mtu, false)) {
		close(fd);
		return 2;
	}
	rc = si_server_session(d, o, fd);
	close(fd);
	return rc;
}

static int run_client(const struct si_opts *o, struct si_dev *d)
{
	struct si_client cl = { .o = o, .d = d };
	struct case_list list = { 0 };
	unsigned int i, passed = 0, failed = 0;
	char err[SI_ERR_LEN], label[96];
	enum ibv_mtu peer_mtu, mtu;
	struct si_msg m;
	bool stop = false;
	double t0;
	int rc;

	cl.fd = si_ctl_connect(o->server, o->port, o->wait, err, sizeof(err));
	if (cl.fd < 0) {
		si_vlog(0, "%s", err);
		return 2;
	}
	if (hello(cl.fd, o, d, &peer_mtu, true)) {
		close(cl.fd);
		return 2;
	}
	mtu = peer_mtu < d->mtu ? peer_mtu : d->mtu;
	list.c = calloc(SI_MAX_CASES, sizeof(*list.c));
	if (!list.c) {
		close(cl.fd);
		return 2;
	}
	build_cases(&list, o, d, mtu);

	printf("# sroce-integrity: %s gid %d, path MTU %u, seed %llu, max inline rc/uc/ud %u/%u/%u\n",
	       ibv_get_device_name(d->ctx->device), o->gidx,
	       si_mtu_bytes(mtu), (unsigned long long)o->seed,
	       d->max_inline[0], d->max_inline[1], d->max_inline[2]);
	printf("1..%u\n", list.n);
	fflush(stdout);

	for (i = 0; i < list.n && !stop; i++) {
		const struct si_case *c = &list.c[i];

		case_label(c, label, sizeof(label));
		t0 = si_now();
		rc = si_client_case(&cl, c, err, sizeof(err));
		if (!rc) {
			passed++;
			printf("ok %u - %s\n", c->index, label);
		} else {
			failed++;
			printf("not ok %u - %s\n", c->index, label);
			printf("# %s size %u%s: %s\n", si_ops[c->op].label,
			       c->size, si_variant_names[c->var], err);
			fprintf(stderr, "sroce-integrity: FAIL %s size %u%s: %s\n",
				si_ops[c->op].label, c->size,
				si_variant_names[c->var], err);
			if (rc < 0) {
				printf("Bail out! control connection to the server lost\n");
				stop = true;
			} else if (!o->keep_going) {
				stop = true;
			}
		}
		if (o->verbose)
			printf("# %u messages, psn 0x%06x/0x%06x, %.2f s\n",
			       c->count, c->cpsn, c->spsn, si_now() - t0);
		fflush(stdout);
	}
	if (i < list.n)
		printf("# stopped after case %u: %u of %u cases not run\n",
		       list.c[i - 1].index, list.n - i, list.n);

	memset(&m, 0, sizeof(m));
	m.type = SI_MSG_QUIT;
	m.v[SI_QUIT_FAILED] = failed;
	si_ctl_send(cl.fd, &m);
	close(cl.fd);
	free(list.c);

	printf("%u passed, %u failed\n", passed, failed);
	fflush(stdout);
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct si_opts o;
	struct si_dev d;
	char err[SI_ERR_LEN];
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_args(argc, argv, &o);
	if (si_dev_open(&d, &o, err, sizeof(err))) {
		si_vlog(0, "%s", err);
		return 2;
	}
	rc = o.server ? run_client(&o, &d) : run_server(&o, &d);
	si_dev_close(&d);
	return rc;
}
