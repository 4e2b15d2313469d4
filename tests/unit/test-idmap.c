/* test-idmap.c — the host identity of a root caller's sandbox: which ids
 * its runs take (root's subordinate range or the documented default, at
 * most CD_IDMAP_SLOTS_MAX, never nobody) and which mounts count as the
 * caller's trees (bound idmapped). */
#include "../tap.h"

#include "sandbox/idmap.h"
#include "sandbox/plan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_parse(void)
{
	static const struct {
		const char *text;
		int rc;
		uint32_t want, count;
	} cases[] = {
		{ "root:100000:65536\n", 0, 100000, 65536 },
		{ "alice:165536:65536\nroot:231072:65536\n", 0, 231072, 65536 },
		{ "0:300000:10\n", 0, 300000, 10 },                    /* by uid */
		{ "root:300000:10", 0, 300000, 10 },                   /* no final newline */
		{ "rootx:100000:65536\nroo:1:2\n", -ENOENT, 0, 0 },    /* other names */
		{ "root:0:65536\nroot:400000:1\n", 0, 400000, 1 },     /* 0 is root itself */
		{ "root:65534:1\n", -ENOENT, 0, 0 },                   /* nobody */
		{ "root:100000:0\n", -ENOENT, 0, 0 },                  /* empty range */
		{ "root:4294967295:1\n", -ENOENT, 0, 0 },              /* (uid_t)-1 */
		{ "root:4294967290:100\n", -ENOENT, 0, 0 },            /* overflows */
		{ "root:4294967294:1\n", 0, 4294967294u, 1 },          /* the last id */
		{ "root:4294967296:1\n", -ENOENT, 0, 0 },              /* not a uid */
		{ "root:-5:10\nroot:abc:1\nroot:7\n", -ENOENT, 0, 0 }, /* malformed */
		{ "root: 100000:65536\n", -ENOENT, 0, 0 },             /* spaces */
		{ "", -ENOENT, 0, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint32_t start = 7, count = 9;
		int r = cd_idmap_parse_subid(cases[i].text, strlen(cases[i].text), "root", 0,
		                             &start, &count);
		is_int(r, cases[i].rc, "subid case %zu rc", i);
		if (cases[i].rc == 0)
			ok(start == cases[i].want && count == cases[i].count,
			   "subid case %zu: start %u count %u", i, (unsigned)start,
			   (unsigned)count);
		else
			ok(start == 7 && count == 9, "subid case %zu leaves start and count alone",
			   i);
	}
}

/* Write `text` to a fresh file of dir `d` named `name`; its path. */
static const char *put(const char *d, const char *name, const char *text)
{
	static char paths[4][256];
	static int next;
	char *p = paths[next++ % 4];
	FILE *f;

	snprintf(p, sizeof paths[0], "%s/%s", d, name);
	f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	return p;
}

static void test_root_range(void)
{
	static const struct {
		const char *subuid, *subgid; /* NULL: no such file */
		uint32_t uid, gid, count;
	} cases[] = {
		/* no files: the documented default, 1024 ids */
		{ NULL, NULL, CD_IDMAP_DEFAULT_ID, CD_IDMAP_DEFAULT_ID, CD_IDMAP_SLOTS_MAX },
		{ "", "", CD_IDMAP_DEFAULT_ID, CD_IDMAP_DEFAULT_ID, CD_IDMAP_SLOTS_MAX },
		/* a typical range: its first 1024 ids */
		{ "root:100000:65536\n", "root:100000:65536\n", 100000, 100000, 1024 },
		/* a small range: all of it, the smaller count of the two files */
		{ "root:100000:10\n", "root:200000:500\n", 100000, 200000, 10 },
		{ "root:100000:4000\n", "root:200000:3\n", 100000, 200000, 3 },
		/* only subuid: gids from the default */
		{ "root:100000:100\n", NULL, 100000, CD_IDMAP_DEFAULT_ID, 100 },
		/* a range across nobody is cut below 65534 */
		{ "root:65000:2000\n", "root:65000:2000\n", 65000, 65000, 534 },
		{ "root:65533:10\n", "root:300000:10\n", 65533, 300000, 1 },
		/* a range starting at nobody is none */
		{ "root:65534:10\n", "root:65534:10\n", CD_IDMAP_DEFAULT_ID, CD_IDMAP_DEFAULT_ID,
		  CD_IDMAP_SLOTS_MAX },
	};
	char d[] = "/tmp/test-idmap.XXXXXX";
	size_t i;

	if (!mkdtemp(d)) {
		ok(0, "mkdtemp");
		return;
	}
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct cd_idmap_range r = { 1, 1, 1 };
		const char *u =
		        cases[i].subuid ? put(d, "subuid", cases[i].subuid) : "/nonexistent/u";
		const char *g =
		        cases[i].subgid ? put(d, "subgid", cases[i].subgid) : "/nonexistent/g";

		cd_idmap_root_range_from(u, g, &r);
		ok(r.uid == cases[i].uid && r.gid == cases[i].gid && r.count == cases[i].count,
		   "range case %zu: uids from %u, gids from %u, %u of them", i, (unsigned)r.uid,
		   (unsigned)r.gid, (unsigned)r.count);
		ok(!(r.uid <= 65534 && r.uid + r.count > 65534) &&
		           !(r.gid <= 65534 && r.gid + r.count > 65534),
		   "range case %zu: never nobody", i);
	}
	unlink(put(d, "subuid", ""));
	unlink(put(d, "subgid", ""));
	rmdir(d);
	ok(CD_IDMAP_DEFAULT_ID >= 1879048192u &&
	           CD_IDMAP_DEFAULT_ID + CD_IDMAP_SLOTS_MAX - 1 <= 2147352575u,
	   "the default range is in systemd's unused range, below 2^31");
}

static void test_caller_tree(void)
{
	struct cd_mount m;

	memset(&m, 0, sizeof m);
	m.kind = CD_MNT_BIND;
	ok(cd_idmap_is_caller_tree(&m), "a read-only bind of the caller's is idmapped");
	m.flags = CD_MNT_RW;
	ok(cd_idmap_is_caller_tree(&m), "a writable bind of the caller's is idmapped");
	m.flags = CD_MNT_OPTIONAL;
	ok(!cd_idmap_is_caller_tree(&m), "a system entry (/usr, /etc/...) stays plain");
	m.flags = CD_MNT_RW | CD_MNT_DEV;
	ok(!cd_idmap_is_caller_tree(&m), "a device node stays plain");
	m.kind = CD_MNT_OVERLAY;
	m.flags = CD_MNT_RW;
	ok(cd_idmap_is_caller_tree(&m), "the proposal's lower layer is idmapped");
	m.kind = CD_MNT_TMPFS;
	ok(!cd_idmap_is_caller_tree(&m), "a tmpfs is nobody's tree");
}

int main(void)
{
	tap_start(30);
	test_parse();
	test_root_range();
	test_caller_tree();
	return tap_done();
}
