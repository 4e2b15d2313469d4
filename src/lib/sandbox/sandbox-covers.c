/* sandbox-covers.c — keep covered credentials covered, or stop the run.
 *
 * A credential inside a bound tree is hidden by a /dev/null (or empty
 * tmpfs) mount over it.  When a host process replaces the file (an
 * editor's atomic save renames a new file over it; rm and recreate), the
 * kernel detaches mounts on the old dentry and the new file shows through
 * uncovered.  The supervisor watches the host parent directory of every
 * covered credential with inotify, set before the child mounts anything,
 * and kills the sandbox as soon as a covered name changes (fail closed).
 * The sandbox cannot cause these events for a covered name itself: a
 * mount point can be neither renamed nor unlinked in its namespace; it
 * may create other names in the same directory, which are ignored.
 */
#include "sandbox-int.h"

#include "util/path.h"
#include "util/util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <unistd.h>

#define COVER_WATCH_MAX 4096 /* distinct parent directories watched */
#define COVER_EVENTS    (IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM | IN_ONLYDIR)

/* Is m a credential cover the tree walk planned? */
static int is_cred_cover(const struct cd_mount *m)
{
	return m->kind == CD_MNT_MASK && m->why && !strncmp(m->why, "credential file", 15);
}

/* The host path that mount i's dest shows: through the last bind placed
 * before it whose dest holds it, or the proposal overlay (its src is the
 * lower layer, the real tree: a cover there hides the credential in the
 * merged view, and a replacement on the host shows in the lower layer).
 * -1 when none does. */
static int cover_host(const struct cd_plan *plan, size_t i, char *out, size_t outlen)
{
	const char *dest = plan->mounts[i].dest;
	size_t j = i;

	while (j-- > 0) {
		const struct cd_mount *b = &plan->mounts[j];
		size_t dl;
		int n;

		if ((b->kind != CD_MNT_BIND && b->kind != CD_MNT_OVERLAY) || !b->src ||
		    !cd_path_is_under(dest, b->dest))
			continue;
		dl = strcmp(b->dest, "/") ? strlen(b->dest) : 0;
		n = snprintf(out, outlen, "%s%s", strcmp(b->src, "/") || !dest[dl] ? b->src : "",
		             dest + dl);
		return n < 0 || (size_t)n >= outlen ? -1 : 0;
	}
	return -1;
}

static int add_watch(struct cd_supervisor *s, const char *host, int *maxwd, struct cd_err *err)
{
	struct cd_cover_watch *c = &s->covers[s->ncovers];
	char *slash;
	int wd;

	c->host = strdup(host);
	if (!c->host)
		return cd_err_set(err, -ENOMEM, "allocate the credential watches");
	slash = strrchr(c->host, '/');
	if (!slash || !slash[1]) {
		free(c->host);
		return cd_err_set(err, -EINVAL, "cannot watch covered credential '%s'", host);
	}
	*slash = '\0';
	wd = inotify_add_watch(s->cover_fd, slash == c->host ? "/" : c->host, COVER_EVENTS);
	*slash = '/';
	if (wd < 0) {
		int e = errno;
		free(c->host);
		return cd_err_sys(err, -e,
		                  "cannot watch the directory of covered credential '%s' for a "
		                  "replacement on the host (inotify limits?): the run is refused",
		                  host);
	}
	if (wd > *maxwd)
		*maxwd = wd;
	c->wd = wd;
	c->name = slash + 1;
	s->ncovers++;
	return 0;
}

int cd_sup_cover_watch(struct cd_supervisor *s, const struct cd_plan *plan, struct cd_err *err)
{
	char host[PATH_MAX];
	size_t i, n = 0;
	int maxwd = 0, r;

	s->cover_fd = -1;
	for (i = 0; i < plan->nmounts; i++)
		n += is_cred_cover(&plan->mounts[i]) != 0;
	if (!n)
		return 0;
	s->covers = calloc(n, sizeof *s->covers);
	s->cover_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (!s->covers || s->cover_fd < 0) {
		r = cd_err_sys(err, s->covers ? -errno : -ENOMEM,
		               "cannot watch covered credentials for a replacement on the host: "
		               "the run is refused");
		cd_sup_cover_release(s);
		return r;
	}
	for (i = 0; i < plan->nmounts; i++) {
		if (!is_cred_cover(&plan->mounts[i]))
			continue;
		if (cover_host(plan, i, host, sizeof host) < 0) {
			r = cd_err_set(
			        err, -EINVAL,
			        "no host path for covered credential '%s': the run is refused",
			        plan->mounts[i].dest);
			cd_sup_cover_release(s);
			return r;
		}
		if ((r = add_watch(s, host, &maxwd, err)) < 0) {
			cd_sup_cover_release(s);
			return r;
		}
		if (maxwd > COVER_WATCH_MAX) {
			cd_sup_cover_release(s);
			return cd_err_set(
			        err, -E2BIG,
			        "covered credentials lie in more than %d directories: too many "
			        "to watch for a replacement on the host, so the run is refused",
			        COVER_WATCH_MAX);
		}
	}
	return 0;
}

static void stop_run(struct cd_supervisor *s, const char *host)
{
	int n;

	if (s->killed_cover)
		return;
	s->killed_cover = 1;
	n = snprintf(s->res->error, sizeof s->res->error,
	             "a covered credential '%s' was replaced on the host during the run: the run "
	             "was stopped",
	             host);
	if (n < 0)
		s->res->error[0] = '\0';
	cd_sup_kill_sandbox(s);
}

void cd_sup_cover_event(struct cd_supervisor *s)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t len;

	while ((len = read(s->cover_fd, buf, sizeof buf)) > 0) {
		const char *p = buf;

		while (p < buf + len) {
			const struct inotify_event *ev =
			        (const struct inotify_event *)(const void *)p;
			size_t i;

			if (ev->mask & IN_Q_OVERFLOW) /* events lost: one may be ours */
				stop_run(s, s->covers[0].host);
			for (i = 0; ev->len && i < s->ncovers; i++)
				if (s->covers[i].wd == ev->wd &&
				    !strcmp(s->covers[i].name, ev->name))
					stop_run(s, s->covers[i].host);
			p += sizeof *ev + ev->len;
		}
	}
}

void cd_sup_cover_release(struct cd_supervisor *s)
{
	size_t i;

	for (i = 0; i < s->ncovers; i++)
		free(s->covers[i].host);
	free(s->covers);
	s->covers = NULL;
	s->ncovers = 0;
	cd_closep(&s->cover_fd);
}
