/* fuzz-watch.c — the tree watcher's answers on arbitrary bytes (the
 * client believes a list only from the watcher it asked, for the
 * generation it asked about, in order: tree-watch.c).  Whatever the
 * bytes, an answer taken as a list is the same instance, no older than
 * asked, at most CD_WATCH_DIRTY_MAX ids, sorted and distinct, `attrs`
 * only on a list and 0 or 1; a refusal
 * leaves nothing allocated; an answer to FILE carrying no descriptor (bytes
 * alone) is never a copy to map; nothing crashes, hangs or leaks. */
#include "sandbox/tree-watch.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

const char *cd_fuzz_name = "watch";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define INSTANCE 0x1234567812345678ULL
#define SINCE    40

static void sorted(const struct cd_watch_id *v, size_t n)
{
	size_t i;

	for (i = 1; i < n; i++) {
		if (v[i - 1].dev > v[i].dev ||
		    (v[i - 1].dev == v[i].dev && v[i - 1].ino >= v[i].ino))
			abort();
	}
}

/* A connected pair whose far end has sent `data` and closed. */
static int feed(const uint8_t *data, size_t size, int *far)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		abort();
	if (size && write(sv[1], data, size) != (ssize_t)size)
		abort();
	shutdown(sv[1], SHUT_WR);
	*far = sv[1];
	return sv[0];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cd_watch_id buf[CD_WATCH_DIRTY_MAX];
	struct cd_watch_id *ids = NULL;
	struct cd_watch_rep rep;
	uint32_t trees[2] = { 1, 2 };
	int far, fd;
	long n;

	if (size > 65536)
		return 0;
	fd = feed(data, size, &far);
	if (cd_watch_ask(fd, "/t", 1, 2, INSTANCE, SINCE, &rep, &ids) == 0) {
		if (rep.status == CD_WATCH_LIST && (rep.instance != INSTANCE || rep.gen < SINCE ||
		                                    rep.ndirty > CD_WATCH_DIRTY_MAX))
			abort();
		if (rep.status == CD_WATCH_FULL && (ids || rep.ndirty || rep.attrs))
			abort();
		if (rep.attrs > 1)
			abort();
		if (rep.ndirty)
			sorted(ids, rep.ndirty);
	} else if (ids) {
		abort();
	}
	free(ids);
	close(fd);
	close(far);

	fd = feed(data, size, &far);
	n = cd_watch_since(fd, INSTANCE, SINCE, trees, 2, buf, CD_WATCH_DIRTY_MAX);
	if (n > CD_WATCH_DIRTY_MAX)
		abort();
	if (n > 0)
		sorted(buf, (size_t)n);
	close(fd);
	close(far);

	fd = feed(data, size, &far);
	{
		size_t sz = 0;
		int m = cd_watch_cache_file(fd, fd, &sz);

		if (m >= 0)
			abort();
	}
	close(fd);
	close(far);
	return 0;
}
