/* test-idmap.c — the host identity of a root caller's sandbox: which id
 * it runs as (subordinate range or the documented default) and which
 * mounts count as the caller's trees (bound idmapped). */
#include "../tap.h"

#include "idmap.h"
#include "plan.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

static void test_parse(void)
{
	static const struct {
		const char *text;
		int rc;
		uint32_t want;
	} cases[] = {
		{ "root:100000:65536\n", 0, 100000 },
		{ "alice:165536:65536\nroot:231072:65536\n", 0, 231072 },
		{ "0:300000:10\n", 0, 300000 },                     /* by uid */
		{ "root:300000:10", 0, 300000 },                    /* no final newline */
		{ "rootx:100000:65536\nroo:1:2\n", -ENOENT, 0 },    /* other names */
		{ "root:0:65536\nroot:400000:1\n", 0, 400000 },     /* 0 is root itself */
		{ "root:65534:1\n", -ENOENT, 0 },                   /* nobody */
		{ "root:100000:0\n", -ENOENT, 0 },                  /* empty range */
		{ "root:4294967295:1\n", -ENOENT, 0 },              /* (uid_t)-1 */
		{ "root:4294967290:100\n", -ENOENT, 0 },            /* overflows */
		{ "root:4294967296:1\n", -ENOENT, 0 },              /* not a uid */
		{ "root:-5:10\nroot:abc:1\nroot:7\n", -ENOENT, 0 }, /* malformed */
		{ "root: 100000:65536\n", -ENOENT, 0 },             /* spaces */
		{ "", -ENOENT, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint32_t start = 7;
		int r = cd_idmap_parse_subid(cases[i].text, strlen(cases[i].text), "root", 0,
		                             &start);
		is_int(r, cases[i].rc, "subid case %zu rc", i);
		if (cases[i].rc == 0)
			is_int((long)start, (long)cases[i].want, "subid case %zu start", i);
		else
			is_int((long)start, 7, "subid case %zu leaves start alone", i);
	}
}

static void test_host_ids(void)
{
	uid_t u = 1;
	gid_t g = 1;

	cd_idmap_host_ids(1234, 5678, &u, &g);
	ok(u == 1234 && g == 5678, "a rootless caller's sandbox runs as the caller");
	cd_idmap_host_ids(0, 0, &u, &g);
	ok(u != 0 && g != 0, "a root caller's sandbox never runs as host root (%u:%u)", (unsigned)u,
	   (unsigned)g);
	ok(u != 65534 && g != 65534, "nor as nobody");
	if (access("/etc/subuid", F_OK) != 0)
		is_int((long)u, (long)CD_IDMAP_DEFAULT_ID, "no /etc/subuid: the default id");
	ok(CD_IDMAP_DEFAULT_ID >= 1879048192u && CD_IDMAP_DEFAULT_ID <= 2147352575u,
	   "the default is in systemd's unused range, below 2^31");
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
	test_host_ids();
	test_caller_tree();
	return tap_done();
}
