/* proposal.h — proposal mode: a run's file changes, computed from its
 * overlay upper layer, stored, reviewed, then applied (or committed on a
 * branch) by a person.
 *
 * `cordon run --propose` gives the sandbox the working directory through
 * overlayfs: the real tree is the read-only lower layer, every write lands
 * in an upper directory on a tmpfs the sandbox made in its own user
 * namespace, capped in bytes and inodes (writes past the caps fail with
 * ENOSPC inside; the host's disk is not written during the run).  After
 * the run, cd_proposal_scan() reads the upper layer (whiteouts, opaque
 * directories) into a change set, with the SHA-256 of each file's base
 * (what the run saw) and of its new content, and copies the new content
 * into a store under cordon's state directory (which no sandbox sees),
 * bounded in bytes and files; the content is re-hashed when applied.
 * Directories are changes too: one created (mkdir, with its mode) or
 * removed (rmdir, once what was in it is gone).
 *
 * Trust boundary: everything in the upper layer was written by the
 * sandboxed command and is hostile: names (any byte but '/' and NUL),
 * modes, file types, sizes.  Symlinks, special files, setuid/setgid bits
 * and overlay metadata other than whiteouts and opaque marks are refused
 * entries that are never applied.  Paths under cd_protected_workspace_paths
 * (files that would run later on the host) are flagged: applied only when
 * the approver names each one.  Applying re-checks every base in the real
 * tree and swaps each file in atomically (temp name, fsync, rename with
 * RENAME_EXCHANGE, then the old content is checked once more), so a change
 * made since the run is never overwritten.
 */
#ifndef CD_PROPOSAL_H
#define CD_PROPOSAL_H

#include "sandbox/gitcfg.h"
#include "util/err.h"
#include "store/store-rows.h"

#include <stddef.h>
#include <stdint.h>

struct cd_state;
struct cd_audit;
struct json_t;

/* enum cd_prop_op, struct cd_prop_file, struct cd_proposal, CD_PROP_MAX_FILES,
 * cd_prop_op_name and the frees: store-rows.h. */

/* Caps: a change set, the content a proposal stores, the diffs. */
#define CD_PROP_MAX_DEPTH  64
#define CD_PROP_DIFF_INPUT (1024 * 1024)      /* files larger than this get no diff */
#define CD_PROP_DIFF_MAX   (1024 * 1024)      /* a diff larger than this is dropped */
#define CD_PROP_DIFF_TOTAL (64 * 1024 * 1024) /* diffs of one proposal, together */

/* What a scan reads and where it stores the new content. */
struct cd_prop_scan_in {
	const char *tree;   /* the real tree (the overlay's lower layer), canonical */
	int upper_fd;       /* the upper layer, a directory (borrowed); nothing may
			   * write to it any more */
	const char *store;  /* host directory for the new content: created (0700),
			    * must not exist; becomes p->upper */
	uint64_t max_bytes; /* new content the store may hold (apparent sizes, so a
			     * sparse file counts in full); 0: CD_PROPOSE_SIZE_MAX */
	const char *run_id, *agent, *task; /* agent, task: NULL for none */
	int64_t now;
	/* The caller's git configuration besides the repository's ($HOME,
	 * $XDG_CONFIG_HOME, $GIT_CONFIG_GLOBAL/SYSTEM): what it names in the
	 * tree is flagged when changed (gitcfg.h). */
	struct cd_git_env git;
	const char *path; /* the caller's $PATH: changes in its directories flagged */
};

/* Scan the upper layer against the tree into a new proposal (id, run_id,
 * created filled; agent and task copied) and copy every added or
 * modified file's content into the store, checking its hash on the way.
 * Computes hashes and, for text files of modest size, a unified diff (at
 * most CD_PROP_DIFF_TOTAL bytes of diffs in all; past it files get none).
 * A file that would take the store past max_bytes is refused (an entry
 * that is never applied, its content not stored).  Errors: -errno;
 * -CD_E_LIMIT past CD_PROP_MAX_FILES entries or CD_PROP_MAX_DEPTH, with a
 * message saying so; -CD_E_CORRUPT for an overlay feature cordon does not
 * understand (refused as a whole).  On error the store is removed. */
int cd_proposal_scan(const struct cd_prop_scan_in *in, struct cd_proposal **ret,
                     struct cd_err *err);

/* Counts by op (index CD_PROP_*) and flagged entries. */
void cd_proposal_counts(const struct cd_proposal *p, size_t ret_counts[CD_PROP_NOPS],
                        size_t *ret_flagged);

/* The proposing host's key (CD_PROPOSAL_KEY_LEN bytes, proposal.key in
 * its local state directory, 0600): the row of a proposal carries an HMAC
 * under it over what apply acts on (id, run, agent, task, tree, upper,
 * created, and each file's path, op, hashes and modes).  Any writer of a
 * shared store can rewrite the row; only this host's user can make a MAC
 * that verifies, so a row repointed at another tree or layer, or whose
 * files were changed, is refused where it would be applied (which is the
 * proposing host anyway: the new content is on its disk). */
