/* cli-warm.h — the warm path of `cordon run`: a per-user service
 * (`cordon service`, cmd-service.c) that holds the audit log open and
 * commits the records of concurrent runs together (one fsync for all the
 * intents that arrive while the last commit was syncing).
 *
 * Trust boundary: the service and its clients are the same user.  The
 * socket lies in a 0700 directory of that user's ($XDG_RUNTIME_DIR/cordon,
 * else the state directory), and each end checks the other's uid with
 * SO_PEERCRED; a peer of another uid is closed unheard.  A client trusts
 * the service with exactly what it would do itself (append to the user's
 * own log); anything unexpected from it sends the client down the cold
 * path, where it opens the log itself as before.
 *
 * Messages: a 32-bit little-endian length, then one JSON object, at most
 * CLI_WARM_FRAME_MAX bytes.  open {op, audit, key, cp, every, secs} ->
 * {ok, log_id} | {ok:false, error}; append {op, lazy, recs:[...]} ->
 * {ok, last} once durable (lazy: committed) | {ok:false, error}.  A
 * run's first append carries its open, {op:"append", open:{audit, key,
 * cp, every, secs}, lazy, recs}: one round trip, not two, and none before
 * the sandbox is built (the intent is sent while the child builds it). */
#ifndef CD_CLI_WARM_H
#define CD_CLI_WARM_H

#include "audit/audit.h"
#include "util/bounds.h"

#include <jansson.h>
#include <stddef.h>

#define CLI_WARM_FRAME_MAX (4u * 1024 * 1024)
#define CLI_WARM_TIMEOUT_S 10 /* a service that does not answer in time is stale */

/* The service's directory and socket path: $CORDON_SERVICE_DIR/UID (for
 * tests), else $XDG_RUNTIME_DIR/cordon, $XDG_STATE_HOME/cordon,
 * ~/.local/state/cordon.  0 or -errno. */
int cli_warm_dir(char *out, size_t outlen);
int cli_warm_sock(char *out, size_t outlen);

/* Make the directory (0700) or check an existing one: owned by us, no
 * access for group or others, not a link.  0 or -errno. */
int cli_warm_dir_check(const char *dir, int create);

/* The service's socket in every directory it may use (CORDON_SERVICE_DIR,
 * XDG_RUNTIME_DIR, XDG_STATE_HOME, HOME), for the sandbox plan's private
 * paths (their directories are masked in every sandbox); this
 * environment's directory is created first.  Fills up to max of buf and
 * v (v[i] = buf[i]); returns how many. */
size_t cli_warm_private(char (*buf)[CD_PATH_MAX], char **v, size_t max);

/* 1 when the warm path is switched on ($CORDON_WARM unset or not "0"). */
int cli_warm_enabled(void);

/* One framed message: write all of it / read exactly one (cap above).
 * *ret is a new reference.  0 or -errno / -CD_E_PARSE. */
int cli_warm_send(int fd, json_t *msg);
int cli_warm_recv(int fd, json_t **ret);

/* The uid of the peer of a connected Unix socket, or -1. */
long cli_warm_peer_uid(int fd);

/* A record as JSON and back (fields named as the log's columns).  The
 * record read back points into `o`, which must outlive it. */
json_t *cli_warm_record_json(const struct cd_record *r);
int cli_warm_record_from(json_t *o, struct cd_record *r);

/* `cordon run`'s log: through the service when it answers correctly
 * (0, *ret a remote log), else 1 (the caller opens the log itself; a
 * service is started in the background for the next runs when none
 * runs).  `cfg`'s paths are resolved by the caller. */
int cli_warm_audit_open(const char *db, const struct cd_audit_opts *o, struct cd_audit **ret);

/* "warm" when every record of this process went through the service,
 * "cold" otherwise. */
const char *cli_warm_path(void);

int cmd_service(int argc, char **argv);

#endif
