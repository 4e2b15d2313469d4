/* audit.h — the tamper-evident audit log: the one module that writes it.
 *
 * Records are rows of fixed, structured fields in an SQLite database (WAL,
 * synchronous=FULL).  Each record commits to its predecessor by hash over a
 * canonical, length-prefixed encoding of every field (audit-chain.c), and a
 * signed checkpoint (Ed25519 over log id, size and head hash) is written
 * into the log every N records / T seconds / on demand, and appended to a
 * checkpoint file that can be copied off the host (audit-checkpoint.c).
 * `cd_audit_verify` (audit-verify.c) recomputes the chain and checks the
 * checkpoints.
 *
 * Trust boundary: every field of a record is untrusted data (agent names,
 * targets, reasons come from agents and tools); it is stored as given and
 * escaped by whoever displays it.  The database file itself is untrusted
 * when read back: a reader never assumes a row is well formed.
 *
 * The library never prints, exits or reads the environment: paths come from
 * the caller (src/cli/cli-audit.c resolves them). */
#ifndef CD_AUDIT_H
#define CD_AUDIT_H

#include "util/err.h"
#include "util/num.h"
#include "store/store-rows.h"

#include <stddef.h>
#include <stdint.h>

struct cd_buf;

/* Caps on what one record may hold. */
#define CD_AUDIT_FIELD_MAX   (64 * 1024)   /* one text field */
#define CD_AUDIT_DETAILS_MAX (1024 * 1024) /* the details JSON */

/* CD_AUDIT_HASH_LEN, CD_AUDIT_LOG_ID_LEN, the text fields (enum
 * cd_audit_field), a stored record (struct cd_audit_entry) and a query
 * (struct cd_audit_filter): store-rows.h. */

/* What a caller appends.  NULL strings are absent (distinct from "").
 * `kind` is required: "run.intent", "run.result", "decision", "policy.load",
 * "approval.*", "egress", "mcp.call", "grant.*" ...  ("checkpoint" is
 * reserved for the library).  The *_sha256 fields are lower-case hex.
 * `details_json`, when set, must be a JSON object.  Time, host and seq are
 * filled by the library. */
struct cd_record {
	const char *kind;
	const char *run_id;
	const char *agent;
	const char *task;
	const char *tool;
	const char *action;
	const char *target;
	const char *decision;
	const char *grant_ids; /* comma-separated */
	const char *reason;
	int has_exit;
	int64_t exit_code;
	int has_duration;
	uint64_t duration_ms;
	const char *argv_sha256;
	const char *code_sha256;
	const char *stdin_sha256;
	const char *stdout_sha256;
	const char *stderr_sha256;
	const char *details_json;
};

/* Column / JSON names of the text fields ("host", "kind", "run_id" ...);
 * stable: the jsonl export and the schema use them. */
extern const char *const cd_audit_field_names[CD_AF_NSTR];

/* ---- the chain (audit-chain.c) ------------------------------------- */

/* Canonical encoding of everything in `e` but the hashes: a version byte,
 * seq, time, the two optional integers (flag + value), then each text field
 * as a 32-bit big-endian length (0xffffffff when absent) and its bytes.
 * Appends to `out`.  -CD_E_LIMIT past a cap. */
int cd_audit_encode(const struct cd_audit_entry *e, struct cd_buf *out);

/* The exact inverse: fills `e` (views into `p`) when `p` is one complete
 * canonical encoding, -CD_E_PARSE otherwise.  Used by tests and fuzzing to
 * show the encoding is unambiguous (decode, re-encode, compare). */
int cd_audit_decode(const void *p, size_t len, struct cd_audit_entry *e);

/* genesis = SHA-256(0x02 || "cordon audit v1" || log_id) */
void cd_audit_genesis(const char *log_id, unsigned char ret[CD_AUDIT_HASH_LEN]);
/* leaf = SHA-256(0x00 || encoding); node = SHA-256(0x01 || prev || leaf). */
int cd_audit_leaf(const struct cd_audit_entry *e, unsigned char ret[CD_AUDIT_HASH_LEN]);
void cd_audit_node(const unsigned char prev[CD_AUDIT_HASH_LEN],
                   const unsigned char leaf[CD_AUDIT_HASH_LEN],
                   unsigned char ret[CD_AUDIT_HASH_LEN]);
/* The chain hash of `e` after `prev`; 0 or -CD_E_LIMIT/-ENOMEM. */
int cd_audit_chain(const unsigned char prev[CD_AUDIT_HASH_LEN], const struct cd_audit_entry *e,
                   unsigned char ret[CD_AUDIT_HASH_LEN]);

/* Lower-case hex of n bytes into out (2n+1 bytes); exactly 2n lower-case
 * hex characters -> n bytes, -CD_E_PARSE otherwise (num.h). */
