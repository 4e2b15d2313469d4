/* cli-approval.c — the front-end side of the approval step for `cordon
 * run`: what the waiting process prints, the optional prompt on the
 * operator's terminal, and who is asking.  The gate (gate-approval.c)
 * queues, decides, records and consumes. */
#include "cli.h"

#include "util/buf.h"
#include "gate/gate-approval.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <stdlib.h>
#include <unistd.h>

static void queued(const struct cd_approval *a, void *ctx)
{
	char until[32];

	(void)ctx;
	cli_time_utc(a->deadline, until, sizeof until);
	cli_errorf("held for approval %s (agent %s, tool %s): run 'cordon approvals show %s', then "
	           "'approve' or 'deny' it before %s",
	           a->id, a->agent, a->tool, a->id, until);
}

struct prompt_ctx {
	const struct cd_policy *policy;
};

/* Ask on /dev/tty until the deadline.  Every byte shown is escaped: the
 * arguments are the agent's. */
static int prompt(const struct cd_approval *a, void *ctx, char *by, size_t bylen)
{
	struct prompt_ctx *p = ctx;
	const char *me = cli_login_name();
	char why[256], line[16];
	struct cd_buf b;
	int fd, v = -1;

	if (!cd_policy_approver_person(p->policy, me, a->agent, why, sizeof why)) {
		cli_warnf("not asking on the terminal: %s", why);
		return -1;
	}
	fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		cli_warnf("--approve-interactive: no terminal (%s); waiting for the queue",
		          strerror(errno));
		return -1;
	}
	cd_buf_init(&b, 1 << 20);
	if (cd_buf_printf(&b, "\ncordon: approval %s: agent ", a->id) == 0 &&
	    cd_buf_escape(&b, a->agent, strlen(a->agent)) == 0 &&
	    cd_buf_append(&b, " wants tool ", 12) == 0 &&
	    cd_buf_escape(&b, a->tool, strlen(a->tool)) == 0 &&
	    cd_buf_printf(&b, " (%s, %s) with\n  ", a->action, a->approval) == 0 &&
	    cd_buf_escape(&b, a->args_json, strlen(a->args_json)) == 0 &&
	    cd_buf_printf(&b, "\nApprove as %s? [y/N] ", me) == 0)
		(void)!write(fd, b.data, b.len);
	cd_buf_release(&b);
	for (;;) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		int64_t left = a->deadline - (int64_t)time(NULL);
		ssize_t n;
		if (left <= 0)
			break;
		if (poll(&pfd, 1, (int)(left > 3600 ? 3600000 : left * 1000)) <= 0)
			continue;
		n = read(fd, line, sizeof line - 1);
		if (n <= 0)
			break;
		line[n] = '\0';
		v = line[0] == 'y' || line[0] == 'Y';
		break;
	}
	close(fd);
	snprintf(by, bylen, "%s", me);
	return v;
}

int cli_await_approval(const struct cd_gate *g, struct cd_run_request *rq, struct cd_decision *dec,
                       struct cd_state *state, int64_t timeout_s, int interactive,
                       char approval_id[64])
{
	struct cd_approval_wait w;
	struct prompt_ctx pc = { g->policy };
	struct cd_err err = { 0, "" };
	char *requester;
	json_t *o;

	o = json_pack("{s:s,s:I,s:I,s:I,s:s}", "front_end", "run", "pid", (json_int_t)getpid(),
	              "ppid", (json_int_t)getppid(), "uid", (json_int_t)getuid(), "user",
	              cli_login_name());
	requester = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(o);
	memset(&w, 0, sizeof w);
	w.state = state;
	w.timeout_s = timeout_s;
	w.requester = requester;
	w.queued = queued;
	w.prompt = interactive ? prompt : NULL;
	w.ctx = &pc;
	if (cd_gate_await_approval(g, rq, rq->cwd, dec, &w, approval_id, &err) < 0) {
		cli_errorf("approval: %s", err.msg);
		free(requester);
		return -1;
	}
	free(requester);
	return 0;
}
