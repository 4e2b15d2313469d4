/* store-rows.h — the rows the store keeps: a temporary grant, an approval
 * request, an MCP tool pin, a proposal and its files, an audit record.
 * They are the store's (store.h), so that a backend needs no header of the
 * modules that use them; those modules (temp-grant.h, approval.h,
 * mcp-pins.h, proposal.h, audit.h) include this one and add their
 * operations.  What the store allocates (a loaded proposal, a list of
 * them) it frees here (store-rows.c). */
#ifndef CD_STORE_ROWS_H
#define CD_STORE_ROWS_H

#include <stddef.h>
#include <stdint.h>

/* ---- temporary grants (temp-grant.h) -------------------------------- */

/* Grants that live in the state database rather than in the file
 * (temp-grant.h): a break-glass grant (an operator's emergency grant to a
 * declared agent, with a ticket and a hard time cap) and a delegated grant
 * (a sub-agent "PARENT/NAME" receiving part of what PARENT holds). */
enum cd_temp_kind {
	CD_TEMP_BREAK_GLASS = 1,
	CD_TEMP_DELEGATED = 2,
};

#define CD_TEMP_ID_MAX 40

/* One row.  Strings are borrowed (valid during a callback, or owned by the
 * caller of cd_temp_add). */
struct cd_temp_grant {
	char id[CD_TEMP_ID_MAX];  /* "bg-<16 hex>" or "dg-<16 hex>" */
	enum cd_temp_kind kind;   /* above */
	const char *agent, *task; /* task may be NULL */
	const char *tool;
	const char *parent;        /* delegated: the delegating agent */
	const char *grant_json;    /* the grant mapping */
	const char *ticket;        /* break-glass: the ticket id */
	const char *by;            /* who created it */
	const char *policy_sha256; /* of the policy checked at creation, or NULL */
	int64_t created, expires;  /* seconds since the epoch */
	const char *signature;     /* by `by`'s key or a console key (row-sign.h), or NULL */
	const char *ended;         /* NULL while active, "revoked" or "expired" */
	int64_t ended_at;
	const char *ended_by;
	int64_t uses, last_used;
};

/* "break-glass" / "delegated". */
const char *cd_temp_kind_name(enum cd_temp_kind k);

/* ---- the approval queue (approval.h) ------------------------------ */

#define CD_APPROVAL_ID_MAX 40

/* One request.  Strings are borrowed (valid during a callback, or owned by
 * the caller of cd_approval_request). */
struct cd_approval {
	char id[CD_APPROVAL_ID_MAX]; /* "ap-<16 hex>" */
	const char *status;          /* pending | approved | denied | expired | used */
	const char *agent, *task, *tool, *action;
	const char *args_json; /* canonical JSON of what the call does */
	char args_sha256[65];  /* cd_approval_hash(tool, action, args_json) */
	const char *grant_ids; /* comma-separated */
	const char *approval;  /* "human" or "policy:NAME" */
	const char *profile;   /* the profile the decision named, or NULL */
	const char *policy;    /* the policy file's path, for the approver list */
	const char *policy_sha256;
	const char *requester; /* JSON: pid, uid, user, front end */
	const char *run_id;
	int64_t created, deadline; /* seconds since the epoch */
	int64_t decided_at;        /* 0 while pending */
	const char *decided_by, *comment;
	int64_t used_at, sampled_at;
	const char *sampled_by;
	/* JSON {"args", "commitments"}: the arguments as the audit log shows
	 * them when the grants mask (cd_gate_approval_log_args), or NULL. */
	const char *log_args;
	/* The approver's signature over the decision ("ed25519:BASE64",
	 * approval-sign.h), or NULL: unsigned. */
	const char *signature;
};

/* ---- MCP tool pins (mcp-pins.h) ----------------------------------- */

/* One pin. */
struct cd_mcp_pin_row {
	const char *server, *tool, *sha256, *definition, *state, *approved_by;
	int64_t first_seen, last_seen, approved_at; /* approved_at 0: never */
	const char *signature;                      /* over the approval (mcp-pins.h), or NULL */
};

/* ---- agent tokens (cordon mcp token; the HTTP front) ---------------- */

/* One bearer token of an agent: only its SHA-256 (hex) is kept.  policy:
 * the policy file the front decides its sessions with (NULL: the front's
 * own); expires 0: never; revoked 0: in force. */
struct cd_agent_token {
	const char *id, *hash, *agent, *policy;
	int64_t created, expires, revoked;
};

/* ---- proposals (proposal.h) --------------------------------------- */

enum cd_prop_op {
	CD_PROP_ADDED = 1,
	CD_PROP_MODIFIED,
	CD_PROP_DELETED,
	CD_PROP_REFUSED, /* something the proposal will never apply (note says why) */
	CD_PROP_MKDIR,   /* a new directory (new_mode) */
	CD_PROP_RMDIR,   /* a directory of the tree removed (base_mode) */
};
#define CD_PROP_NOPS 7 /* counts are indexed by op: 1 .. CD_PROP_RMDIR */

#define CD_PROP_MAX_FILES 200000 /* entries (files, directories) of one proposal */

