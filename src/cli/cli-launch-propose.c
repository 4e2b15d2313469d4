/* cli-launch-propose.c — proposal mode (--propose): the overlay's layer,
 * a capped tmpfs the sandbox makes and hands over after the run, measured
 * against its caps, and the proposal made from it: recorded first, then
 * stored beside the state database, where no sandbox sees it.  What the
 * layer holds was written by the command and is untrusted: the proposal
 * scan reads it without following links.
 */
#include "cli.h"
#include "cli-launch-int.h"

#include "store/state.h"
#include "util/fs.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

int launch_layer_make(struct layer *l, const char *run_id)
{
	struct cd_err err = { 0, "" };
	int r = cli_proposal_layer_dir(NULL, run_id, l->dir, sizeof l->dir);

	if (r < 0) {
		cli_errorf("--propose: no place for the proposal: %s", cd_strerror(r));
		return -1;
	}
	snprintf(l->store, sizeof l->store, "%s/upper", l->dir);
	if (cd_mkdir_parents(l->dir, &err) < 0) {
		cli_errorf("--propose: %s", err.msg);
		return -1;
	}
	if (mkdir(l->dir, 0700) < 0) {
		cli_errorf("--propose: cannot create '%s': %s", l->dir, cd_strerror(-errno));
		return -1;
	}
	l->made = 1;
	return 0;
}

/* The sandbox hands the layer over once the run has ended. */
void launch_layer_take(int fd, void *ctx)
{
	struct layer *l = ctx;

	if (l->fd >= 0)
		close(l->fd);
	l->fd = fd;
}

/* What the run left in the layer, against its caps: "full" when no block
 * (or no inode) was left, so a write past the cap failed with ENOSPC
 * inside.  (A failed write whose partial output was removed afterwards,
 * as overlayfs does with a copy-up that did not fit, leaves the layer
 * below its cap and is not seen here.) */
void launch_layer_measure(struct layer *l, const struct cd_limits *lim)
{
	struct statfs sf;

	if (l->fd < 0 || fstatfs(l->fd, &sf) < 0)
		return;
	l->use.size = lim->propose_size;
	l->use.inodes = lim->propose_inodes;
	l->use.used = (uint64_t)(sf.f_blocks - sf.f_bfree) * (uint64_t)sf.f_bsize;
	l->use.used_inodes = (uint64_t)(sf.f_files - sf.f_ffree);
	l->use.bytes_full = sf.f_bfree == 0;
	l->use.inodes_full = sf.f_ffree == 0;
	l->measured = 1;
	if (l->use.bytes_full || l->use.inodes_full) {
		char cap[32], what[96];
		int n;

		cli_size_human(l->use.size, cap, sizeof cap);
		if (l->use.bytes_full && l->use.inodes_full)
			n = snprintf(what, sizeof what, "--propose-size %s, --propose-inodes %llu",
			             cap, (unsigned long long)l->use.inodes);
		else if (l->use.bytes_full)
			n = snprintf(what, sizeof what, "--propose-size %s", cap);
		else
			n = snprintf(what, sizeof what, "--propose-inodes %llu",
			             (unsigned long long)l->use.inodes);
		if (n < 0)
			what[0] = '\0';
		cli_warnf(
		        "--propose: the layer was full (%s): writes past it failed with 'No space "
		        "left on device' inside; the proposal holds what fit",
		        what);
	}
}

json_t *launch_layer_json(const struct layer *l)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:b,s:b}", "size", (json_int_t)l->use.size, "inodes",
	                 (json_int_t)l->use.inodes, "used", (json_int_t)l->use.used, "used_inodes",
	                 (json_int_t)l->use.used_inodes, "bytes_full", l->use.bytes_full,
	                 "inodes_full", l->use.inodes_full);
}

void launch_layer_done(struct layer *l)
{
	if (l->fd >= 0)
		close(l->fd); /* the tmpfs goes with its last reference */
	l->fd = -1;
	if (l->made && !l->keep)
		cd_prop_remove_tree(l->dir);
	l->made = 0;
}

/* After a --propose run: the change set, its content stored, recorded.
 * 0, or -1 (reported): the proposal is lost, cordon fails. */
int launch_make_proposal(struct layer *l, const struct cd_plan *plan, const struct run_args *a,
                         const char *run_id, const struct cd_result *res, struct cd_state *state,
                         struct cd_audit *audit)
{
	struct cd_err err = { 0, "" };
	struct cd_proposal *p = NULL;
	struct cd_prop_scan_in in;
	size_t c[CD_PROP_NOPS], fl;
	struct timespec t0, t1;
	unsigned char key[CD_PROPOSAL_KEY_LEN];
	long ms;
	int upfd, r;

	if (l->fd < 0) {
		if (res->reason == CD_REASON_SETUP_ERROR)
			return 0; /* the sandbox never ran: said already */
		cli_errorf("--propose: the sandbox handed back no layer: no proposal");
		return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	upfd = openat(l->fd, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (upfd < 0) {
		cli_errorf("--propose: the layer has no upper directory: %s", cd_strerror(-errno));
		return -1;
	}
	memset(&in, 0, sizeof in);
	in.tree = plan->cwd;
	in.upper_fd = upfd;
	in.store = l->store;
	in.max_bytes = plan->limits.propose_size;
	in.run_id = run_id;
	in.agent = a->agent;
	in.task = a->task;
	in.now = (int64_t)time(NULL);
	in.git.home = getenv("HOME");
	in.git.xdg_config_home = getenv("XDG_CONFIG_HOME");
	in.git.global = getenv("GIT_CONFIG_GLOBAL");
	in.git.system = getenv("GIT_CONFIG_SYSTEM");
	in.git.template_dir = getenv("GIT_TEMPLATE_DIR");
	in.path = getenv("PATH");
	r = cd_proposal_scan(&in, &p, &err);
	close(upfd);
	if (r < 0) {
		cli_errorf("--propose: no proposal: %s", err.msg);
		return -1;
	}
	p->layer = l->use;
	if (p->nfiles == 0) {
		cli_warnf("--propose: no file changed: no proposal");
		cd_proposal_free(p);
		return 0;
	}
	/* The record first: a proposal the log does not know is never stored
	 * (the real tree is untouched either way). */
	if (cli_proposal_record(audit, p, "proposal.created", NULL, NULL) < 0) {
		cd_proposal_free(p);
		return -1;
	}
	if (cli_proposal_key(NULL, key) < 0 || (r = cd_proposal_save(state, key, p, &err)) < 0) {
		sodium_memzero(key, sizeof key);
		if (err.msg[0])
			cli_errorf("--propose: %s", err.msg);
		cd_proposal_free(p);
		return -1;
	}
	sodium_memzero(key, sizeof key);
	l->keep = 1;
	cd_proposal_counts(p, c, &fl);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (long)(t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	cli_warnf("proposal %s (computed in %ld ms): %zu added, %zu modified, %zu deleted, %zu "
	          "mkdir, %zu rmdir, %zu refused, %zu flagged%s; review with 'cordon proposals "
	          "show %s'",
	          p->id, ms, c[CD_PROP_ADDED], c[CD_PROP_MODIFIED], c[CD_PROP_DELETED],
	          c[CD_PROP_MKDIR], c[CD_PROP_RMDIR], c[CD_PROP_REFUSED], fl,
	          p->layer.bytes_full || p->layer.inodes_full ? " (made on a full layer)" : "",
	          p->id);
	cd_proposal_free(p);
	return 0;
}
