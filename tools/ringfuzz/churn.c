// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-ringfuzz churn: one process, many threads, the same objects.
 *
 * RC and UD QPs (the RC ones connected to themselves) live in slots.
 * Posters send and receive on them, a state thread moves them between
 * RESET, INIT, RTR, RTS, SQD and ERR, a recycler destroys and recreates
 * them, and a multicast thread attaches and detaches UD QPs to groups
 * (v4-mapped ::ffff:239.1.2.x and ff0e::x) and sends datagrams to the
 * groups. Each thread runs a fixed number of iterations (-n). Afterwards
 * every object is destroyed, and fresh QPs show the device still moves
 * checked data, unicast and multicast: also to two QPs of one group whose
 * receive buffers are in an on-demand region with its pages taken away,
 * and from a UD send that waited in SQD while its AH was destroyed.
 *
 * No call may block for ever: a watchdog names a call that has not
 * returned after WATCH_MS (times SROCE_SLOW), fails and ends the process,
 * e.g. a destroy that waits for a reference the driver never drops.
 */
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ringfuzz.h"

#define NSLOT		8
#define NGROUP		8
#define NTHREAD		5
#define CHURN_DEFAULT	400
#define SLOT_BUF	4096
#define MSG_LEN		64
#define WATCH_MS	60000
#define MCAST_QPN	0xffffff

enum { T_POST0, T_POST1, T_STATE, T_RECYCLE, T_MCAST };

struct slot {
	pthread_rwlock_t	lock;	/* write: destroy and create */
	struct ibv_qp		*qp;
	uint32_t		groups;	/* bit g: attached to group g */
	pthread_mutex_t		glock;	/* for groups */
};

/* What a thread is doing, for the watchdog. */
struct watch {
	const char	*what;
	uint32_t	qpn;
	uint64_t	since;	/* 0: in no call */
};

struct churn {
	struct rf_dev	*d;
	struct ibv_cq	*cq;
	struct ibv_mr	*mr;
	struct ibv_ah	*self_ah;
	struct ibv_ah	*group_ah[NGROUP];
	union ibv_gid	group[NGROUP];
	struct slot	slot[NSLOT];
	struct watch	watch[NTHREAD + 1];	/* + the main thread */
	volatile bool	stop;		/* the poller */
	volatile bool	done;		/* the watchdog */
	unsigned long	ops[NTHREAD], errs[NTHREAD];
	unsigned long	wc_ok, wc_err;
	unsigned long	destroy_failed;
	unsigned int	iters;
};

struct worker {
	struct churn	*c;
	int		id;
	uint64_t	rng;
};

static void watch_in(struct churn *c, int id, const char *what, uint32_t qpn)
{
	c->watch[id].what = what;
	c->watch[id].qpn = qpn;
	__atomic_store_n(&c->watch[id].since, rf_now_ms(), __ATOMIC_RELEASE);
}

static void watch_out(struct churn *c, int id)
{
	__atomic_store_n(&c->watch[id].since, 0, __ATOMIC_RELEASE);
}

static void *watchdog(void *arg)
{
	struct churn *c = arg;
	uint64_t limit = (uint64_t)WATCH_MS * rf_slow, since;
	int i;

	while (!c->done) {
		rf_msleep(500);
		for (i = 0; i <= NTHREAD; i++) {
			since = __atomic_load_n(&c->watch[i].since,
						__ATOMIC_ACQUIRE);
			if (!since || rf_now_ms() - since < limit)
				continue;
			rf_ok(false, "churn: %s (QP 0x%x) has not returned after %llu s: the driver waits for something that never comes (a leaked QP reference?)",
			      c->watch[i].what, c->watch[i].qpn,
			      (unsigned long long)(rf_now_ms() - since) / 1000);
			rf_done();
			_exit(1);
		}
	}
	return NULL;
}

/* The multicast GIDs: ::ffff:239.1.2.x and ff0e::x. */
static void group_gid(union ibv_gid *g, int i)
{
	memset(g, 0, sizeof(*g));
	if (i % 2 == 0) {
		g->raw[10] = 0xff;
		g->raw[11] = 0xff;
		g->raw[12] = 239;
		g->raw[13] = 1;
		g->raw[14] = 2;
		g->raw[15] = 1 + i / 2;
	} else {
		g->raw[0] = 0xff;
		g->raw[1] = 0x0e;
		g->raw[15] = 1 + i / 2;
	}
}

