/* tree-cache-held.c — scan cache files checked once, held by the service.
 *
 * A run reads its tree's scan cache file before it walks (tree-cache.c),
 * and the file must pass every check of tree-cache-file.c before one
 * record of it is trusted: a checksum over all of it, each record
 * parsed, the subtrees' nesting, the index.  For a tree of 50,000 files
 * that is most of what a run with nothing changed costs.  The file
 * changes only when a run writes a new one (a rename: a new inode), so
 * the service (the watcher's thread, tree-watchd.c) checks each version
 * once and hands every run a sealed memfd of it: the file's bytes, then
 * the records' offsets, then a trailer.  The run maps it shared (no
 * copy), checks only that it is the file for its own walk (the key and
 * the tree's path, tree-cache-file.c) and that the memfd is sealed, so
 * neither side can change or cut it under the other's mapping.
 *
 * A version is known by the file's inode, size, mtime and ctime, read
 * before and after the service reads it (a file changed in between is
 * not held).  The run opens the file and checks its owner and mode
 * before it sends the descriptor; the service checks them again, and
 * reads only regular files of local filesystems (a FUSE file could stall
 * the watcher for every client).  Held: HELD_MAX versions, HELD_BYTES in
 * all, the least recently asked for let go first.
 *
 *   held copy   the file (len bytes), padded to 8
 *               nrec u32: record k's offset in the file, padded to 8
 *               trailer: magic "CDSCANHD", len u64, nrec u32, 0 u32,
 *               at_off u64
 */
#include "tree-cache-int.h"
#include "tree-watchd-int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#define HELD_MAX    16
#define HELD_BYTES  (256u << 20)
#define HELD_MAGIC  "CDSCANHD"
#define HELD_TAIL   32
#define FILE_MIN    56 /* a file's header (tree-cache-file.c) */
#define EXT4_MAGIC  0xEF53
#define XFS_MAGIC   0x58465342
#define BTRFS_MAGIC 0x9123683E
#define TMPFS_MAGIC 0x01021994

struct held {
	int fd; /* the memfd; -1: a free slot */
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtim, ctim;
	size_t bytes;
	uint64_t used;
};

static struct held g_held[HELD_MAX];
static int g_ready;
static uint64_t g_tick;

static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static int same_version(const struct held *h, const struct stat *st)
{
	return h->dev == st->st_dev && h->ino == st->st_ino && h->size == st->st_size &&
	       h->mtim.tv_sec == st->st_mtim.tv_sec && h->mtim.tv_nsec == st->st_mtim.tv_nsec &&
	       h->ctim.tv_sec == st->st_ctim.tv_sec && h->ctim.tv_nsec == st->st_ctim.tv_nsec;
}

static void let_go(struct held *h)
{
	if (h->fd >= 0)
		close(h->fd);
	h->fd = -1;
	h->bytes = 0;
}

/* The file at fd as a run may use it: our own, no one else's to write,
 * a size the reader takes, on a filesystem that cannot stall us. */
static int acceptable(int fd, struct stat *st)
{
	struct statfs sf;

	return fstat(fd, st) == 0 && S_ISREG(st->st_mode) && st->st_uid == geteuid() &&
	       !(st->st_mode & 077) && st->st_size >= FILE_MIN &&
	       (uint64_t)st->st_size <= CACHE_MAX_FILE && fstatfs(fd, &sf) == 0 &&
	       (sf.f_type == EXT4_MAGIC || sf.f_type == XFS_MAGIC || sf.f_type == BTRFS_MAGIC ||
	        sf.f_type == TMPFS_MAGIC);
}

static int put_all(int fd, const void *p, size_t n, off_t at)
{
	const char *c = p;

	while (n) {
		ssize_t k = pwrite(fd, c, n, at);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		c += k;
		n -= (size_t)k;
		at += k;
	}
	return 0;
}

/* The held copy of the file (v, len, checked: nrec records at `at`),
 * sealed: its descriptor, or -1. */
