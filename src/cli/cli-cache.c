/* cli-cache.c — package caches: `--cache NAME:DEST` for run and shell, and
 * `cordon cache list|clear`.
 *
 * A cache is a directory under cordon's state directory,
 * caches/AGENT/NAME, where AGENT is the agent id in hex ("-" for runs
 * without --agent): two agents never share one, whatever their ids look
 * like.  The state directory is hidden from every sandbox; a run sees only
 * its own caches, bound at DEST (writable, or read-only for the command of
 * an --install run).  What a sandbox wrote there is hostile: listing and
 * clearing never follow a symlink.
 */
#include "cli.h"
#include "cli-audit.h"
#include "cli-cache.h"

#include "util/bounds.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CACHE_NAME_MAX 64

static int valid_cache_name(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > CACHE_NAME_MAX || s[0] == '.' || s[0] == '-')
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-' || c == '.'))
			return 0;
	}
	return 1;
}

/* caches/ under the state directory (the directory of the state database). */
static int cache_root(char *out, size_t cap)
{
	char *slash;
	size_t len;

	if (cli_state_local(NULL, out, cap) < 0 || !(slash = strrchr(out, '/'))) {
		cli_errorf("cache: no state directory (set CORDON_STATE or HOME)");
		return -1;
	}
	len = (size_t)(slash - out);
	if (len + sizeof "/caches" > cap) {
		cli_errorf("cache: path too long");
		return -1;
	}
	memcpy(out + len, "/caches", sizeof "/caches");
	return 0;
}

static int agent_dir(const char *agent, char *out, size_t cap)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, n = agent ? strlen(agent) : 0;

	if (!agent || !*agent) {
		if (cap < 2)
			return -1;
		memcpy(out, "-", 2);
		return 0;
	}
	if (n > 128 || 2 * n + 1 > cap)
		return -1;
	for (i = 0; i < n; i++) {
		out[2 * i] = hex[(unsigned char)agent[i] >> 4];
		out[2 * i + 1] = hex[(unsigned char)agent[i] & 15];
	}
	out[2 * n] = '\0';
	return 0;
}

static int mkdir_private(const char *path)
{
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int cli_cache_dir(const char *agent, const char *name, size_t namelen, char *out, size_t cap)
{
	char root[CD_PATH_MAX], ad[2 * 128 + 1];
	struct cd_err err = { 0, "" };
	int n, r;

	if (!valid_cache_name(name, namelen)) {
		cli_errorf("cache name '%.*s': 1 to %d letters, digits, '_', '-', '.' (not "
		           "leading '.' or '-')",
		           (int)(namelen > 80 ? 80 : namelen), name, CACHE_NAME_MAX);
		return -1;
	}
	if (agent_dir(agent, ad, sizeof ad) < 0) {
		cli_errorf("cache: agent id too long");
		return -1;
	}
	if (cache_root(root, sizeof root) < 0)
		return -1;
	n = snprintf(out, cap, "%s/%s/%.*s", root, ad, (int)namelen, name);
	if (n < 0 || (size_t)n >= cap) {
		cli_errorf("cache: path too long");
		return -1;
	}
	if (cd_mkdir_parents(root, &err) < 0 || (r = mkdir_private(root)) < 0) {
		cli_errorf("cache: cannot create '%s': %s", root, err.msg[0] ? err.msg : "");
		return -1;
	}
	n = snprintf(out, cap, "%s/%s", root, ad);
	if (n < 0 || (size_t)n >= cap || (r = mkdir_private(out)) < 0) {
		cli_errorf("cache: cannot create the agent's cache directory");
		return -1;
	}
	n = snprintf(out, cap, "%s/%s/%.*s", root, ad, (int)namelen, name);
	if (n < 0 || (size_t)n >= cap || (r = mkdir_private(out)) < 0) {
		cli_errorf("cache '%.*s': cannot create it", (int)namelen, name);
		return -1;
	}
	return 0;
}

/* ---- cordon cache list|clear --------------------------------------- */

static uint64_t g_bytes, g_files;

static int count_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	if (flag == FTW_F || flag == FTW_SL) {
		g_bytes += (uint64_t)st->st_size;
		g_files++;
	}
	return 0;
}