/* The AH for group @i: IPv6 groups only with an IPv6 source GID (-G). */
static struct ibv_ah *group_ah(struct rf_dev *d, int i, const union ibv_gid *g)
{
	if (i % 2 == 0)
		return rf_ah(d, g);
	return rf_ah_from(d, g, d->gidx6 >= 0 ? d->gidx6 : d->gidx);
}

static struct ibv_qp *qp_new(struct churn *c, enum ibv_qp_type type)
{
	struct rf_qp q;

	if (rf_qp_create(c->d, &q, type, c->cq, c->cq, NULL, 32, false))
		return NULL;
	rf_qp_connect(c->d, q.qp, q.qp->qp_num);
	return q.qp;
}

/*
 * Destroy a slot's QP under the watchdog; the slot is write-locked.
 * uverbs refuses (EBUSY) to destroy a QP still attached to a group.
 */
static void slot_clear(struct churn *c, int id, struct slot *s)
{
	int g;

	if (!s->qp)
		return;
	watch_in(c, id, "ibv_detach_mcast", s->qp->qp_num);
	for (g = 0; g < NGROUP; g++)
		if (s->groups & 1u << g &&
		    ibv_detach_mcast(s->qp, &c->group[g], 0))
			rf_diag("ibv_detach_mcast(0x%x, group %d): %s",
				s->qp->qp_num, g, strerror(errno));
	watch_in(c, id, s->qp->qp_type == IBV_QPT_UD ?
		 "ibv_destroy_qp of a UD QP" : "ibv_destroy_qp of an RC QP",
		 s->qp->qp_num);
	if (ibv_destroy_qp(s->qp)) {
		rf_diag("ibv_destroy_qp(0x%x): %s", s->qp->qp_num,
			strerror(errno));
		c->destroy_failed++;
	}
	watch_out(c, id);
	s->qp = NULL;
	s->groups = 0;
}

static int post_one(struct churn *c, struct ibv_qp *qp, unsigned int sl,
		    uint64_t r)
{
	uint8_t *buf = (uint8_t *)c->mr->addr + sl * SLOT_BUF;
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf, .length = MSG_LEN, .lkey = c->mr->lkey,
	};
	struct ibv_sge rsge = {
		.addr = (uintptr_t)buf + 1024, .length = 1024,
		.lkey = c->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = r, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_recv_wr rwr = {
		.wr_id = r, .sg_list = &rsge, .num_sge = 1,
	}, *rbad;
	int err;

	err = ibv_post_recv(qp, &rwr, &rbad);
	if (qp->qp_type == IBV_QPT_UD) {
		int g = (r >> 8) % (NGROUP + 1);

		wr.wr.ud.remote_qkey = RF_QKEY;
		if (g < NGROUP) {
			wr.wr.ud.ah = c->group_ah[g];
			wr.wr.ud.remote_qpn = MCAST_QPN;
		} else {
			wr.wr.ud.ah = c->self_ah;
			wr.wr.ud.remote_qpn = qp->qp_num;
		}
	} else if (r & 1) {
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = (uintptr_t)buf + 2048;
		wr.wr.rdma.rkey = c->mr->rkey;
	}
	return ibv_post_send(qp, &wr, &bad) || err;
}

