/* cli-audit.h — where the audit log, its keys and its checkpoint file
 * live, and opening the log with a one-line reason on failure.  Shared by
 * `cordon log` and every front end that writes records (`cordon run`).
 *
 * Paths, first match wins:
 *   log         --audit PATH, $CORDON_AUDIT, $XDG_STATE_HOME/cordon/audit.db,
 *               ~/.local/state/cordon/audit.db
 *   signing key $CORDON_AUDIT_KEY, $XDG_CONFIG_HOME/cordon/audit.key,
 *               ~/.config/cordon/audit.key (used when it exists)
 *   public key  $XDG_CONFIG_HOME/cordon/audit.pub (same fallbacks)
 *   checkpoints $CORDON_AUDIT_CHECKPOINTS, or the log's path + ".checkpoints"
 *   state db    --state PATH, $CORDON_STATE, $XDG_STATE_HOME/cordon/state.db,
 *               ~/.local/state/cordon/state.db */
#ifndef CD_CLI_AUDIT_H
#define CD_CLI_AUDIT_H

#include "audit/audit.h"

#include <stddef.h>

/* Records between automatic checkpoints, and seconds (checked on append). */
#define CLI_AUDIT_CHECKPOINT_EVERY 1000
#define CLI_AUDIT_CHECKPOINT_SECS  600

/* Resolve the log's path into out; `opt` is the --audit value or NULL.
 * 0, or -ENOENT (no HOME to fall back on), -ENAMETOOLONG. */
int cli_audit_path(const char *opt, char *out, size_t outlen);

/* $XDG_CONFIG_HOME/cordon/NAME (or ~/.config/cordon/NAME). */
int cli_config_path(const char *name, char *out, size_t outlen);

struct cd_masker;
/* A masker with the deployment's pseudonym key: $CORDON_MASK_KEY, else
 * $XDG_CONFIG_HOME/cordon/mask.key (created 0600 on first use).  0, or
 * negative after printing why. */
int cli_masker_open(struct cd_masker **ret);
/* The same with the key at path_opt (NULL: as above); `create` 0 never
 * makes a key (a new one would confirm nothing): -ENOENT then. */
int cli_masker_open_key(const char *path_opt, int create, struct cd_masker **ret);
/* Where the mask key is: $CORDON_MASK_KEY, else the config directory's
 * mask.key.  0 or -errno. */
int cli_mask_key_path(char *out, size_t outlen);

/* The checkpoint file beside db_path (or $CORDON_AUDIT_CHECKPOINTS). */
int cli_checkpoint_path(const char *opt, const char *db_path, char *out, size_t outlen);

struct cli_audit_cfg {
	const char *path;           /* --audit, or NULL */
	const char *key;            /* --key, or NULL for the default (if it exists) */
	const char *checkpoint_out; /* --checkpoint-out, or NULL for the default */
	int read_only;
	int need_key; /* fail when there is no signing key */
	int warm;     /* through the per-user service when it answers (cli-warm.h) */
};

/* Open the log for appending, signing checkpoints with the default key
 * when there is one.  On failure prints one line ("cordon run: audit log
 * '...': ...") and returns a negative code: the caller refuses to run
 * (exit 125). */
int cli_audit_open(const char *opt, struct cd_audit **ret);
int cli_audit_open_cfg(const struct cli_audit_cfg *cfg, struct cd_audit **ret);
/* cli_audit_open through the service (cordon run, shell). */
int cli_audit_open_warm(const char *opt, struct cd_audit **ret);

/* A follower's cursor (`log tail -f`): the last record shown of every
 * chain, so that the next query asks for what came after it in each (seq
 * counts within a chain: on PostgreSQL, one per host).
 * cli_follow_seen after each record shown; cli_follow_filter sets f's
 * after_seq and after_chains for the next query (valid until the next
 * call or cli_follow_free): 0, or -ENOMEM. */
struct cli_follow {
	uint64_t last;
	void *chains; /* {"HOST": seq} (json_t) */
	char *dump;
};
/* Start after every chain's last record (before the first query); 0, or
 * negative after saying why. */
int cli_follow_start(struct cli_follow *c, struct cd_audit *log);
int cli_follow_seen(struct cli_follow *c, const struct cd_audit_entry *e);
int cli_follow_filter(struct cli_follow *c, struct cd_audit_filter *f);
void cli_follow_free(struct cli_follow *c);

/* The state database (state.h): its path, and opening it with a one-line
 * reason on failure (the caller refuses, exit 125). */
struct cd_state;
int cli_state_path(const char *opt, char *out, size_t outlen);
/* A path whose directory is where this host keeps its local files beside
 * the state database (caches, proposals' layers) or the audit log
 * (session recordings): the path itself for a file; for a shared store
 * (a postgresql:// URI) a name in the local state directory
 * ($XDG_STATE_HOME/cordon, ~/.local/state/cordon), which stays on disk. */
int cli_state_local(const char *opt, char *out, size_t outlen);
int cli_audit_local(const char *opt, char *out, size_t outlen);
/* `run --state PATH` and `shell --state PATH`: every later
 * cli_state_path(NULL, ...) of this process (the decision's temporary
 * grants, approvals, proposals, caches, the paths kept out of the
 * sandbox) names PATH, as an explicit option would.  Not copied. */
void cli_state_set_default(const char *path);
int cli_state_open(const char *opt, struct cd_state **ret);

#endif
