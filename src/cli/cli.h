/* cli.h — what the subcommands share: the table entry type, exit codes and
 * message helpers.  The CLI owns argv, the environment, stdio, signals and
 * exit codes; the library does none of these. */
#ifndef CD_CLI_H
#define CD_CLI_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#ifndef CORDON_VERSION
#define CORDON_VERSION "0.1.0"
#endif

/* Exit statuses every subcommand uses (cordon run passes the command's
 * own status through; see cordon(1)). */
enum {
	CD_EXIT_OK = 0,
	CD_EXIT_FAIL = 1,      /* a check failed: verify, lint, test */
	CD_EXIT_USAGE = 2,     /* bad options (non-run subcommands) */
	CD_EXIT_TIMEOUT = 124, /* cordon run: the wall clock ran out */
	CD_EXIT_CORDON = 125,  /* cordon itself failed or refused */
	CD_EXIT_NOEXEC = 126,  /* found but not executable */
	CD_EXIT_NOTFOUND = 127,
};

/* The forms every TIME option takes (cd_time_parse, the one parser). */
#define CLI_TIME_FORMS "YYYY-MM-DD, YYYY-MM-DDTHH:MM:SSZ, YYYY-MM-DDTHH:MM:SS+HH:MM or @SECONDS"

struct cd_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

int cmd_run(int argc, char **argv);
int cmd_shell(int argc, char **argv);
int cmd_oci(int argc, char **argv); /* argv[0] is `cordon-oci` (cmd-oci.c) */
int cmd_cache(int argc, char **argv);
int cmd_log(int argc, char **argv);
int cmd_log_confirm(int argc, char **argv); /* cordon log confirm */
int cmd_log_ship(int argc, char **argv);    /* cordon log ship */
int cmd_policy(int argc, char **argv);
int cmd_proxy(int argc, char **argv);
int cmd_mcp(int argc, char **argv);
int cmd_inventory(int argc, char **argv);
int cmd_doctor(int argc, char **argv); /* cmd-doctor.c */

/* `cordon completion bash|zsh|fish` (cli-complete.c): a completion script
 * generated from the command table and the option tables below, the very
 * ones each command's parser takes (a new option is completed without a
 * second list to keep).  Each table ends with a NULL name. */
int cmd_completion(int argc, char **argv);
const struct cd_cmd *cli_commands(size_t *ret_n); /* main.c's table */
struct option;
extern const struct option *const cli_opts_run; /* run and shell */
extern const struct option *const cli_opts_cache;
extern const struct option *const cli_opts_log; /* every log subcommand */
/* Whether log subcommand SUB takes option O of cli_opts_log. */
int cli_log_opt_applies(const char *sub, const struct option *o);
extern const struct option *const cli_opts_log_confirm;
extern const struct option *const cli_opts_log_ship;
extern const struct option *const cli_opts_policy_request; /* check, explain */
extern const struct option *const cli_opts_policy_json;    /* lint, test, diff */
extern const struct option *const cli_opts_policy_review;
extern const struct option *const cli_opts_policy_matrix;
extern const struct option *const cli_opts_proxy;
extern const struct option *const cli_opts_grant; /* grant and delegate */
extern const struct option *const cli_opts_approvals;
extern const struct option *const cli_opts_serve;
extern const struct option *const cli_opts_inventory;
extern const struct option *const cli_opts_proposals;
extern const struct option *const cli_opts_mcp;
extern const struct option *const cli_opts_mcp_pins;
extern const struct option *const cli_opts_mcp_token;
extern const struct option *const cli_opts_doctor;

/* Start CMD in a `cordon run --policy` sandbox (cli-spawn.c) with pipes
 * for its stdin, stdout and stderr (our ends non-blocking).  0, or -1
 * (reported). */
struct cli_spawn {
	const char *policy, *agent, *task, *tool, *audit;
	const char *state; /* passed on as --state when set: the launch decision reads
	                      the same state database as the gateway */
	const char *cwd;   /* passed on as --cwd when set (else ours) */
	char *const *cmd;
	int direct; /* the pipes are the command's own stdin/stdout (--direct-stdio) */
};
int cli_spawn_run(const struct cli_spawn *sp, pid_t *ret_pid, int *to, int *from, int *errfd);
/* First thing in a child just forked from cordon: it dies when cordon does
 * (SIGKILL, kept across its exec), and exits at once when cordon already
 * died (it was reparented).  parent is cordon's getpid() before the fork. */