/* A move towards a random state, with what that state needs. */
static int move_qp(struct churn *c, struct ibv_qp *qp, uint64_t r)
{
	static const enum ibv_qp_state to[] = {
		IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS,
		IBV_QPS_SQD, IBV_QPS_ERR, IBV_QPS_RTS, IBV_QPS_INIT,
	};
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;
	enum ibv_qp_state want = to[r % 8];

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &init))
		return -1;
	switch (want) {
	case IBV_QPS_INIT:
		return rf_qp_init(c->d, qp);
	case IBV_QPS_RTR:
		return rf_qp_rtr(c->d, qp, qp->qp_num);
	case IBV_QPS_RTS:
		/* SQD to RTS takes no new attribute. */
		if (a.qp_state != IBV_QPS_SQD)
			return rf_qp_rts(c->d, qp);
		break;
	default:
		break;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = want;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

static int mcast_op(struct churn *c, struct slot *s, uint64_t r)
{
	int g = r % NGROUP, err;

	pthread_mutex_lock(&s->glock);
	if (s->groups & 1u << g) {
		err = ibv_detach_mcast(s->qp, &c->group[g], 0);
		if (!err)
			s->groups &= ~(1u << g);
	} else {
		err = ibv_attach_mcast(s->qp, &c->group[g], 0);
		if (!err)
			s->groups |= 1u << g;
	}
	pthread_mutex_unlock(&s->glock);
	return err;
}

static int one_op(struct worker *w, uint64_t r)
{
	struct churn *c = w->c;
	unsigned int sl = (r >> 32) % NSLOT;
	struct slot *s = &c->slot[sl];
	int err = 0;

	if (w->id == T_RECYCLE) {
		pthread_rwlock_wrlock(&s->lock);
		slot_clear(c, w->id, s);
		watch_in(c, w->id, "ibv_create_qp", 0);
		s->qp = qp_new(c, r & 1 ? IBV_QPT_UD : IBV_QPT_RC);
		watch_out(c, w->id);
		err = !s->qp;
		pthread_rwlock_unlock(&s->lock);
		return err;
	}
	pthread_rwlock_rdlock(&s->lock);
	if (!s->qp)
		goto out;
	watch_in(c, w->id, w->id == T_STATE ? "ibv_modify_qp" :
		 w->id == T_MCAST ? "ibv_attach/detach_mcast" : "ibv_post_send",
		 s->qp->qp_num);
	if (w->id == T_STATE)
		err = move_qp(c, s->qp, r);
	else if (w->id == T_MCAST && s->qp->qp_type == IBV_QPT_UD)
		err = mcast_op(c, s, r) || post_one(c, s->qp, sl, r);
	else if (w->id != T_MCAST)
		err = post_one(c, s->qp, sl, r);
	watch_out(c, w->id);
out:
	pthread_rwlock_unlock(&s->lock);
	return err;
}

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	unsigned int i;

	for (i = 0; i < w->c->iters; i++) {
		if (one_op(w, rf_rand(&w->rng)))
			w->c->errs[w->id]++;
		w->c->ops[w->id]++;
		if (w->id == T_RECYCLE)
			rf_msleep(2);
	}
	return NULL;
}

static void *poller(void *arg)
{
	struct churn *c = arg;
	struct ibv_wc wc[32];
	int n, i;

	while (!c->stop) {
		n = ibv_poll_cq(c->cq, 32, wc);
		for (i = 0; i < n; i++) {
			if (wc[i].status == IBV_WC_SUCCESS)
				c->wc_ok++;
			else
				c->wc_err++;
		}
		if (n <= 0)
			rf_msleep(1);
	}
	return NULL;
}

static int churn_setup(struct churn *c, struct rf_dev *d)
{
	int i;

	c->d = d;
	c->cq = rf_cq(d, 4096);
	c->mr = rf_mr(d, NSLOT * SLOT_BUF, IBV_ACCESS_LOCAL_WRITE |
		      IBV_ACCESS_REMOTE_WRITE);
	c->self_ah = rf_ah(d, &d->gid);
	if (!c->cq || !c->mr || !c->self_ah)
		return -1;
	for (i = 0; i < NGROUP; i++) {
		group_gid(&c->group[i], i);
		if (i % 2 && d->gidx6 < 0) {
			/* No IPv6 source GID: an IPv4 group takes its place. */
			group_gid(&c->group[i], i - 1);
			c->group_ah[i] = rf_ah(d, &c->group[i]);
		} else {
			c->group_ah[i] = group_ah(d, i, &c->group[i]);
		}
		if (!c->group_ah[i]) {
			rf_diag("ibv_create_ah for group %d: %s", i,
				strerror(errno));
			return -1;
		}
	}
	for (i = 0; i < NSLOT; i++) {
		pthread_rwlock_init(&c->slot[i].lock, NULL);
		pthread_mutex_init(&c->slot[i].glock, NULL);
		c->slot[i].qp = qp_new(c, i % 2 ? IBV_QPT_UD : IBV_QPT_RC);
		if (!c->slot[i].qp)
			return -1;
	}
	return 0;
}

