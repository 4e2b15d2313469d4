/* buf.h — the one growable byte buffer, always with a cap.
 *
 * Every append checks the cap and overflow; past the cap the call fails with
 * -CD_E_LIMIT and the buffer keeps what it had.  The data is always
 * NUL-terminated (the NUL is not counted in len) so it can be handed to
 * APIs that want C strings, but parsers use (data, len). */
#ifndef CD_BUF_H
#define CD_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct cd_buf {
	char *data;
	size_t len;
	size_t alloc;
	size_t cap; /* maximum len; never 0 */
};

/* Embedded init/release.  cap must be > 0. */
void cd_buf_init(struct cd_buf *b, size_t cap);
void cd_buf_release(struct cd_buf *b);
/* Release after wiping the contents (for secrets). */
void cd_buf_release_secret(struct cd_buf *b);

int cd_buf_append(struct cd_buf *b, const void *p, size_t n);
int cd_buf_puts(struct cd_buf *b, const char *s);
int cd_buf_putc(struct cd_buf *b, char c);
int cd_buf_printf(struct cd_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cd_buf_reset(struct cd_buf *b);

/* Append `n` bytes of untrusted text for display: printable ASCII and valid
 * UTF-8 as is; control bytes, DEL and invalid UTF-8 as \xNN (and \n \t \r
 * \\ as such).  The result is safe to write to a terminal. */
int cd_buf_escape(struct cd_buf *b, const void *p, size_t n);

/* Length of the valid UTF-8 sequence at p (1..4; 1 for ASCII), or 0 when
 * invalid (truncated, overlong, surrogate, past U+10FFFF).  n > 0. */
size_t cd_utf8_seq(const unsigned char *p, size_t n);

/* Hand the data over to the caller (who frees it); the buffer is left empty. */
char *cd_buf_take(struct cd_buf *b);

#endif
