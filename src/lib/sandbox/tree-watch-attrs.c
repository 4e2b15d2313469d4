/* tree-watch-attrs.c — the tree watcher's part that watches files' own
 * state (tree-watch.h, `attrs`): whether a regular file of a watched tree
 * became set-id or capable, which moves no directory's ctime and reaches
 * a directory's inotify watch only through the name it was made by.
 *
 * Running as root, the watcher also marks the filesystem of each tree it
 * passes (fanotify, FAN_ATTRIB on the whole filesystem, with file
 * handles), before the pass, so the mark is older than the tree's
 * `complete` generation.  Each event's file is opened by its handle and
 * looked at: set-id, or carrying security.capability (or not looked at:
 * any failure but "gone"), and every tree on that filesystem vouches for
 * its files' state only from the next generation on (`attrs_gen`; its
 * directories as before: a run whose files' state does not matter keeps
 * its list).  An overflowed fanotify queue does that for every tree.
 *
 * Two filesystems may share an fsid (an image copied, a snapshot: an
 * ext4 fsid is its UUID); an event's handle is then looked at on each
 * of them that holds a tree. */
#include "tree-watchd-int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/xattr.h>
#include <unistd.h>

/* tree-watchd-int.h */
int cd_watchd_attrs_mark(struct wstate *s, struct wtree *t, int topfd)
{
	struct statfs sf;

	if (s->fan < 0 || fstatfs(topfd, &sf) < 0 ||
	    fanotify_mark(s->fan, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, FAN_ATTRIB, topfd, ".") < 0)
		return 0;
	memcpy(&t->fsid, &sf.f_fsid, sizeof t->fsid);
	return 1;
}

/* Could the file open at fd (O_PATH) grant ids when run: a regular file
 * set-id or carrying file capabilities?  Any doubt says yes. */
static int file_grants(int fd)
{
	char proc[64];
	struct statx sx;

	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_MODE, &sx) < 0 ||
	    !(sx.stx_mask & STATX_TYPE) || !(sx.stx_mask & STATX_MODE))
		return 1;
	if (!S_ISREG(sx.stx_mode))
		return 0;
	if (sx.stx_mode & (S_ISUID | S_ISGID))
		return 1;
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	if (getxattr(proc, "security.capability", NULL, 0) >= 0)
		return 1;
	return errno != ENODATA && errno != ENOTSUP;
}

/* A file on filesystem fsid (NULL: any) may grant ids now: each tree
 * there vouches for its files' own state from the next generation on. */
static void attrs_stale(struct wstate *s, const uint64_t *fsid)
{
	size_t i;

	for (i = 1; i <= TREES_MAX; i++) {
		struct wtree *t = &s->trees[i];

		if (t->path && t->attrs && (!fsid || t->fsid == *fsid) && t->attrs_gen < s->cur + 1)
			t->attrs_gen = s->cur + 1;
	}
}

/* One fanotify event: the file it names looked at through a tree on its
 * filesystem (tops: each tree's top, opened on first use this drain). */
static void attrs_event(struct wstate *s, const struct fanotify_event_metadata *m, int *tops)
{
	const struct fanotify_event_info_fid *f = (const void *)(m + 1);
	union {
		struct file_handle h;
		char b[sizeof(struct file_handle) + 128];
	} fh;
	size_t hoff = sizeof *m + sizeof *f, hl;
	uint64_t fsid;
	uint32_t id;
	int fd, grants;

	if (m->event_len < hoff + sizeof fh.h || f->hdr.info_type != FAN_EVENT_INFO_TYPE_FID) {
		attrs_stale(s, NULL); /* not an event we can read: no tree vouches */
		return;
	}
	memcpy(&fsid, &f->fsid, sizeof fsid);
	memcpy(&fh.h, (const char *)m + hoff, sizeof fh.h);
	hl = fh.h.handle_bytes;
	if (hl > sizeof fh.b - sizeof fh.h || m->event_len < hoff + sizeof fh.h + hl) {
		attrs_stale(s, &fsid);
		return;
	}
	memcpy(fh.h.f_handle, (const char *)m + hoff + sizeof fh.h, hl);
	/* Two filesystems may share an fsid (an image copied, a snapshot: an
	 * ext4 fsid is its UUID), and a handle then names a file on each (a
	 * copy has the same inodes): the file is looked at through every
	 * tree with that fsid, on each filesystem among them, and counts if
	 * it grants on any.  A filesystem of no tree's does not matter. */
	for (id = 1; id <= TREES_MAX; id++) {
		const struct wtree *t = &s->trees[id];
		uint32_t j;

		if (!t->path || !t->attrs || t->fsid != fsid)
			continue;
		for (j = 1; j < id; j++) {
			if (s->trees[j].path && s->trees[j].attrs && s->trees[j].fsid == fsid &&
			    s->trees[j].dev == t->dev)
				break; /* that filesystem was looked at already */
		}
		if (j < id)
			continue;
		if (tops[id] == -2 && (tops[id] = cd_watchd_top_open(t)) >= 0) {
			/* open_by_handle_at wants a descriptor that is not O_PATH */
			int rd = openat(tops[id], ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

			close(tops[id]);
			tops[id] = rd;
		}
		if (tops[id] < 0) {
			attrs_stale(s, &fsid);
			return;
		}
		fd = open_by_handle_at(tops[id], &fh.h, O_PATH | O_CLOEXEC);
		grants = fd < 0 ? errno != ESTALE : file_grants(fd); /* ESTALE: not here */
		if (fd >= 0)
			close(fd);
		if (grants) {
			attrs_stale(s, &fsid);
			return;
		}
	}
}

/* tree-watchd-int.h */
void cd_watchd_attrs_drain(struct wstate *s)
{
	char buf[16384] __attribute__((aligned(__alignof__(struct fanotify_event_metadata))));
	int tops[TREES_MAX + 1], lost = 0;
	ssize_t n = 0;
	size_t i;

	if (s->fan < 0)
		return;
	for (i = 0; i <= TREES_MAX; i++)
		tops[i] = -2;
	while (!lost && (n = read(s->fan, buf, sizeof buf)) > 0) {
		const struct fanotify_event_metadata *m = (const void *)buf;

		for (; !lost && FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n)) {
			lost = m->vers != FANOTIFY_METADATA_VERSION || (m->mask & FAN_Q_OVERFLOW);
			if (!lost)
				attrs_event(s, m, tops);
		}
	}
	lost = lost || (n < 0 && errno != EAGAIN);
	for (i = 0; i <= TREES_MAX; i++) {
		if (tops[i] >= 0)
			close(tops[i]);
	}
	/* events lost, or unreadable: no tree vouches for its files' state
	 * before the next generation (the marks stay; the directories'
	 * watches are inotify's and unaffected) */
	if (lost)
		attrs_stale(s, NULL);
}

/* tree-watchd-int.h */
void cd_watchd_attrs_open(struct wstate *s, uint32_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = tag };

	if (s->fan >= 0) {
		epoll_ctl(s->ep, EPOLL_CTL_DEL, s->fan, NULL);
		close(s->fan);
		s->fan = -1;
	}
	if (geteuid() == 0 &&
	    (s->fan = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_FID | FAN_CLOEXEC | FAN_NONBLOCK,
	                            O_RDONLY | O_CLOEXEC)) >= 0)
		epoll_ctl(s->ep, EPOLL_CTL_ADD, s->fan, &ev);
}