/* A sandbox may have left directories without write permission: open
 * them up (never through a symlink: FTW_PHYS) so their entries can go. */
static int open_up(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	if (flag == FTW_D)
		chmod(path, 0700);
	return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	if (ftw->level == 0)
		return 0; /* the cache directory itself stays, empty */
	if (flag == FTW_DP)
		return rmdir(path) < 0 ? -1 : 0;
	return unlink(path) < 0 ? -1 : 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static json_t *agent_name(const char *d)
{
	char buf[129];
	size_t i, n = strlen(d);

	if (strcmp(d, "-") == 0)
		return json_null();
	if (n % 2 || n / 2 >= sizeof buf)
		return NULL;
	for (i = 0; i < n / 2; i++) {
		int hi = hexval(d[2 * i]), lo = hexval(d[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return NULL;
		buf[i] = (char)(hi << 4 | lo);
	}
	return json_stringn(buf, n / 2);
}

static int list_caches(const char *only_agent, int json)
{
	char root[CD_PATH_MAX], only[2 * 128 + 1], path[CD_PATH_MAX];
	DIR *rd, *ad;
	struct dirent *a, *c;
	json_t *all = json_array();
	size_t i;

	if (!all || cache_root(root, sizeof root) < 0) {
		json_decref(all);
		return CD_EXIT_CORDON;
	}
	if (only_agent && agent_dir(only_agent, only, sizeof only) < 0) {
		cli_errorf("--agent: too long");
		json_decref(all);
		return CD_EXIT_USAGE;
	}
	rd = opendir(root);
	while (rd && (a = readdir(rd))) {
		json_t *who;
		int n;

		if (a->d_name[0] == '.' || (only_agent && strcmp(a->d_name, only) != 0))
			continue;
		who = agent_name(a->d_name);
		if (!who)
			continue; /* not ours */
		n = snprintf(path, sizeof path, "%s/%s", root, a->d_name);
		if (n < 0 || (size_t)n >= sizeof path || !(ad = opendir(path))) {
			json_decref(who);
			continue;
		}
		while ((c = readdir(ad))) {
			if (!valid_cache_name(c->d_name, strlen(c->d_name)))
				continue;
			n = snprintf(path, sizeof path, "%s/%s/%s", root, a->d_name, c->d_name);
			if (n < 0 || (size_t)n >= sizeof path)
				continue;
			g_bytes = g_files = 0;
			nftw(path, count_entry, 16, FTW_PHYS);
			json_array_append_new(all,
			                      json_pack("{s:O,s:s,s:I,s:I}", "agent", who, "name",
			                                c->d_name, "bytes", (json_int_t)g_bytes,
			                                "files", (json_int_t)g_files));
		}
		closedir(ad);
		json_decref(who);
	}
	if (rd)
		closedir(rd);
	if (json) {
		char *s = json_dumps(all, JSON_COMPACT | JSON_ENSURE_ASCII);
		if (s)
			printf("%s\n", s);
		free(s);
	} else {
		printf("%-24s %-24s %12s %8s\n", "AGENT", "NAME", "BYTES", "FILES");
		for (i = 0; i < json_array_size(all); i++) {
			json_t *e = json_array_get(all, i);
			const char *ag = json_string_value(json_object_get(e, "agent"));
			struct cd_buf b;

			/* Agent ids are the operator's, but escape them anyway. */
			cd_buf_init(&b, 1024);
			if (cd_buf_escape(&b, ag ? ag : "(none)", strlen(ag ? ag : "(none)")) < 0)
				cd_buf_reset(&b);
			printf("%-24s %-24s %12lld %8lld\n", b.data ? b.data : "?",
			       json_string_value(json_object_get(e, "name")),
			       (long long)json_integer_value(json_object_get(e, "bytes")),
			       (long long)json_integer_value(json_object_get(e, "files")));
			cd_buf_release(&b);
		}
	}
	json_decref(all);
	return CD_EXIT_OK;
}

static int clear_cache(const char *agent, const char *name)
{
	char root[CD_PATH_MAX], ad[2 * 128 + 1], path[CD_PATH_MAX];
	struct stat st;
	int n;

	if (!valid_cache_name(name, strlen(name))) {
		cli_errorf("cache name '%s': not a cache name", name);
		return CD_EXIT_USAGE;
	}
	if (agent_dir(agent, ad, sizeof ad) < 0 || cache_root(root, sizeof root) < 0)
		return CD_EXIT_CORDON;
	n = snprintf(path, sizeof path, "%s/%s/%s", root, ad, name);
	if (n < 0 || (size_t)n >= sizeof path)
		return CD_EXIT_CORDON;
	if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
		cli_errorf("cache '%s'%s%s: no such cache", name, agent ? " of agent " : "",
		           agent ? agent : "");
		return CD_EXIT_FAIL;
	}
	nftw(path, open_up, 16, FTW_PHYS);
	if (nftw(path, remove_entry, 16, FTW_PHYS | FTW_DEPTH) != 0 || rmdir(path) < 0) {
		cli_errorf("cache '%s': could not remove everything: %s", name,
		           cd_strerror(-errno));
		return CD_EXIT_FAIL;
	}
	printf("cleared cache '%s'\n", name);
	return CD_EXIT_OK;
}

static void cache_usage(FILE *f)
{
	fputs("usage: cordon cache list [--agent ID] [--json]\n"
	      "       cordon cache clear NAME [--agent ID]\n"
	      "\n"
	      "Package caches made by `cordon run|shell --cache NAME:DEST`: directories\n"
	      "under cordon's state directory, one set per agent (never shared between\n"
	      "agents), never visible to a sandbox except its own at DEST.\n"
	      "\n"
	      "  list              every cache (or one agent's) with its size\n"
	      "  clear NAME        remove the cache NAME of the agent (default: the caches\n"
	      "                    of runs without --agent)\n"
	      "  --agent ID        whose caches\n"
	      "  --json            list as one JSON array\n"
	      "  -h, --help        this text\n",
	      f);
}

/* The options, also for `cordon completion` (cli-complete.c). */
static const struct option cache_opts[] = {
	{ "agent", required_argument, NULL, 'a' },
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};
const struct option *const cli_opts_cache = cache_opts;

int cmd_cache(int argc, char **argv)
{
	const char *agent = NULL, *sub;
	int json = 0, c;

	if (argc < 2) {
		cli_errorf("missing subcommand: list or clear (see --help)");
		return CD_EXIT_USAGE;
	}
	sub = argv[1];
	if (strcmp(sub, "-h") == 0 || strcmp(sub, "--help") == 0) {
		cache_usage(stdout);
		return CD_EXIT_OK;
	}
	opterr = 0;
	optind = 2;
	/* Options may follow the cache name: argv is permuted ("h", no '+'). */
	while ((c = cli_getopt(argc, argv, "h", cache_opts, CD_EXIT_USAGE)) != -1) {
		switch (c) {
		case 'a':
			agent = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			cache_usage(stdout);
			return CD_EXIT_OK;
		default:
			cli_errorf("unknown or incomplete option '%s' (see --help)",
			           argv[optind - 1]);
			return CD_EXIT_USAGE;
		}
	}
	if (strcmp(sub, "list") == 0) {
		if (optind != argc) {
			cli_errorf("list takes no arguments");
			return CD_EXIT_USAGE;
		}
		return list_caches(agent, json);
	}
	if (strcmp(sub, "clear") == 0) {
		if (optind + 1 != argc) {
			cli_errorf("clear needs one cache NAME");
			return CD_EXIT_USAGE;
		}
		return clear_cache(agent, argv[optind]);
	}
	cli_errorf("unknown subcommand '%s': list or clear", sub);
	return CD_EXIT_USAGE;
}
