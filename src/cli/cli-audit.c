/* cli-audit.c — see cli-audit.h.  The only place that reads the
 * environment for the audit log's paths. */
#include "cli-audit.h"
#include "cli-warm.h"
#include "cli.h"
#include "mask/mask.h"
#include "store/state.h"
#include "store/store.h"
#include "util/fs.h"

#include <sodium.h>

#include <errno.h>
#include <jansson.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* out = a b c */
static int put(char *out, size_t outlen, const char *a, const char *b, const char *c)
{
	int n = snprintf(out, outlen, "%s%s%s", a, b, c);
	if (n < 0 || (size_t)n >= outlen)
		return -ENAMETOOLONG;
	return 0;
}

/* An XDG variable counts only when it holds an absolute path. */
static const char *xdg(const char *name)
{
	const char *v = getenv(name);
	return v && v[0] == '/' ? v : NULL;
}

static const char *home(void)
{
	const char *h = getenv("HOME");
	struct passwd *pw;

	if (h && h[0] == '/')
		return h;
	pw = getpwuid(getuid());
	return pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
}

int cli_audit_path(const char *opt, char *out, size_t outlen)
{
	const char *v;

	if (opt && *opt)
		return put(out, outlen, opt, "", "");
	v = getenv("CORDON_AUDIT");
	if (v && *v)
		return put(out, outlen, v, "", "");
	v = xdg("XDG_STATE_HOME");
	if (v)
		return put(out, outlen, v, "/cordon/audit.db", "");
	v = home();
	if (!v)
		return -ENOENT;
	return put(out, outlen, v, "/.local/state/cordon/audit.db", "");
}

static const char *state_default;

void cli_state_set_default(const char *path)
{
	state_default = path;
}

int cli_state_path(const char *opt, char *out, size_t outlen)
{
	const char *v;

	if (!(opt && *opt))
		opt = state_default;
	if (opt && *opt)
		return put(out, outlen, opt, "", "");
	v = getenv("CORDON_STATE");
	if (v && *v)
		return put(out, outlen, v, "", "");
	v = xdg("XDG_STATE_HOME");
	if (v)
		return put(out, outlen, v, "/cordon/state.db", "");
	v = home();
	if (!v)
		return -ENOENT;
	return put(out, outlen, v, "/.local/state/cordon/state.db", "");
}

/* For a shared store (a URI), NAME in this host's own state directory;
 * else the path as it is. */
static int local_of(const char *path, const char *name, char *out, size_t outlen)
{
	const char *v;
	char tmp[4096];

	if (!cd_store_is_uri(path))
		return 0;
	if ((v = xdg("XDG_STATE_HOME")) != NULL) {
		if (put(tmp, sizeof tmp, v, "/cordon/", name) < 0)
			return -ENAMETOOLONG;
	} else if ((v = home()) != NULL) {
		if (put(tmp, sizeof tmp, v, "/.local/state/cordon/", name) < 0)
			return -ENAMETOOLONG;
	} else {
		return -ENOENT;
	}
	return put(out, outlen, tmp, "", "");
}

int cli_state_local(const char *opt, char *out, size_t outlen)
{
	int r = cli_state_path(opt, out, outlen);
	return r < 0 ? r : local_of(out, "state.local", out, outlen);
}

int cli_audit_local(const char *opt, char *out, size_t outlen)
{
	int r = cli_audit_path(opt, out, outlen);
	return r < 0 ? r : local_of(out, "audit.local", out, outlen);
}

int cli_state_open(const char *opt, struct cd_state **ret)
{
	char path[4096];
	struct cd_err err = { 0, "" };
	int r = cli_state_path(opt, path, sizeof path);

	if (r < 0) {
		cli_errorf("state database: %s (set CORDON_STATE or HOME)", cd_strerror(r));
		return r;
	}
	if ((r = cd_state_open(path, ret, &err)) < 0) {
		cli_errorf("%s", err.msg);
		return r;
	}
	return 0;
}

int cli_config_path(const char *name, char *out, size_t outlen)
{
	char tail[256];
	const char *v = xdg("XDG_CONFIG_HOME");

	if (put(tail, sizeof tail, "/cordon/", name, "") < 0)
		return -ENAMETOOLONG;
	if (v)
		return put(out, outlen, v, tail, "");
	v = home();
	if (!v)
		return -ENOENT;
	return put(out, outlen, v, "/.config", tail);
}

int cli_mask_key_path(char *out, size_t outlen)
{
	const char *env = getenv("CORDON_MASK_KEY");

	if (env && *env)
		return snprintf(out, outlen, "%s", env) < (int)outlen ? 0 : -ENAMETOOLONG;
	return cli_config_path("mask.key", out, outlen);
}

int cli_masker_open_key(const char *path_opt, int create, struct cd_masker **ret)
{
	unsigned char key[CD_MASK_KEY_BYTES];
	char path[4096];
	struct cd_err err;
	int r;

	if (path_opt)
		r = snprintf(path, sizeof path, "%s", path_opt) < (int)sizeof path ? 0
		                                                                   : -ENAMETOOLONG;
	else
		r = cli_mask_key_path(path, sizeof path);
	if (r < 0) {
		cli_errorf(
		        "cannot find the mask key (set CORDON_MASK_KEY, XDG_CONFIG_HOME or HOME)");
		return r;
	}
	r = create ? cd_mask_key_load(path, key, &err) : cd_mask_key_read(path, key, &err);
	if (r < 0) {
		if (r == -ENOENT && !create)
			cli_errorf("no mask key at %s", path);
		else
			cli_errorf("%s", err.msg);
		return r;
	}
	r = cd_masker_new(key, ret, &err);
	sodium_memzero(key, sizeof key);
	if (r < 0)
		cli_errorf("%s", err.msg);
	return r;
}