static int make_copy(const unsigned char *v, size_t len, const uint32_t *at, long nrec,
                     size_t *bytes)
{
	size_t at_off = pad8(len), tail_off = pad8(at_off + (size_t)nrec * sizeof *at);
	unsigned char tail[HELD_TAIL];
	uint64_t l = len, o = at_off;
	uint32_t n = (uint32_t)nrec, z = 0;
	int fd = memfd_create("cordon-scan-cache", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0)
		return -1;
	memcpy(tail, HELD_MAGIC, 8);
	memcpy(tail + 8, &l, 8);
	memcpy(tail + 16, &n, 4);
	memcpy(tail + 20, &z, 4);
	memcpy(tail + 24, &o, 8);
	*bytes = tail_off + HELD_TAIL;
	if (ftruncate(fd, (off_t)*bytes) < 0 || put_all(fd, v, len, 0) < 0 ||
	    (nrec && put_all(fd, at, (size_t)nrec * sizeof *at, (off_t)at_off) < 0) ||
	    put_all(fd, tail, HELD_TAIL, (off_t)tail_off) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Read the whole file at fd (st as it was before): checked, held. */
static int hold_new(int fd, const struct stat *st)
{
	size_t len = (size_t)st->st_size, got = 0, bytes = 0, total = 0, i, victim = 0;
	unsigned char *v = malloc(len);
	uint32_t *at = malloc((len / 52 + 1) * sizeof *at);
	struct stat after;
	ssize_t k = 0;
	long nrec = -1;
	int mfd = -1;

	while (v && at && got < len && (k = pread(fd, v + got, len - got, (off_t)got)) > 0)
		got += (size_t)k;
	/* the same version from the first byte read to the last */
	if (v && at && got == len && fstat(fd, &after) == 0) {
		struct held h = { .dev = st->st_dev,
			          .ino = st->st_ino,
			          .size = st->st_size,
			          .mtim = st->st_mtim,
			          .ctim = st->st_ctim };

		if (same_version(&h, &after) && (nrec = cd_cache_check(v, len, at)) >= 0)
			mfd = make_copy(v, len, at, nrec, &bytes);
	}
	free(v);
	free(at);
	if (mfd < 0)
		return -1;
	for (i = 0; i < HELD_MAX; i++) {
		total += g_held[i].bytes;
		if (g_held[i].fd < 0 ||
		    (g_held[victim].fd >= 0 && g_held[i].used < g_held[victim].used))
			victim = i;
	}
	/* room: the least recently used let go until it fits */
	while (total + bytes > HELD_BYTES) {
		size_t lru = HELD_MAX;

		for (i = 0; i < HELD_MAX; i++) {
			if (g_held[i].fd >= 0 &&
			    (lru == HELD_MAX || g_held[i].used < g_held[lru].used))
				lru = i;
		}
		if (lru == HELD_MAX)
			break;
		total -= g_held[lru].bytes;
		let_go(&g_held[lru]);
		victim = lru;
	}
	let_go(&g_held[victim]);
	g_held[victim] = (struct held){ .fd = mfd,
		                        .dev = st->st_dev,
		                        .ino = st->st_ino,
		                        .size = st->st_size,
		                        .mtim = st->st_mtim,
		                        .ctim = st->st_ctim,
		                        .bytes = bytes,
		                        .used = ++g_tick };
	return (int)victim;
}

int cd_cache_held_fd(int fd)
{
	struct stat st;
	int i;

	if (!g_ready) {
		for (i = 0; i < HELD_MAX; i++)
			g_held[i].fd = -1;
		g_ready = 1;
	}
	if (!acceptable(fd, &st))
		return -1;
	for (i = 0; i < HELD_MAX; i++) {
		if (g_held[i].fd >= 0 && same_version(&g_held[i], &st))
			break;
	}
	if (i == HELD_MAX && (i = hold_new(fd, &st)) < 0)
		return -1;
	g_held[i].used = ++g_tick;
	return fcntl(g_held[i].fd, F_DUPFD_CLOEXEC, 3);
}

int cd_cache_held_layout(const unsigned char *v, size_t size, size_t *len, uint32_t *nrec,
                         size_t *at_off)
{
	const unsigned char *t;
	uint64_t l, o;
	uint32_t n, fn;

	if (size < HELD_TAIL + FILE_MIN || size % 8)
		return 0;
	t = v + size - HELD_TAIL;
	memcpy(&l, t + 8, 8);
	memcpy(&n, t + 16, 4);
	memcpy(&o, t + 24, 8);
	if (memcmp(t, HELD_MAGIC, 8) || l < FILE_MIN || l > size - HELD_TAIL || o != pad8(l) ||
	    (size - HELD_TAIL - o) / sizeof(uint32_t) < n)
		return 0;
	memcpy(&fn, v + 16, 4); /* the file's own count (tree-cache-file.c) */
	if (fn != n)
		return 0;
	*len = (size_t)l;
	*nrec = n;
	*at_off = (size_t)o;
	return 1;
}
