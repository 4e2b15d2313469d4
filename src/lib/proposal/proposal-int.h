/* proposal-int.h — what the proposal modules (proposal.c scan and select,
 * proposal-apply.c, proposal-store.c, proposal-git.c) share.  Not part of
 * the library's interface. */
#ifndef CD_PROPOSAL_INT_H
#define CD_PROPOSAL_INT_H

#include "util/buf.h"
#include "proposal.h"

#include <stdint.h>
#include <sys/stat.h>

/* SHA-256 (hex) of an open file read to its end; size and "has a NUL in
 * the first 8 KiB" on the side (both may be NULL). */
int cd_prop_hash_fd(int fd, char out[65], uint64_t *ret_size, int *ret_binary);

/* Open dirfd/name for reading only when it is a regular file (never a
 * symlink, FIFO or device).  fd or -errno (-EINVAL: not a regular file). */
int cd_prop_open_regular(int dirfd, const char *name, struct stat *ret_st);

/* Is this path one that would run later on the host (cd_protected_*)? */
int cd_prop_flagged(const char *path, size_t len);

/* A stored path is well formed: relative, no empty, "." or ".." part, no
 * NUL.  1 or 0. */
int cd_prop_path_ok(const char *path, size_t len);

/* Open the directory holding `path` below rootfd without leaving it or
 * following a symlink (creating missing directories 0755 when `create`);
 * the last component goes to *ret_name (points into path).  fd or -errno. */
int cd_prop_open_parent(int rootfd, const char *path, int create, const char **ret_name);

/* Check one selected file's base and new content; sets f->problem.  1 when
 * it is fine, 0 when not, -errno on an error. */
int cd_prop_check_one(int treefd, int upfd, struct cd_prop_file *f);

/* Append the unified diff (3 lines of context, as diff -u) of text a
 * against text b, headed by the two labels, to out.  0, -ENOMEM, or
 * -CD_E_LIMIT when out's cap is reached. */
struct cd_buf;
int cd_prop_diff(const char *a, size_t alen, const char *b, size_t blen, const char *label_a,
                 const char *label_b, struct cd_buf *out);

void cd_prop_sort(struct cd_proposal *p);

/* Flag the files that change a control path of a git directory known by
 * its contents, not its name (proposal-gitdir.c); upfd is the upper
 * layer, lofd the tree (or -1). */
void cd_prop_flag_gitdirs(struct cd_proposal *p, int upfd, int lofd);
void cd_prop_flag_git_named(struct cd_proposal *p, const struct cd_git_env *env);
void cd_prop_flag_path_dirs(struct cd_proposal *p, const char *path, const char *home);
void cd_prop_flag_run_through(struct cd_proposal *p, int upfd, int lofd);

#endif