int cli_masker_open(struct cd_masker **ret)
{
	return cli_masker_open_key(NULL, 1, ret);
}

int cli_checkpoint_path(const char *opt, const char *db_path, char *out, size_t outlen)
{
	const char *v = getenv("CORDON_AUDIT_CHECKPOINTS");

	if (opt && *opt)
		return put(out, outlen, opt, "", "");
	if (v && *v)
		return put(out, outlen, v, "", "");
	/* A shared store's checkpoints (this host's chain) stay on this
	 * host, under its state directory. */
	if (cd_store_is_uri(db_path)) {
		v = xdg("XDG_STATE_HOME");
		if (v)
			return put(out, outlen, v, "/cordon/audit-pg.checkpoints", "");
		if (!(v = home()))
			return -ENOENT;
		return put(out, outlen, v, "/.local/state/cordon/audit-pg.checkpoints", "");
	}
	return put(out, outlen, db_path, ".checkpoints", "");
}

int cli_audit_open_cfg(const struct cli_audit_cfg *cfg, struct cd_audit **ret)
{
	char db[4096], key[4096], cp[4096];
	struct cd_audit_opts o;
	struct cd_err err;
	const char *env_key = getenv("CORDON_AUDIT_KEY");
	int r;

	memset(&o, 0, sizeof o);
	r = cli_audit_path(cfg->path, db, sizeof db);
	if (r < 0) {
		cli_errorf("audit log: cannot find its path (set CORDON_AUDIT or HOME): %s",
		           cd_strerror(r));
		return r;
	}
	o.read_only = cfg->read_only;
	if (!cfg->read_only) {
		if (cfg->key && *cfg->key) {
			o.key_path = cfg->key;
		} else if (env_key && *env_key) {
			o.key_path = env_key;
		} else if (cli_config_path("audit.key", key, sizeof key) == 0 &&
		           access(key, F_OK) == 0) {
			o.key_path = key;
		}
		if (cfg->need_key && !o.key_path) {
			cli_errorf("no signing key: create one with 'cordon log keygen' or pass "
			           "--key");
			return -ENOKEY;
		}
		r = cli_checkpoint_path(cfg->checkpoint_out, db, cp, sizeof cp);
		if (r < 0) {
			cli_errorf("checkpoint file path too long");
			return r;
		}
		/* A shared store's checkpoint file is this host's, in its
		 * local state directory (made 0700 on first use). */
		if (cd_store_is_uri(db) && cd_mkdir_parents(cp, &err) < 0) {
			cli_errorf("%s", err.msg);
			return err.code;
		}
		o.checkpoint_out = cp;
		o.checkpoint_every = CLI_AUDIT_CHECKPOINT_EVERY;
		o.checkpoint_secs = CLI_AUDIT_CHECKPOINT_SECS;
	}
	if (cfg->warm && cli_warm_audit_open(db, &o, ret) == 0)
		return 0;
	r = cd_audit_open(db, &o, ret, &err);
	if (r < 0) {
		cli_errorf("%s", err.msg);
		return r;
	}
	return 0;
}

int cli_audit_open(const char *opt, struct cd_audit **ret)
{
	struct cli_audit_cfg cfg;

	memset(&cfg, 0, sizeof cfg);
	cfg.path = opt;
	return cli_audit_open_cfg(&cfg, ret);
}

int cli_audit_open_warm(const char *opt, struct cd_audit **ret)
{
	struct cli_audit_cfg cfg;

	memset(&cfg, 0, sizeof cfg);
	cfg.path = opt;
	cfg.warm = 1;
	return cli_audit_open_cfg(&cfg, ret);
}

/* Chain `host` shown up to seq (never moved back). */
static int follow_at(const char *host, uint64_t seq, void *ctx)
{
	struct cli_follow *c = ctx;
	json_t *v;

	if (!c->chains && !(c->chains = json_object()))
		return -ENOMEM;
	v = json_object_get(c->chains, host);
	if (v && (uint64_t)json_integer_value(v) >= seq)
		return 0;
	/* A name that is not UTF-8 cannot be a PostgreSQL chain's. */
	json_object_set_new(c->chains, host, json_integer((json_int_t)seq));
	return 0;
}

int cli_follow_start(struct cli_follow *c, struct cd_audit *log)
{
	struct cd_err err = { 0, "" };
	int r = cd_audit_heads(log, follow_at, c, &err);

	if (r == -ENOTSUP)
		return 0; /* one chain: the last seq shown is the cursor */
	if (r < 0)
		cli_errorf("%s", err.msg);
	return r;
}

int cli_follow_seen(struct cli_follow *c, const struct cd_audit_entry *e)
{
	const struct cd_audit_str *h = &e->str[CD_AF_HOST];
	char host[256];

	c->last = e->seq;
	if (!h->p || h->len >= sizeof host || memchr(h->p, 0, h->len))
		return 0; /* a chain is named by a host; SQLite's one uses last */
	memcpy(host, h->p, h->len);
	host[h->len] = '\0';
	return follow_at(host, e->seq, c);
}

int cli_follow_filter(struct cli_follow *c, struct cd_audit_filter *f)
{
	free(c->dump);
	c->dump = NULL;
	f->after_seq = c->last;
	f->after_chains = NULL;
	if (c->chains && !(c->dump = json_dumps(c->chains, JSON_COMPACT)))
		return -ENOMEM;
	f->after_chains = c->dump;
	return 0;
}

void cli_follow_free(struct cli_follow *c)
{
	json_decref(c->chains);
	free(c->dump);
	memset(c, 0, sizeof *c);
}
