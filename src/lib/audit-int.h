/* audit-int.h — shared between the audit modules only (not a public API):
 * the column list every reader selects, and the row decoder. */
#ifndef CD_AUDIT_INT_H
#define CD_AUDIT_INT_H

#include "audit.h"

#include <sqlite3.h>

/* The columns, in the order cd_audit_row_read_ expects them. */
#define CD_AUDIT_COLUMNS                                                                           \
	"seq, time_ns, exit_code, duration_ms, host, kind, run_id, agent, task, tool, action, "    \
	"target, decision, grant_ids, reason, argv_sha256, code_sha256, stdin_sha256, "            \
	"stdout_sha256, stderr_sha256, details, prev_hash, hash"

/* Fill `e` from the current row of `st` (selected with CD_AUDIT_COLUMNS
 * starting at column 0).  Never fails: a malformed row reads as a record
 * whose hash will not match (hashes_ok = 0 when a hash column is not 32
 * bytes).  Views are valid until the next step. */
void cd_audit_row_read_(sqlite3_stmt *st, struct cd_audit_entry *e);

sqlite3 *cd_audit_db_(struct cd_audit *a);
const unsigned char *cd_audit_genesis_(const struct cd_audit *a);

#endif