#define CD_PROPOSAL_KEY_LEN 32

/* Store a new proposal (state migrations 4 and 5), in one transaction,
 * with its MAC under key. */
int cd_proposal_save(struct cd_state *s, const unsigned char *key, const struct cd_proposal *p,
                     struct cd_err *err);

/* Load one by id (diffs included).  -ENOENT when there is none;
 * -CD_E_CORRUPT when its MAC under key does not verify (key NULL: no
 * key, refused too). */
int cd_proposal_load(struct cd_state *s, const unsigned char *key, const char *id,
                     struct cd_proposal **ret, struct cd_err *err);

/* Every proposal, newest first, without files (nfiles counted).  *ret is
 * an array of *ret_n proposals, freed with cd_proposal_list_free. */
int cd_proposal_list(struct cd_state *s, struct cd_proposal **ret, size_t *ret_n,
                     struct cd_err *err);

/* Record the end of a proposal: status, who, when, and for a branch its
 * name and commit; marks applied files.  Only a pending (or partial)
 * proposal changes: -EALREADY otherwise. */
int cd_proposal_finish(struct cd_state *s, const struct cd_proposal *p, const char *status,
                       const char *by, int64_t now, struct cd_err *err);

/* Choose the files to apply: `paths` (NULL: all) name files of the
 * proposal exactly (-ENOENT naming the first that is not one); flagged
 * files are chosen only when named in `accept`; refused files never.  A
 * file skipped for a reason gets it in problem. */
int cd_proposal_select(struct cd_proposal *p, const char *const *paths, size_t npaths,
                       const char *const *accept, size_t naccept, struct cd_err *err);

/* Check every selected file's base in the real tree and its new content
 * in the upper layer.  0 when all match; -ESTALE when any does not, with
 * each such file's problem set (err names the count). */
int cd_proposal_check(struct cd_proposal *p, struct cd_err *err);

/* Check, then apply the selected files to the real tree, each atomically:
 * new directories first (mkdir with their mode, parents first; one that
 * exists by then is a conflict), then the files, then removed directories
 * (deepest first; one that is not empty by then is left in place).  0
 * when every one was applied; otherwise the entries applied so far keep
 * `applied`, the failing one has its problem, and the error is returned
 * (-ESTALE for a conflict with a change made since the run). */
int cd_proposal_apply(struct cd_proposal *p, struct cd_err *err);

/* Check, then commit the selected files on a new branch `branch` of the
 * git repository holding the tree, on top of its HEAD, with git
 * fast-import (one process, paths quoted, a clean environment).  The
 * message names the run and proposal; `by` is recorded in it.  The
 * commit's id goes to ret_commit.  The working tree is not touched.  git
 * holds no directories: a new directory with no selected file below it
 * is left out (not applied, its problem says so); a removed directory
 * goes with its files. */
int cd_proposal_commit_branch(struct cd_proposal *p, const char *branch, const char *by,
                              char ret_commit[65], struct cd_err *err);

/* Remove a directory tree (a proposal's layer once it has ended), never
 * following a symlink; overlayfs's mode-000 work directories included.
 * 0 or -errno. */
int cd_prop_remove_tree(const char *dir);

/* ---- decisions (proposal-record.c) --------------------------------- */

/* The proposal as a JSON object (head, files, counts); files_only_selected
 * lists only the files chosen or skipped for a reason.  NULL: no memory. */
struct json_t *cd_proposal_json(const struct cd_proposal *p, int files_only_selected);
/* Its head only (id, run, status, agent, task, tree, times, layer). */
struct json_t *cd_proposal_head_json(const struct cd_proposal *p);

/* Append the audit record `kind` ("proposal.created", ".applied",
 * ".committed", ".refused", ".rejected") of p by `by` (NULL: none). */
int cd_proposal_record(struct cd_audit *a, const struct cd_proposal *p, const char *kind,
                       const char *by, const char *reason, struct cd_err *err);

/* May `by` decide p now: never the agent that made it (-EPERM), only
 * while it is pending or partial (-EALREADY). */
int cd_proposal_may_decide(const struct cd_proposal *p, const char *by, struct cd_err *err);

/* Apply the selected files (or commit them on `branch`, its commit into
 * commit), then record it and finish the proposal as *ret_status
 * ("applied", "partial", "committed"); the layer goes when everything is
 * applied.  A failed apply is recorded (proposal.refused; files applied
 * before it finish the proposal as partial) and its error returned.
 * 0, 1 when only the layer could not be removed, or negative. */
int cd_proposal_apply_by(struct cd_state *s, struct cd_audit *a, struct cd_proposal *p,
                         const char *by, const char *branch, char commit[65],
                         const char **ret_status, struct cd_err *err);

/* Record the rejection, finish the proposal, remove its layer.  0, 1 when
 * only the layer could not be removed, or negative. */
int cd_proposal_reject_by(struct cd_state *s, struct cd_audit *a, struct cd_proposal *p,
                          const char *by, struct cd_err *err);

/* Remove the layer of a proposal that has ended (the parent of upper). */
int cd_proposal_remove_layer(const struct cd_proposal *p);

#endif
