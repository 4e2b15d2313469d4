/* cli-launch-int.h — what the files of the launcher share (`cordon run`,
 * `cordon shell`; cli-launch.h is its public face):
 *   cli-launch.c          the run itself: check, decide, plan, run, record
 *   cli-launch-opts.c     the options: their table, parser and --help
 *   cli-launch-policy.c   policy and profile, caches, the install step, host ids
 *   cli-launch-egress.c   the egress proxy process beside the sandbox
 *   cli-launch-propose.c  --propose: the overlay's layer and the proposal
 *   cli-launch-tty.c      signals, the terminal and the session recording
 *   cli-launch-report.c   refusals, planted paths and the JSON result record
 * Nothing here is for another command.  Functions that fail report their
 * own message (cli_errorf) and return -1 unless said otherwise.
 */
#ifndef CD_CLI_LAUNCH_INT_H
#define CD_CLI_LAUNCH_INT_H

#include "cli-launch.h"

#include "proposal/proposal.h"
#include "sandbox/idslot.h"
#include "sandbox/plan.h"
#include "sandbox/sandbox.h"
#include "util/bounds.h"

#include <jansson.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

struct cd_arena;
struct cd_audit;
struct cd_decision;
struct cd_egress_policy;
struct cd_err;
struct cd_idslot;
struct cd_policy;
struct cd_sandbox_profile;
struct cd_session;
struct cd_state;

#define MAX_OPT_ITEMS 128
#define MAX_CACHES    16

enum {
	OPT_RO = 256,
	OPT_RW,
	OPT_SCRATCH,
	OPT_SCRATCH_SIZE,
	OPT_ENV,
	OPT_SECRET,
	OPT_CWD,
	OPT_TIMEOUT,
	OPT_OUTPUT_LIMIT,
	OPT_MEMORY,
	OPT_PIDS,
	OPT_CPU_TIME,
	OPT_JSON,
	OPT_JSON_FD,
	OPT_DRY_RUN,
	OPT_ALLOW_DEGRADED,
	OPT_PROFILE,
	OPT_POLICY,
	OPT_AGENT,
	OPT_TASK,
	OPT_TOOL,
	OPT_AUDIT,
	OPT_STATE,
	OPT_SKIP_SOCKET_SCAN,
	OPT_ALLOW_HOME,
	OPT_ALLOW_HOST,
	OPT_NET,
	OPT_APPROVAL_TIMEOUT,
	OPT_APPROVE_INTERACTIVE,
	OPT_PROPOSE,
	OPT_PROPOSE_SIZE,
	OPT_PROPOSE_INODES,
	OPT_RECORD_LIMIT,
	OPT_CACHE,
	OPT_INSTALL,
	OPT_DIRECT_STDIO,
	OPT_ROOTFS,
	OPT_IMAGE,
};

struct run_args {
	struct cd_plan_bind binds[MAX_OPT_ITEMS];
	size_t nbinds;
	char *env[MAX_OPT_ITEMS];
	size_t nenv;
	char *secrets[MAX_OPT_ITEMS];
	size_t nsecrets;
	const char *cwd, *scratch;
	const char *rootfs; /* --rootfs DIR: an image's root in place of the host's */
	const char *image;  /* --image FILE: an image unpacked into the cache, as rootfs */
	struct cd_limits limits;
	int json, json_fd, dry_run, allow_degraded, skip_socket_scan, allow_home;
	int direct_stdio; /* stdin and stdout handed to the command, not relayed */
	const char *allow_hosts[MAX_OPT_ITEMS];
	size_t nallow;
	int net_none;
	uint64_t approval_timeout_ms;
	int approve_interactive;
	int propose, propose_caps; /* --propose; --propose-size/-inodes given */
	const char *profile, *policy, *agent, *task, *tool, *audit;
	unsigned set;          /* SET_* limits given as options: they win over the profile */
	uint64_t record_limit; /* shell: cap of the session recording */
	const struct cli_launch_mode *mode;
	const char *caches[MAX_CACHES]; /* --cache NAME:DEST, as given */
	size_t ncaches;
	const char *install; /* --install CMD */
	/* Where each option was in argv, to hand the install step the same
	 * options minus the ones that are the command's alone. */
	struct {
		int code, start, end;
	} spans[4 * MAX_OPT_ITEMS];
	size_t nspans;
};

enum {
	SET_SCRATCH = 1u << 0,
	SET_TIMEOUT = 1u << 1,
	SET_CPU = 1u << 2,
	SET_OUTPUT = 1u << 3,
	SET_MEMORY = 1u << 4,
	SET_PIDS = 1u << 5,
	SET_PROPOSE_SIZE = 1u << 6,
};