/* Everything the churn made, destroyed; the main thread is watched too. */
static int churn_teardown(struct churn *c)
{
	int i, err = 0;

	for (i = 0; i < NSLOT; i++)
		slot_clear(c, NTHREAD, &c->slot[i]);
	if (c->destroy_failed)
		err = -1;
	watch_in(c, NTHREAD, "ibv_destroy_ah/cq, ibv_dereg_mr", 0);
	for (i = 0; i < NGROUP; i++)
		if (c->group_ah[i] && ibv_destroy_ah(c->group_ah[i]))
			err = -1;
	if (c->self_ah && ibv_destroy_ah(c->self_ah))
		err = -1;
	if (c->cq && ibv_destroy_cq(c->cq))
		err = -1;
	rf_mr_free(c->mr);
	watch_out(c, NTHREAD);
	return err;
}

/*
 * A SEND of MSG_LEN bytes from the start of a region into its byte 2048
 * on, the bytes it must deliver in @want.
 */
struct msg {
	uint8_t			*src, *dst;
	struct ibv_sge		sge, rsge;
	struct ibv_send_wr	wr;
	struct ibv_recv_wr	rwr;
	uint8_t			want[MSG_LEN];
};

static void msg_init(struct msg *m, struct ibv_mr *mr, uint64_t key)
{
	m->src = mr->addr;
	m->dst = (uint8_t *)mr->addr + 2048;
	m->sge = (struct ibv_sge){ (uintptr_t)m->src, MSG_LEN, mr->lkey };
	m->rsge = (struct ibv_sge){ (uintptr_t)m->dst, 1024, mr->lkey };
	m->wr = (struct ibv_send_wr){
		.wr_id = 1, .sg_list = &m->sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	m->rwr = (struct ibv_recv_wr){
		.wr_id = 2, .sg_list = &m->rsge, .num_sge = 1
	};
	rf_fill(m->src, MSG_LEN, key);
	rf_fill(m->want, MSG_LEN, key);
	memset(m->dst, 0, 1024);
}

/* One message from @from to @to (a group when @group), checked. */
static int check_msg(struct rf_dev *d, struct ibv_cq *cq, struct ibv_qp *from,
		     struct ibv_qp *to, struct ibv_ah *ah, bool group,
		     struct ibv_mr *mr, uint64_t key, bool expect, char *why,
		     size_t whylen)
{
	uint32_t grh = from->qp_type == IBV_QPT_UD ? RF_UD_GRH : 0;
	struct ibv_send_wr *bad;
	struct ibv_recv_wr *rbad;
	struct ibv_wc wc[2];
	int n = 0, got_recv = 0, i;
	struct msg m;

	(void)d;
	msg_init(&m, mr, key);
	if (ah) {
		m.wr.wr.ud.ah = ah;
		m.wr.wr.ud.remote_qpn = group ? MCAST_QPN : to->qp_num;
		m.wr.wr.ud.remote_qkey = RF_QKEY;
	}
	if (ibv_post_recv(to, &m.rwr, &rbad) ||
	    ibv_post_send(from, &m.wr, &bad)) {
		snprintf(why, whylen, "post: %s", strerror(errno));
		return -1;
	}
	n = rf_poll(cq, wc, expect ? 2 : 1, 10000);
	if (!expect)
		n += rf_poll(cq, wc + n, 2 - n, 500);
	for (i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			snprintf(why, whylen, "wr_id %llu: %s",
				 (unsigned long long)wc[i].wr_id,
				 rf_status(wc[i].status));
			return -1;
		}
		got_recv |= wc[i].wr_id == 2;
	}
	if (!expect) {
		if (got_recv) {
			snprintf(why, whylen, "a detached QP received the datagram");
			return -1;
		}
		/* Leave no receive behind: the QP is destroyed next anyway. */
		return 0;
	}
	if (n < 2 || !got_recv) {
		snprintf(why, whylen, "%d of 2 completions", n);
		return -1;
	}
	if (memcmp(m.dst + grh, m.want, MSG_LEN)) {
		snprintf(why, whylen, "payload differs");
		return -1;
	}
	return 0;
}