static inline void cd_audit_hex(const unsigned char *p, size_t n, char *out)
{
	cd_hex(p, n, out);
}
static inline int cd_audit_unhex(const char *s, size_t slen, unsigned char *out, size_t n)
{
	return cd_unhex(s, slen, out, n);
}

/* ---- keys and checkpoints (audit-checkpoint.c) ---------------------- */

#define CD_AUDIT_KEY_ID_LEN  8
#define CD_AUDIT_SIG_LEN     64
#define CD_AUDIT_PK_LEN      32
#define CD_AUDIT_CP_LINE_MAX 512

struct cd_audit_key; /* an Ed25519 signing key, wiped on free */

/* Create a new key pair: the secret key at `sk_path` (mode 0600, refused if
 * it exists) and the public key at `pk_path` (0644, refused if it exists).
 * Parent directories must exist. */
int cd_audit_keygen(const char *sk_path, const char *pk_path, struct cd_err *err);

/* Load a secret key; refused when the file is not a regular file owned by
 * the caller, is readable by group or others, or is malformed.  The caller
 * frees with cd_audit_key_free. */
int cd_audit_key_load(const char *sk_path, struct cd_audit_key **ret, struct cd_err *err);
void cd_audit_key_free(struct cd_audit_key *k);
void cd_audit_key_public(const struct cd_audit_key *k, unsigned char ret[CD_AUDIT_PK_LEN]);

/* Load a public key file. */
int cd_audit_pubkey_load(const char *pk_path, unsigned char ret[CD_AUDIT_PK_LEN],
                         struct cd_err *err);

/* A key id: the first 8 bytes of SHA-256("cordon audit key id" || pk). */
void cd_audit_key_id(const unsigned char pk[CD_AUDIT_PK_LEN],
                     unsigned char ret[CD_AUDIT_KEY_ID_LEN]);

/* A signed statement of the head of one log:
 *   cordon-checkpoint v1 LOGID SIZE HEAD TIME KEYID SIG
 * (one line; hex except SIZE and TIME, which are decimal).  The signature
 * covers the line up to and excluding " SIG". */
struct cd_audit_checkpoint {
	char log_id[CD_AUDIT_LOG_ID_LEN + 1];
	uint64_t size; /* records covered: seq 1..size */
	unsigned char head[CD_AUDIT_HASH_LEN];
	int64_t time_ns;
	unsigned char key_id[CD_AUDIT_KEY_ID_LEN];
	unsigned char sig[CD_AUDIT_SIG_LEN];
};

int cd_audit_checkpoint_sign(const struct cd_audit_key *k, struct cd_audit_checkpoint *cp);
/* Format as one line without the newline; -CD_E_LIMIT if outlen is short
 * (CD_AUDIT_CP_LINE_MAX is always enough). */
int cd_audit_checkpoint_format(const struct cd_audit_checkpoint *cp, char *out, size_t outlen);
/* Parse exactly one line (no newline) strictly; -CD_E_PARSE otherwise. */
int cd_audit_checkpoint_parse(const char *line, size_t len, struct cd_audit_checkpoint *ret);
/* 0 when `cp` carries a valid signature by `pk`; -CD_E_DENIED otherwise. */
int cd_audit_checkpoint_check(const struct cd_audit_checkpoint *cp,
                              const unsigned char pk[CD_AUDIT_PK_LEN]);

/* ---- the store (audit-store.c) ------------------------------------- */

struct cd_audit; /* an open log */

struct cd_audit_opts {
	const char *key_path;       /* signing key; NULL: no automatic checkpoints */
	uint64_t checkpoint_every;  /* records between checkpoints; 0: never */
	uint64_t checkpoint_secs;   /* seconds between checkpoints (checked on append); 0: never */
	const char *checkpoint_out; /* file checkpoint lines are appended to; NULL: none */
	unsigned busy_ms;           /* how long to wait for other writers; 0: 10000 */
	int read_only;              /* open an existing log for reading only */
	/* The chain written (the records' host field); NULL: this host's
	 * name.  `cordon log ship` writes a local log's chain by its name. */
	const char *host;
};

/* Open (and create, unless read_only) the log at db_path: parent
 * directories are created 0700, the database 0600, WAL mode, the schema.
 * Fails closed: an unwritable, corrupt, foreign or locked database is an
 * error.  Free with cd_audit_close. */
int cd_audit_open(const char *db_path, const struct cd_audit_opts *opts, struct cd_audit **ret,
                  struct cd_err *err);
void cd_audit_close(struct cd_audit *a);

/* A log whose records another process appends: the per-user service
 * (src/cli/cmd-service.c), which holds the real log open and commits
 * concurrent runs' records together.  `append` must return 0 only once
 * the records are durable (lazy: committed), writing *ret_last (the seq of
 * the last one; may be NULL); records are checked here before it is
 * called.  `close` (may be NULL) is called by cd_audit_close.  Such a log
 * answers appends only: query, size, sync and wait fail with -ENOTSUP,
 * checkpoints with -ENOKEY.  log_id may be NULL (not known to this
 * process: the other one opens the log with the first append); then
 * cd_audit_log_id() is "". */