void cli_die_with_parent(pid_t parent);
int cmd_grant(int argc, char **argv);
int cmd_delegate(int argc, char **argv);
struct cd_state;
struct cd_audit;
int cmd_proposals(int argc, char **argv);

/* Proposals (cmd-proposals.c): one audit record of `kind`
 * ("proposal.created", ".applied", ".committed", ".rejected", ".refused")
 * with the change set (paths escaped) and who decided; 0 or -errno
 * (reported).  And where a run's proposal layer lives: beside the state
 * database, in proposals/RUN_ID (never visible to a sandbox). */
struct cd_proposal;
int cli_proposal_record(struct cd_audit *audit, const struct cd_proposal *p, const char *kind,
                        const char *by, const char *reason);
int cli_proposal_layer_dir(const char *state_opt, const char *run_id, char *out, size_t outlen);
/* This host's proposal key (proposal.h: proposal.key beside the layers,
 * made 0600 when absent) into key (CD_PROPOSAL_KEY_LEN bytes): 0, or -1
 * after saying why. */
int cli_proposal_key(const char *state_opt, unsigned char *key);

/* Every front end that decides with a policy first ends, and logs as
 * "grant.expired" records, the temporary grants whose time is up, then adds
 * the active ones to `policy` (may be NULL), warning about any the policy
 * no longer accepts (cmd-grant.c).  0, or -1 (reported): refuse. */
struct cd_policy;
int cli_temp_join(struct cd_state *state, struct cd_audit *audit, struct cd_policy *policy,
                  int64_t now);

/* Hold a needs-approval decision (cli-approval.c): says how to approve on
 * stderr, asks on the terminal when `interactive`, and waits up to
 * timeout_s.  dec ends as an allow (approval_id set) or a deny with its
 * reason.  0, or -1 (reported): refuse. */
struct cd_gate;
struct cd_run_request;
struct cd_decision;
int cmd_approvals(int argc, char **argv);
/* The approver's signing key (cmd-approvals.c): FILE, else
 * ~/.config/cordon/approver.key when it exists.  0 with *ret (NULL: no
 * key, unsigned), or -1 after saying why. */
struct cd_approver_key;
int cli_approver_key_open(const char *file, struct cd_approver_key **ret);
int cmd_serve(int argc, char **argv);
int cli_await_approval(const struct cd_gate *g, struct cd_run_request *rq, struct cd_decision *dec,
                       struct cd_state *state, int64_t timeout_s, int interactive,
                       char approval_id[64]);

/* The one option rule of every command (cli-opt.c): getopt_long with exact
 * long names only, no prefix abbreviations.  An abbreviated or unknown long
 * option, an unknown short one or a missing value is reported in one line
 * ("unknown option '--timout' (did you mean '--timeout'?)") and the process
 * exits with bad_exit (2 for usage, 125 for cordon run).  bad_exit < 0:
 * nothing is printed and '?' is returned instead (for a caller whose argv may
 * hold a secret).  Otherwise returns what getopt_long returns; opterr = 0. */
struct option;
int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts,
               int bad_exit);

/* The long option of longopts (ended by a NULL name) nearest name[0..len):
 * edit distance at most 2, or an abbreviation of it; NULL when none is. */
const char *cli_opt_nearest(const char *name, size_t len, const struct option *longopts);

/* Report TOKEN as an unknown option, naming the nearest of longopts when one
 * is close: for the commands that parse their options by hand. */
void cli_opt_unknown(const char *token, const struct option *longopts);

/* One-line diagnostics on stderr, prefixed "cordon: " (or "cordon SUB: "),
 * with control bytes in the message escaped. */
void cli_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_warnf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_set_prog(const char *sub);

/* The invoking user's login name ("unknown" without one): the default
 * identity of whoever approves, revokes or applies. */
const char *cli_login_name(void);

/* t (seconds since the epoch, UTC) as YYYY-MM-DDTHH:MM:SSZ (cd_time_format,
 * the one formatter); "-" for 0. */
void cli_time_utc(int64_t t, char *out, size_t n);

/* A size as the size options take it: "256M", "1.5G", "12K", "100 bytes". */
void cli_size_human(uint64_t v, char *out, size_t n);

#endif