/* A datagram to group @gi reaches the attached QP, and not once detached. */
static void mcast_after(struct rf_dev *d, struct ibv_cq *cq, struct ibv_mr *mr,
			int gi)
{
	struct rf_qp u1 = {}, u2 = {};
	struct ibv_ah *ah = NULL;
	char why[160] = "setup failed", name[64];
	union ibv_gid g;
	int err = -1;

	group_gid(&g, gi);
	snprintf(name, sizeof(name), gi % 2 ? "ff0e::%d" : "::ffff:239.1.2.%d",
		 1 + gi / 2);
	ah = group_ah(d, gi, &g);
	if (!ah || rf_qp_create(d, &u1, IBV_QPT_UD, cq, cq, NULL, 8, false) ||
	    rf_qp_create(d, &u2, IBV_QPT_UD, cq, cq, NULL, 8, false) ||
	    rf_qp_connect(d, u1.qp, 0) || rf_qp_connect(d, u2.qp, 0))
		goto out;
	if (ibv_attach_mcast(u2.qp, &g, 0)) {
		snprintf(why, sizeof(why), "ibv_attach_mcast: %s", strerror(errno));
		goto out;
	}
	err = check_msg(d, cq, u1.qp, u2.qp, ah, true, mr, 8 + gi, true, why,
			sizeof(why));
	rf_ok(!err, "churn: afterwards a datagram to %s reaches the attached UD QP, payload checked%s%s",
	      name, err ? ": " : "", err ? why : "");
	if (ibv_detach_mcast(u2.qp, &g, 0)) {
		snprintf(why, sizeof(why), "ibv_detach_mcast: %s", strerror(errno));
		err = -1;
		goto out;
	}
	err = check_msg(d, cq, u1.qp, u2.qp, ah, true, mr, 9 + gi, false, why,
			sizeof(why));
out:
	rf_ok(!err, "churn: afterwards a UD QP detached from %s receives nothing from it%s%s",
	      name, err ? ": " : "", err ? why : "");
	rf_qp_destroy(&u1);
	rf_qp_destroy(&u2);
	if (ah)
		ibv_destroy_ah(ah);
}

/* Whether @n completions in @wc are all successful, @recvs of them receives. */
static bool wcs_ok(const struct ibv_wc *wc, int n, int recvs, char *why,
		   size_t whylen)
{
	int i, got = 0;

	for (i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			snprintf(why, whylen, "wr_id %llu: %s",
				 (unsigned long long)wc[i].wr_id,
				 rf_status(wc[i].status));
			return false;
		}
		got += wc[i].opcode == IBV_WC_RECV;
	}
	if (got != recvs) {
		snprintf(why, whylen, "%d receive completions of %d", got, recvs);
		return false;
	}
	return true;
}

/*
 * One datagram to group @g reaches both QPs of @rx, which receive into
 * @odp: MADV_DONTNEED first takes its pages from the device, so that each
 * QP finds them missing and holds the datagram while they are faulted in.
 */