struct cd_audit_remote {
	int (*append)(void *ctx, const struct cd_record *r, size_t n, int lazy, uint64_t *ret_last,
	              struct cd_err *err);
	void (*close)(void *ctx);
	void *ctx;
};
int cd_audit_open_remote(const char *db_path, const char *log_id, const struct cd_audit_remote *rm,
                         struct cd_audit **ret, struct cd_err *err);
/* 1 for a log opened with cd_audit_open_remote. */
int cd_audit_is_remote(const struct cd_audit *a);

/* The log's random id (32 hex characters). */
const char *cd_audit_log_id(const struct cd_audit *a);

/* Append one record, durable (committed, WAL fsynced) before returning 0.
 * Writes *ret_seq (may be NULL).  Safe against other processes appending
 * at the same time: the chain stays linear.  May also write a checkpoint
 * (a following record of kind "checkpoint"). */
int cd_audit_append(struct cd_audit *a, const struct cd_record *r, uint64_t *ret_seq,
                    struct cd_err *err);

/* Append one record committed but not yet fsynced: it becomes durable with
 * the next durable append (or cd_audit_sync).  Never writes a checkpoint.
 * For records that follow an action already made durable by its intent
 * (a result), where a crash may lose the tail but never reorder it. */
int cd_audit_append_lazy(struct cd_audit *a, const struct cd_record *r, struct cd_err *err);

/* Make every committed record durable (fsync the WAL). */
int cd_audit_sync(struct cd_audit *a, struct cd_err *err);

/* Wait up to timeout_ms for another process to append: 1 when one did (or
 * may have), 0 on timeout.  For readers that follow the log. */
int cd_audit_wait(struct cd_audit *a, unsigned timeout_ms);

/* Extend the WAL with written zeros to the size it reaches before SQLite's
 * automatic checkpoint (when shorter), so the durable commits of a long
 * writer (cordon mcp) overwrite data in place instead of growing the file:
 * cheaper fsyncs.  Nothing is recorded; a log whose WAL does not exist yet,
 * or without automatic checkpoints, is left alone. */
int cd_audit_presize_wal(struct cd_audit *a, struct cd_err *err);

/* Append n records in one transaction (bulk import, tests, benchmarks);
 * *ret_last is the seq of the last one. */
int cd_audit_append_many(struct cd_audit *a, const struct cd_record *r, size_t n,
                         uint64_t *ret_last, struct cd_err *err);

/* Write a signed checkpoint now (needs key_path).  *ret_size is the number
 * of records it covers. */
int cd_audit_checkpoint(struct cd_audit *a, uint64_t *ret_size, struct cd_err *err);

/* A non-fatal problem from the last call (a checkpoint file that could not
 * be written after the record was committed), or NULL. */
const char *cd_audit_warning(const struct cd_audit *a);

/* Validate a record as cd_audit_append would, without writing. */
int cd_audit_record_check(const struct cd_record *r, struct cd_err *err);

/* Calls fn for each stored record matching f, in seq order; stops early
 * when fn returns non-zero (which is returned).  */
typedef int (*cd_audit_entry_fn)(const struct cd_audit_entry *e, void *ctx);
int cd_audit_query(struct cd_audit *a, const struct cd_audit_filter *f, cd_audit_entry_fn fn,
                   void *ctx, struct cd_err *err);

/* Make the indexes filtered pages read through (the console's), when
 * absent: the store's audit_index.  0, or an error (the queries still
 * answer, only slower). */
int cd_audit_index(struct cd_audit *a, struct cd_err *err);

/* Every chain's last seq, for a store with one chain per host
 * (PostgreSQL); -ENOTSUP for a log of one chain. */
int cd_audit_heads(struct cd_audit *a, int (*fn)(const char *host, uint64_t seq, void *ctx),
                   void *ctx, struct cd_err *err);

/* The highest seq stored (0 for an empty log). */
int cd_audit_size(struct cd_audit *a, uint64_t *ret, struct cd_err *err);

/* ---- shipping (audit-ship.c) --------------------------------------- */

struct cd_audit_ship_opts {
	const char *to;              /* the shared store (a postgresql:// URI) */
	uint64_t batch;              /* records per durable transaction */
	unsigned busy_ms;            /* how long to wait for the chain's lock; 0: 10000 */
	const unsigned char *pubkey; /* checks the local checkpoints' signatures; NULL: not */
};

struct cd_audit_ship_report {
	char host[256];         /* the chain shipped ("": the local log is empty) */
	uint64_t local_last;    /* the local records verified */
	uint64_t remote_before; /* the shared chain's last seq before */
	uint64_t shipped;       /* records committed into it */
};

