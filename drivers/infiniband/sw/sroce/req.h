/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The requester (req.c): send WQEs to request packets, within the window.
 */
#ifndef _SROCE_REQ_H
#define _SROCE_REQ_H

struct sroce_qp;
struct work_struct;

/*
 * Unacknowledged request PSNs an RC QP may have outstanding: at most
 * SROCE_WINDOW_MAX, and after a loss, from SROCE_WINDOW_MIN up again as
 * ACKs arrive, so that a go-back does not flood a congested path.
 */
#define SROCE_WINDOW_MAX	256
#define SROCE_WINDOW_MIN	16

void sroce_req_run(struct sroce_qp *qp);
void sroce_req_work(struct work_struct *work);

#endif /* _SROCE_REQ_H */