static int mcast_odp_round(struct ibv_cq *cq, struct rf_qp *tx,
			   struct rf_qp *rx, struct ibv_ah *ah,
			   struct ibv_mr *smr, struct ibv_mr *odp,
			   uint64_t key, char *why, size_t whylen)
{
	uint8_t *src = smr->addr, *dst = odp->addr, want[MSG_LEN];
	struct ibv_sge sge = { (uintptr_t)src, MSG_LEN, smr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_recv_wr *rbad;
	struct ibv_wc wc[3];
	int i, n;

	rf_fill(src, MSG_LEN, key);
	rf_fill(want, MSG_LEN, key);
	if (madvise(dst, 2 * SLOT_BUF, MADV_DONTNEED)) {
		snprintf(why, whylen, "madvise: %s", strerror(errno));
		return -1;
	}
	for (i = 0; i < 2; i++) {
		struct ibv_sge rsge = {
			(uintptr_t)(dst + i * SLOT_BUF), 1024, odp->lkey
		};
		struct ibv_recv_wr rwr = {
			.wr_id = 10 + i, .sg_list = &rsge, .num_sge = 1
		};

		if (ibv_post_recv(rx[i].qp, &rwr, &rbad)) {
			snprintf(why, whylen, "ibv_post_recv: %s",
				 strerror(errno));
			return -1;
		}
	}
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = MCAST_QPN;
	wr.wr.ud.remote_qkey = RF_QKEY;
	if (ibv_post_send(tx->qp, &wr, &bad)) {
		snprintf(why, whylen, "ibv_post_send: %s", strerror(errno));
		return -1;
	}
	n = rf_poll(cq, wc, 3, 10000);
	if (!wcs_ok(wc, n < 0 ? 0 : n, 2, why, whylen))
		return -1;
	if (n != 3) {
		snprintf(why, whylen, "%d of 3 completions", n);
		return -1;
	}
	for (i = 0; i < 2; i++) {
		if (memcmp(dst + i * SLOT_BUF + RF_UD_GRH, want, MSG_LEN)) {
			snprintf(why, whylen, "QP %d's payload differs", i);
			return -1;
		}
	}
	return 0;
}

/*
 * Two UD QPs attached to one group, receiving into an on-demand region:
 * both hold the same datagram while pages are faulted in, and each must
 * get it intact.
 */
static void mcast_odp_after(struct rf_dev *d, struct ibv_cq *cq,
			    struct ibv_mr *smr)
{
	struct rf_qp tx = {}, rx[2] = {};
	struct ibv_mr *odp = NULL;
	struct ibv_ah *ah = NULL;
	char why[160] = "setup failed";
	union ibv_gid g;
	int err = -1, i, round = 0;
	void *buf = NULL;

	group_gid(&g, 0);
	ah = group_ah(d, 0, &g);
	if (posix_memalign(&buf, 4096, 2 * SLOT_BUF))
		buf = NULL;
	if (buf)
		odp = ibv_reg_mr(d->pd, buf, 2 * SLOT_BUF,
				 IBV_ACCESS_LOCAL_WRITE |
				 IBV_ACCESS_ON_DEMAND);
	if (!odp) {
		snprintf(why, sizeof(why), "on-demand region: %s",
			 strerror(errno));
		goto out;
	}
	if (!ah || rf_qp_create(d, &tx, IBV_QPT_UD, cq, cq, NULL, 8, false) ||
	    rf_qp_connect(d, tx.qp, 0))
		goto out;
	for (i = 0; i < 2; i++) {
		if (rf_qp_create(d, &rx[i], IBV_QPT_UD, cq, cq, NULL, 8,
				 false) ||
		    rf_qp_connect(d, rx[i].qp, 0) ||
		    ibv_attach_mcast(rx[i].qp, &g, 0))
			goto out;
	}
	for (round = 0; round < 8; round++) {
		err = mcast_odp_round(cq, &tx, rx, ah, smr, odp, 20 + round,
				      why, sizeof(why));
		if (err)
			break;
	}
out:
	rf_ok(!err, "churn: two UD QPs of one group, receiving into an on-demand region whose pages are taken away, each get the group's datagrams intact (%d rounds)%s%s",
	      round, err ? ": " : "", err ? why : "");
	for (i = 0; i < 2; i++) {
		if (rx[i].qp)
			ibv_detach_mcast(rx[i].qp, &g, 0);
		rf_qp_destroy(&rx[i]);
	}
	rf_qp_destroy(&tx);
	if (odp)
		ibv_dereg_mr(odp);
	free(buf);
	if (ah)
		ibv_destroy_ah(ah);
}

static int qp_to(struct ibv_qp *qp, enum ibv_qp_state state)
{
	struct ibv_qp_attr attr = { .qp_state = state };

	return ibv_modify_qp(qp, &attr, IBV_QP_STATE);
}

/*
 * A UD send posted while its QP is in SQD waits there: destroying its AH
 * meanwhile must return at once, and the datagram still goes, to the
 * address the AH had, once the QP is back in RTS.
 */
static void ah_sqd_after(struct churn *c, struct rf_dev *d, struct ibv_cq *cq,
			 struct ibv_mr *mr)
{
	struct rf_qp tx = {}, rx = {};
	struct ibv_send_wr *bad;
	struct ibv_recv_wr *rbad;
	struct ibv_ah *ah = NULL;
	char why[160] = "setup failed";
	struct ibv_wc wc[2];
	int err = -1, n;
	struct msg m;

	msg_init(&m, mr, 31);
	if (rf_qp_create(d, &tx, IBV_QPT_UD, cq, cq, NULL, 8, false) ||
	    rf_qp_create(d, &rx, IBV_QPT_UD, cq, cq, NULL, 8, false) ||
	    rf_qp_connect(d, tx.qp, 0) || rf_qp_connect(d, rx.qp, 0))
		goto out;
	ah = rf_ah(d, &d->gid);
	if (!ah || qp_to(tx.qp, IBV_QPS_SQD) ||
	    ibv_post_recv(rx.qp, &m.rwr, &rbad))
		goto out;
	m.wr.wr.ud.ah = ah;
	m.wr.wr.ud.remote_qpn = rx.qp->qp_num;
	m.wr.wr.ud.remote_qkey = RF_QKEY;
	if (ibv_post_send(tx.qp, &m.wr, &bad)) {
		snprintf(why, sizeof(why), "ibv_post_send in SQD: %s",
			 strerror(errno));
		goto out;
	}
	if (!rf_poll_quiet(cq, 200)) {
		snprintf(why, sizeof(why), "a completion while in SQD");
		goto out;
	}
	watch_in(c, NTHREAD, "ibv_destroy_ah of a send waiting in SQD",
		 tx.qp->qp_num);
	n = ibv_destroy_ah(ah);
	watch_out(c, NTHREAD);
	ah = NULL;
	if (n) {
		snprintf(why, sizeof(why), "ibv_destroy_ah: %s", strerror(n));
		goto out;
	}
	if (qp_to(tx.qp, IBV_QPS_RTS)) {
		snprintf(why, sizeof(why), "SQD to RTS: %s", strerror(errno));
		goto out;
	}
	n = rf_poll(cq, wc, 2, 10000);
	if (!wcs_ok(wc, n < 0 ? 0 : n, 1, why, sizeof(why)))
		goto out;
	if (n != 2) {
		snprintf(why, sizeof(why), "%d of 2 completions", n);
		goto out;
	}
	err = memcmp(m.dst + RF_UD_GRH, m.want, MSG_LEN) ? -1 : 0;
	if (err)
		snprintf(why, sizeof(why), "payload differs");
out:
	rf_ok(!err, "churn: a UD send waiting in SQD: its AH destroyed meanwhile, it goes out in RTS to the AH's address, payload checked%s%s",
	      err ? ": " : "", err ? why : "");
	if (ah)
		ibv_destroy_ah(ah);
	rf_qp_destroy(&tx);
	rf_qp_destroy(&rx);
}

/* After the churn: fresh QPs still move data, unicast and multicast. */
static void churn_after(struct churn *c, struct rf_dev *d)
{
	struct ibv_cq *cq = rf_cq(d, 64);
	struct ibv_mr *mr = rf_mr(d, 4096, IBV_ACCESS_LOCAL_WRITE);
	struct rf_qp rc = {};
	char why[160] = "setup failed";
	int err = -1;

	if (!cq || !mr ||
	    rf_qp_create(d, &rc, IBV_QPT_RC, cq, cq, NULL, 8, false) ||
	    rf_qp_connect(d, rc.qp, rc.qp->qp_num))
		goto rc_done;
	err = check_msg(d, cq, rc.qp, rc.qp, NULL, false, mr, 7, true, why,
			sizeof(why));
rc_done:
	rf_ok(!err, "churn: afterwards an RC QP moves a checked SEND%s%s",
	      err ? ": " : "", err ? why : "");
	rf_qp_destroy(&rc);
	if (cq && mr) {
		mcast_after(d, cq, mr, 0);
		if (d->gidx6 >= 0)
			mcast_after(d, cq, mr, 1);
		mcast_odp_after(d, cq, mr);
		ah_sqd_after(c, d, cq, mr);
	}
	if (cq)
		ibv_destroy_cq(cq);
	rf_mr_free(mr);
}

/*
 * A process that ends with UD QPs still attached to groups: a second
 * context whose QPs the kernel detaches and destroys when it is closed,
 * as it would at exit. Watched: the close must return.
 */
static void churn_abandon(struct churn *c)
{
	struct ibv_context *ctx = ibv_open_device(c->d->ctx->device);
	struct ibv_qp_init_attr attr = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_ah_attr ah_attr = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = c->group[0], .sgid_index = c->d->gidx,
			 .hop_limit = 64 },
	};
	static char buf[4096];
	struct ibv_send_wr wr = {
		.opcode = IBV_WR_SEND, .num_sge = 1,
		.wr.ud = { .remote_qpn = MCAST_QPN, .remote_qkey = RF_QKEY },
	}, *bad;
	struct ibv_recv_wr rwr = { .num_sge = 1 }, *rbad;
	struct ibv_sge sge = { (uintptr_t)buf, 1024, 0 };
	struct ibv_mr *mr = NULL;
	struct ibv_pd *pd;
	struct ibv_qp *qp;
	int i, g, k, attached = 0;

	if (!ctx)
		return;
	pd = ibv_alloc_pd(ctx);
	if (pd) {
		mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
		wr.wr.ud.ah = ibv_create_ah(pd, &ah_attr);
	}
	attr.send_cq = attr.recv_cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	for (i = 0; mr && wr.wr.ud.ah && attr.send_cq && i < 4; i++) {
		qp = ibv_create_qp(pd, &attr);
		if (!qp || rf_qp_connect(c->d, qp, 0))
			continue;
		for (g = 0; g < NGROUP; g += 2)
			attached += !ibv_attach_mcast(qp, &c->group[g], 0);
		/* Datagrams in flight to groups the QPs are members of. */
		sge.lkey = mr->lkey;
		wr.sg_list = &sge;
		rwr.sg_list = &sge;
		for (k = 0; k < 4; k++) {
			ibv_post_recv(qp, &rwr, &rbad);
			ibv_post_send(qp, &wr, &bad);
		}
	}
	watch_in(c, NTHREAD, "ibv_close_device with UD QPs attached to groups", 0);
	ibv_close_device(ctx);
	watch_out(c, NTHREAD);
	rf_ok(attached > 0, "churn: a context closed with %d multicast attachments of its UD QPs left to the kernel",
	      attached);
}