struct cd_prop_file {
	char *path; /* relative to the tree, '/'-separated, any other bytes */
	size_t path_len;
	enum cd_prop_op op;
	char base_sha256[65], new_sha256[65]; /* "" when there is none */
	unsigned base_mode, new_mode;         /* permission bits; 0 when none */
	int flagged;                          /* would run later on the host */
	int flagged_row;                      /* load: flagged as the row held it */
	char *note;                           /* REFUSED: why; else NULL */
	char *diff;                           /* unified diff for text, or NULL */
	size_t diff_len;
	/* Filled by select and apply. */
	int selected;
	int applied;
	char problem[160]; /* why apply refused this file, "" if none */
	char tmp[64];      /* apply: the staged temporary name, "" if none */
};

/* The run's layer: its caps and what the run left in it.  size 0: not
 * recorded (a proposal made before layers were capped). */
struct cd_prop_layer {
	uint64_t size, inodes;       /* the caps (--propose-size, --propose-inodes) */
	uint64_t used, used_inodes;  /* in use when the run ended */
	int bytes_full, inodes_full; /* none was left: a write past it failed (ENOSPC) */
};

struct cd_proposal {
	char id[40];
	char run_id[40];
	char *agent, *task; /* may be NULL */
	char *tree;         /* the real tree (canonical host path) */
	char *upper;        /* the store holding the new content (host directory) */
	struct cd_prop_layer layer;
	int64_t created;
	char status[16]; /* "pending", "applied", "partial", "rejected" */
	char *decided_by, *branch, *commit;
	int64_t decided_at;
	struct cd_prop_file *files; /* sorted by path */
	size_t nfiles;
	char mac[65]; /* the proposing host's MAC (proposal.h), hex; "" none */
	/* load: the key the MAC verified under, for the MAC finish writes
	 * (CD_PROPOSAL_KEY_LEN bytes); zeroed when freed */
	unsigned char mac_key[32];
	int have_mac_key;
};

/* The op's name: "added", "modified", "deleted", "refused", "mkdir",
 * "rmdir". */
const char *cd_prop_op_name(enum cd_prop_op op);

/* Free a proposal (files, diffs and all), one file's strings, and an
 * array of n proposals without files (proposal_list's). */
void cd_proposal_free(struct cd_proposal *p);
void cd_prop_file_release(struct cd_prop_file *f);
void cd_proposal_list_free(struct cd_proposal *v, size_t n);

/* ---- the audit log (audit.h) ---------------------------------------- */

#define CD_AUDIT_HASH_LEN   32 /* SHA-256 */
#define CD_AUDIT_LOG_ID_LEN 32 /* hex characters of the log id */

/* The text fields of a stored record, in canonical order. */
enum cd_audit_field {
	CD_AF_HOST,
	CD_AF_KIND,
	CD_AF_RUN_ID,
	CD_AF_AGENT,
	CD_AF_TASK,
	CD_AF_TOOL,
	CD_AF_ACTION,
	CD_AF_TARGET,
	CD_AF_DECISION,
	CD_AF_GRANT_IDS,
	CD_AF_REASON,
	CD_AF_ARGV_SHA256,
	CD_AF_CODE_SHA256,
	CD_AF_STDIN_SHA256,
	CD_AF_STDOUT_SHA256,
	CD_AF_STDERR_SHA256,
	CD_AF_DETAILS,
	CD_AF_NSTR
};

struct cd_audit_str {
	const char *p; /* NULL when absent; not NUL-terminated in general */
	size_t len;
};

/* One stored record as read back (views into the reader's memory, valid
 * during the callback only). */
struct cd_audit_entry {
	uint64_t seq;
	int64_t time_ns; /* UTC, ns since the epoch */
	int has_exit;
	int64_t exit_code;
	int has_duration;
	uint64_t duration_ms;
	struct cd_audit_str str[CD_AF_NSTR];
	unsigned char prev[CD_AUDIT_HASH_LEN]; /* stored predecessor hash */
	unsigned char hash[CD_AUDIT_HASH_LEN]; /* stored chain hash */
	int hashes_ok;                         /* both hash columns were 32 bytes */
};

/* A query of the log.  NULL/0 members do not filter.  Times are UTC ns, inclusive. */
struct cd_audit_filter {
	const char *agent, *task, *tool, *kind, *decision, *run_id;
	int64_t since_ns, until_ns; /* 0: unbounded */
	uint64_t after_seq;         /* only seq > after_seq */
	/* A store with one chain per host (PostgreSQL): a JSON object
	 * {"HOST": SEQ, ...}, only the records after SEQ in each chain named
	 * (all of the others); after_seq is then not used.  NULL: none. */
	const char *after_chains;
	uint64_t before_seq; /* only seq < before_seq; 0: unbounded */
	uint64_t last;       /* only the last N matches (still in order); 0: all */
	/* With before_seq: a keyset cursor, only the records before the one
	 * at (before_time_ns, before_host, before_seq) in audit_query's order.
	 * A store of several chains (PostgreSQL) orders by time, host, seq
	 * and pages through a matching index; SQLite's one chain is in seq
	 * order, so it needs before_seq alone.  NULL: seq < before_seq. */
	int64_t before_time_ns;
	const char *before_host;
};

#endif
