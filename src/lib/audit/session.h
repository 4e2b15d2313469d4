/* session.h — the recording of a `cordon shell` session.
 *
 * What the person typed and what the pty printed, in order, with times and
 * window-size changes, kept in memory up to a cap while the session runs
 * (the sandbox's record callback), then saved as one file next to the
 * audit log whose SHA-256 goes into the run's result record.  Replay reads
 * the file back, checks it against that hash, and renders every frame as
 * escaped text: the bytes came from the sandbox and are hostile.
 *
 * File format: "CDSESS1\n", then frames: one byte direction ('i' typed,
 * 'o' printed, 'w' window size), u32 big-endian milliseconds since the
 * start, u32 big-endian length, the bytes ('w': u16 rows, u16 cols, host
 * order of the writer — only displayed).
 */
#ifndef CD_SESSION_H
#define CD_SESSION_H

#include "util/buf.h"
#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

struct cd_session {
	struct cd_buf buf; /* the file's bytes so far */
	uint64_t t0_ms;
	uint64_t typed, printed; /* bytes seen, kept or not */
	uint64_t dropped;        /* bytes not kept: past the cap */
};

/* Start a recording holding at most `cap` bytes of file. */
void cd_session_init(struct cd_session *s, uint64_t cap);
void cd_session_release(struct cd_session *s);

/* The sandbox's record callback (ctx is the struct cd_session).  Never
 * fails: past the cap the bytes are counted in `dropped`. */
void cd_session_add(void *ctx, char dir, const void *p, size_t n);

/* Write the recording to `fd` (a new, empty file the caller opened before
 * the session, so that a recording that cannot be kept refuses the session
 * instead of losing it) and fsync it; its SHA-256 in hex goes to
 * ret_sha256.  The caller still owns fd.  -errno with a message. */
int cd_session_save(const struct cd_session *s, int fd, char ret_sha256[65], struct cd_err *err);

/* Read a recording back (at most `cap` bytes), check it against the
 * SHA-256 the audit record holds, and append its rendering to `out`: one
 * line per frame group, "+SECONDS DIR TEXT" with TEXT escaped (DIR "in",
 * "out" or "size").  Consecutive frames of one direction are joined and
 * split after each newline (output) or carriage return (input).
 * -CD_E_CORRUPT when the file does not match the hash, -CD_E_PARSE when it
 * is malformed, -errno when it cannot be read; err says which. */
int cd_session_replay(const char *path, uint64_t cap, const char *want_sha256, struct cd_buf *out,
                      struct cd_err *err);

/* The same recording, read and checked the same way, as an asciicast v2
 * file (asciinema's format) appended to `out`: a header line (version 2,
 * the pty's first size, `start` as its timestamp when > 0) and one
 * [seconds, "o", text] line per printed frame, times never decreasing;
 * later size changes as "r" events.  Text is valid JSON in ASCII only:
 * control bytes and non-ASCII characters as \u escapes, invalid UTF-8 as
 * U+FFFD (a character split across frames is kept whole).  What was
 * typed is not exported.  Errors as for cd_session_replay. */
int cd_session_asciicast(const char *path, uint64_t cap, const char *want_sha256, int64_t start,
                         struct cd_buf *out, struct cd_err *err);

#endif