/* Copy the local log `from` (opened read-only) into the chain of the same
 * host name in the shared store o->to, verifying it as it goes; only the
 * records after the shared chain's head are sent, in durable batches.
 * 0 when the shared chain now ends where the local log does; negative
 * with a one-line reason naming the seq otherwise (-CD_E_DENIED: a broken
 * local chain, a shared chain that differs or is longer, another log's
 * chain), the batches verified before the refusal kept. */
int cd_audit_ship(struct cd_audit *from, const struct cd_audit_ship_opts *o,
                  struct cd_audit_ship_report *rep, struct cd_err *err);

/* ---- output (audit-format.c) --------------------------------------- */

/* One record as a JSON object (one line, no newline) with the stable field
 * names documented in docs/cordon-log.md. */
int cd_audit_entry_json(const struct cd_audit_entry *e, struct cd_buf *out);
/* RFC 3339 UTC with nanoseconds: 2026-01-02T03:04:05.123456789Z. */
int cd_audit_time_format(int64_t ns, char *out, size_t outlen);
/* Parse a time for --since/--until: what cd_time_parse reads (RFC 3339
 * with Z or an offset, a date, "@SECONDS"), or a duration ago ("10m").
 * `now_ns` is the reference for durations. */
int cd_audit_time_parse(const char *s, int64_t now_ns, int64_t *ret_ns);

/* ---- verification (audit-verify.c) --------------------------------- */

enum cd_audit_problem {
	CD_AUDIT_INTACT = 0,
	CD_AUDIT_MODIFIED,    /* a record's fields no longer match its hash */
	CD_AUDIT_MISSING,     /* records deleted from the middle */
	CD_AUDIT_REORDERED,   /* records moved */
	CD_AUDIT_INSERTED,    /* a record that does not chain from its predecessor */
	CD_AUDIT_TRUNCATED,   /* records deleted from the end */
	CD_AUDIT_ROLLED_BACK, /* the log is older than a checkpoint the verifier holds */
	CD_AUDIT_BAD_SIGNATURE,
	CD_AUDIT_BAD_CHECKPOINT, /* a checkpoint that does not match the chain or is malformed */
	CD_AUDIT_FOREIGN,        /* a checkpoint of another log */
	CD_AUDIT_CUT,            /* the chain ends below its last signed checkpoint */
};

const char *cd_audit_problem_name(enum cd_audit_problem p);

#define CD_AUDIT_REPORT_INTERRUPTED 16
#define CD_AUDIT_REPORT_CHAINS      16

struct cd_audit_verify_opts {
	const unsigned char *pubkey; /* CD_AUDIT_PK_LEN bytes; NULL: signatures unchecked */
	const char *checkpoint_path; /* external checkpoint file; NULL: none */
};

struct cd_audit_report {
	enum cd_audit_problem problem; /* CD_AUDIT_INTACT when everything checked out */
	uint64_t bad_seq;              /* the first bad record (problem != INTACT) */
	char what[256];                /* one line: what is wrong */
	uint64_t records;              /* rows read */
	uint64_t last_seq;
	uint64_t checkpoints;      /* checkpoint records in the log */
	uint64_t signatures;       /* signatures checked (log and file) */
	uint64_t file_checkpoints; /* complete lines in the checkpoint file */
	uint64_t file_covered;     /* largest size a file checkpoint covers */
	int torn_file_line;        /* the file ends in an incomplete line (crash) */
	uint64_t interrupted;      /* run.intent without run.result */
	struct {
		uint64_t seq;
		char run_id[64];
	} interrupted_runs[CD_AUDIT_REPORT_INTERRUPTED];
	/* A store with one chain per host (PostgreSQL): how many were
	 * checked, and the one that is broken ("" when none, or with one
	 * chain); seq numbers are then that chain's. */
	uint64_t chains;
	char chain[256];
	/* Per chain (the first CD_AUDIT_REPORT_CHAINS), the records after its
	 * last checkpoint: nothing signed covers them, so deleting them is
	 * seen only against a copy kept elsewhere (docs/cordon-log.md). */
	uint64_t unanchored_chains; /* chains with such records */
	struct {
		char chain[256];          /* "" with one chain */
		uint64_t last_checkpoint; /* the seq of its last checkpoint record; 0: none */
		uint64_t last_seq;
	} unanchored[CD_AUDIT_REPORT_CHAINS];
};

/* Verify the whole log.  Returns 0 when verification ran (the outcome is in
 * *ret), negative when it could not (I/O, out of memory, unreadable file). */
int cd_audit_verify(struct cd_audit *a, const struct cd_audit_verify_opts *o,
                    struct cd_audit_report *ret, struct cd_err *err);

#endif