/* Egress: the proxy for one run, in a process of its own outside the
 * sandbox, serving the listening socket the sandbox made on its loopback.
 * It ends when the run does (the stop pipe closes) or when cordon dies. */
struct egress {
	const struct run_args *a;
	const char *run_id;
	char *log_mask; /* the run's mask rules as JSON (--log-mask), or NULL */
	int stop[2];    /* the proxy process reads [0]; cordon closes [1] at the end */
	pid_t pid;
};

/* Proposal mode: the overlay's layer (a capped tmpfs the sandbox makes,
 * handed over after the run) and the proposal's directory beside the
 * state database, which no sandbox sees, where the new content is stored. */
struct layer {
	char dir[CD_PATH_MAX], store[CD_PATH_MAX + 8];
	int fd; /* the layer tmpfs once the run has ended, or -1 */
	int made, keep, measured;
	struct cd_prop_layer use;
};

/* cli-launch-opts.c */
void launch_args_release(struct run_args *a);
int launch_add_bind(struct run_args *a, const char *arg, int rw);
int launch_add_env(struct run_args *a, const char *arg);
/* The index of the command in argv, or -1 (reported); --help exits. */
int launch_parse_args(int argc, char **argv, struct run_args *a);

/* cli-launch-policy.c */
int launch_apply_profile(struct run_args *a, struct cd_sandbox_profile *prof,
                         const struct cd_policy *policy, const char *granted,
                         struct cd_arena *arena);
#define LAUNCH_NPRIVATE 32
/* The run's host ids, taken early: a root caller's slot is locked at once
 * and its keeper's check (idslot.h) runs while the policy is loaded and
 * the plan built; launch_host_ids_confirm waits for it before anything
 * runs as that id.  A failure to take one is kept (r, err) and refuses
 * the run where the plan is built, as before. */
struct launch_ids {
	int started, r;
	uint32_t first, count;
	struct cd_idmap_range range;
	struct cd_err err;
};

void launch_host_ids_start(struct launch_ids *ids, struct cd_idslot *slot);
/* The ids into po: 0, or the kept failure (-errno, *err set). */
int launch_host_ids_apply(struct launch_ids *ids, struct cd_plan_opts *po,
                          const struct cd_idslot *slot, struct cd_err *err);
/* 0 when po's ids are confirmed; 1 when another slot replaced a busy one
 * (po updated: rebuild the plan); -errno (*err set). */
int launch_host_ids_confirm(struct launch_ids *ids, struct cd_plan_opts *po, struct cd_idslot *slot,
                            struct cd_err *err);

void launch_private_paths(const struct run_args *a, char *v[LAUNCH_NPRIVATE],
                          char buf[LAUNCH_NPRIVATE][CD_PATH_MAX], size_t *ret_n);
int launch_load_policy(const struct run_args *a, struct cd_audit *audit, const char *run_id,
                       struct cd_policy **ret);
void launch_explain_refusal(const struct cd_decision *d, char *out, size_t cap);
int launch_run_install(const struct run_args *a, char **argv);
int launch_add_caches(struct run_args *a);

/* cli-launch-report.c */
unsigned launch_missing_protected(const char *cwd);
json_t *launch_planted_paths(const struct cd_plan *plan, unsigned before, json_t **ret_check);
json_t *launch_covered_paths(const struct cd_plan *p);
int launch_is_pipe(int fd);
int launch_emit_result(const struct run_args *a, const struct cd_plan *p, const struct cd_result *r,
                       json_t *planted, json_t *check, const struct layer *layer);
int launch_refuse(const struct run_args *a, const char *run_id, enum cd_reason why,
                  const char *msg);

/* cli-launch-tty.c */
int launch_signals_setup(sigset_t *old, int tty);
char **launch_default_shell(void);
void launch_tty_restore(void);
int launch_tty_raw(int fd);
int launch_session_open(const struct run_args *a, const char *run_id, char *path, size_t cap);
json_t *launch_session_save(int fd, const char *path, const struct cd_session *sess);

/* cli-launch-egress.c */
void launch_egress_serve(int listen_fd, void *ctx);
void launch_egress_stop(struct egress *e);
int launch_egress_policy(const struct run_args *a, struct cd_egress_policy **ret);

/* cli-launch-propose.c */
int launch_layer_make(struct layer *l, const char *run_id);
void launch_layer_take(int fd, void *ctx);
void launch_layer_measure(struct layer *l, const struct cd_limits *lim);
json_t *launch_layer_json(const struct layer *l);
void launch_layer_done(struct layer *l);
int launch_make_proposal(struct layer *l, const struct cd_plan *plan, const struct run_args *a,
                         const char *run_id, const struct cd_result *res, struct cd_state *state,
                         struct cd_audit *audit);

#endif