int rf_mode_churn(struct rf_dev *d)
{
	static const char *const names[NTHREAD] = {
		"poster", "poster", "state changes", "destroy/create", "multicast"
	};
	struct worker w[NTHREAD];
	pthread_t th[NTHREAD], wd, pl;
	struct churn *c;
	int i, err;

	c = calloc(1, sizeof(*c));
	if (!c)
		return 2;
	c->iters = rf_iters ? rf_iters : CHURN_DEFAULT;
	pthread_create(&wd, NULL, watchdog, c);
	err = churn_setup(c, d);
	rf_ok(!err, "churn: %d QPs (RC and UD), %d multicast groups set up",
	      NSLOT, NGROUP);
	if (err)
		goto out;
	pthread_create(&pl, NULL, poller, c);
	for (i = 0; i < NTHREAD; i++) {
		w[i] = (struct worker){ c, i, rf_seed * 31 + i };
		pthread_create(&th[i], NULL, worker_run, &w[i]);
	}
	for (i = 0; i < NTHREAD; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < NTHREAD; i++)
		rf_diag("%s thread: %lu operations, %lu refused", names[i],
			c->ops[i], c->errs[i]);
	rf_ok(true, "churn: %u iterations on each of %d threads returned",
	      c->iters, NTHREAD);
	c->stop = true;
	pthread_join(pl, NULL);
	rf_diag("completions: %lu successful, %lu with an error", c->wc_ok,
		c->wc_err);
out:
	err = churn_teardown(c);
	rf_ok(!err, "churn: every QP, AH, CQ and MR destroyed");
	if (!err)
		churn_after(c, d);
	churn_abandon(c);
	c->done = true;
	pthread_join(wd, NULL);
	free(c);
	return 0;
}
