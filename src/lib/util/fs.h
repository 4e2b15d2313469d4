/* fs.h — small file-system helpers shared by the stores (audit log, state
 * database). */
#ifndef CD_FS_H
#define CD_FS_H

#include "err.h"

/* mkdir -p for the parent directory of `path`; directories it creates are
 * 0700 (existing ones are left as they are).  0, or -errno with "cannot
 * create directory '...'" in err. */
int cd_mkdir_parents(const char *path, struct cd_err *err);

/* Create `path` if missing as a 0600 regular file, never following a
 * symlink; an existing file is left alone and never opened (closing a
 * descriptor would drop this process's POSIX locks on it, SQLite's among
 * them).  0 or -errno with "WHAT '...'". */
int cd_create_private(const char *path, const char *what, struct cd_err *err);

#endif
