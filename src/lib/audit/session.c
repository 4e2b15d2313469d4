/* session.c — record, save and replay a `cordon shell` session (see
 * session.h).
 *
 * Trust: the recorded bytes come from the sandbox (and from the person);
 * the saved file may have been edited since.  Replay checks the file's hash
 * against the audit record first, parses frames with explicit lengths and
 * escapes every byte it prints.
 */
#include "session.h"

#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAGIC     "CDSESS1\n"
#define MAGIC_LEN 8
#define FRAME_HDR 9

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void put_u32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static uint32_t get_u32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

void cd_session_init(struct cd_session *s, uint64_t cap)
{
	memset(s, 0, sizeof *s);
	cd_buf_init(&s->buf, (size_t)cap);
	s->t0_ms = now_ms();
	if (cd_buf_append(&s->buf, MAGIC, MAGIC_LEN) < 0)
		s->dropped = 1;
}

void cd_session_release(struct cd_session *s)
{
	cd_buf_release(&s->buf);
}

void cd_session_add(void *ctx, char dir, const void *p, size_t n)
{
	struct cd_session *s = ctx;
	unsigned char hdr[FRAME_HDR];
	size_t room, keep;

	if (dir == 'i')
		s->typed += n;
	else if (dir == 'o')
		s->printed += n;
	if (n == 0)
		return;
	/* Once something was dropped nothing more is kept: a recording with
	 * holes in the middle would read as something that did not happen. */
	room = s->buf.cap > s->buf.len ? s->buf.cap - s->buf.len : 0;
	if (s->dropped || room <= FRAME_HDR || (dir == 'w' && room < FRAME_HDR + n)) {
		s->dropped += n;
		return;
	}
	keep = n < room - FRAME_HDR ? n : room - FRAME_HDR;
	if (keep > UINT32_MAX)
		keep = UINT32_MAX;
	hdr[0] = (unsigned char)dir;
	put_u32(hdr + 1, (uint32_t)(now_ms() - s->t0_ms));
	put_u32(hdr + 5, (uint32_t)keep);
	if (cd_buf_append(&s->buf, hdr, sizeof hdr) < 0 || cd_buf_append(&s->buf, p, keep) < 0) {
		s->dropped += n;
		return;
	}
	s->dropped += n - keep;
}

static void sha256_hex(const void *p, size_t n, char out[65])
{
	unsigned char d[crypto_hash_sha256_BYTES];

	crypto_hash_sha256(d, p, n);
	sodium_bin2hex(out, 65, d, sizeof d);
}

int cd_session_save(const struct cd_session *s, int fd, char ret_sha256[65], struct cd_err *err)
{
	int r = cd_write_all(fd, s->buf.data, s->buf.len);

	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (r < 0)
		return cd_err_sys(err, r, "write the session recording");
	sha256_hex(s->buf.data, s->buf.len, ret_sha256);
	return 0;
}

static int read_file(const char *path, uint64_t cap, struct cd_buf *b)
{
	char chunk[65536];
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	cd_buf_init(b, (size_t)cap);
	while ((n = read(fd, chunk, sizeof chunk)) > 0) {
		if (cd_buf_append(b, chunk, (size_t)n) < 0) {
			close(fd);
			return -CD_E_LIMIT;
		}
	}
	close(fd);
	return n < 0 ? -EIO : 0;
}

/* One group of frames of one direction: escaped, split into lines. */
static int flush_group(struct cd_buf *out, char dir, uint32_t ms, const unsigned char *p, size_t n)
{
	const char *name = dir == 'i' ? "in " : "out";
	char brk = dir == 'i' ? '\r' : '\n';
	size_t i = 0;
	int r = 0;

	while (i < n && r == 0) {
		size_t j = i;

		while (j < n && p[j] != brk)
			j++;
		if (j < n)
			j++; /* the break ends its line */
		r = cd_buf_printf(out, "+%u.%03u %s ", ms / 1000, ms % 1000, name);
		if (r == 0)
			r = cd_buf_escape(out, p + i, j - i);
		if (r == 0)
			r = cd_buf_putc(out, '\n');
		i = j;
	}
	return r;
}

/* One frame of a recording, a view into the file's bytes. */
struct frame {
	char dir; /* 'i', 'o' or 'w' */
	uint32_t ms;
	const unsigned char *p;
	uint32_t len;
};

/* The frame at *at of f: 1 with *at past it, 0 at the end, -CD_E_PARSE
 * when it is truncated or malformed. */
static int next_frame(const struct cd_buf *f, size_t *at, struct frame *fr, struct cd_err *err)
{
	const unsigned char *h = (const unsigned char *)f->data + *at;

	if (*at >= f->len)
		return 0;
	if (f->len - *at < FRAME_HDR)
		return cd_err_set(err, -CD_E_PARSE,
		                  "session recording: truncated frame at byte %zu", *at);
	fr->dir = (char)h[0];
	fr->ms = get_u32(h + 1);
	fr->len = get_u32(h + 5);
	fr->p = h + FRAME_HDR;
	if (fr->len > f->len - *at - FRAME_HDR ||
	    (fr->dir != 'i' && fr->dir != 'o' && fr->dir != 'w'))
		return cd_err_set(err, -CD_E_PARSE, "session recording: bad frame at byte %zu",
		                  *at);
	*at += FRAME_HDR + (size_t)fr->len;
	return 1;
}

/* A 'w' frame's rows and columns (u16 each, in the writer's order: the
 * recording is read back on the host that wrote it); 0 when malformed. */
static int winsize(const struct frame *fr, unsigned *rows, unsigned *cols)
{
	uint16_t rc[2];

	if (fr->len != sizeof rc)
		return 0;
	memcpy(rc, fr->p, sizeof rc);
	*rows = rc[0];
	*cols = rc[1];
	return 1;
}

/* Read the recording at path (at most cap bytes) into f and check it
 * against the SHA-256 of the run's audit record, then its magic.  On
 * failure f is released. */
static int load(const char *path, uint64_t cap, const char *want_sha256, struct cd_buf *f,
                struct cd_err *err)
{
	char sha[65];
	int r;

	r = read_file(path, cap, f);
	if (r < 0) {
		cd_buf_release(f);
		return cd_err_sys(err, r, "session recording '%s'", path);
	}
	sha256_hex(f->data, f->len, sha);
	if (!want_sha256 || strcmp(sha, want_sha256) != 0) {
		cd_buf_release(f);
		return cd_err_set(err, -CD_E_CORRUPT,
		                  "session recording '%s' does not match the run's audit record "
		                  "(modified or replaced)",
		                  path);
	}
	if (f->len < MAGIC_LEN || memcmp(f->data, MAGIC, MAGIC_LEN) != 0) {
		cd_buf_release(f);
		return cd_err_set(err, -CD_E_PARSE, "session recording '%s': not a recording",
		                  path);
	}
	return 0;
}

int cd_session_replay(const char *path, uint64_t cap, const char *want_sha256, struct cd_buf *out,
                      struct cd_err *err)
{
	struct cd_buf f, group;
	size_t at = MAGIC_LEN;
	struct frame fr = { 0, 0, NULL, 0 };
	char gdir = 0;
	uint32_t gms = 0;
	int r;

	r = load(path, cap, want_sha256, &f, err);
	if (r < 0)
		return r;
	cd_buf_init(&group, (size_t)cap);
	r = 0;
	while (r == 0 && (r = next_frame(&f, &at, &fr, err)) > 0) {
		r = 0;
		if (gdir && gdir != fr.dir) {
			r = flush_group(out, gdir, gms, (const unsigned char *)group.data,
			                group.len);
			cd_buf_reset(&group);
			gdir = 0;
		}
		if (r == 0 && fr.dir == 'w') {
			unsigned rows, cols;

			if (winsize(&fr, &rows, &cols))
				r = cd_buf_printf(out, "+%u.%03u size %ux%u\n", fr.ms / 1000,
				                  fr.ms % 1000, rows, cols);
		} else if (r == 0) {
			if (!gdir) {
				gdir = fr.dir;
				gms = fr.ms;
			}
			r = cd_buf_append(&group, fr.p, fr.len);
		}
	}
	if (r == 0 && gdir)
		r = flush_group(out, gdir, gms, (const unsigned char *)group.data, group.len);
	if (r < 0 && err && !err->msg[0])
		cd_err_set(err, r, "session recording: out of memory");
	cd_buf_release(&group);
	cd_buf_release(&f);
	return r;
}

/* ---- asciicast v2 --------------------------------------------------- */

/* The UTF-8 sequence at p[0..n): its length (1-4) with its code point in
 * *cp; 0 when p holds only the valid start of one (more may follow in the
 * next frame); -1 when p[0] starts no valid sequence.  Validity is
 * cd_utf8_seq's (overlong forms, surrogates, past U+10FFFF refused). */
static int utf8_seq(const unsigned char *p, size_t n, uint32_t *cp)
{
	unsigned char b = p[0], t[4];
	size_t len = cd_utf8_seq(p, n), want, i;

	if (len == 1) {
		*cp = b;
		return 1;
	}
	if (len > 1) {
		*cp = len == 2 ? (b & 0x1fu) : len == 3 ? (b & 0x0fu) : (b & 0x07u);
		for (i = 1; i < len; i++)
			*cp = *cp << 6 | (p[i] & 0x3fu);
		return (int)len;
	}
	/* Too short to be whole: a valid start when completing it with the
	 * smallest continuation bytes its lead byte allows makes it valid. */
	want = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
	if (n >= want || b < 0xc2 || b > 0xf4)
		return -1;
	memcpy(t, p, n);
	for (i = n; i < want; i++)
		t[i] = i == 1 && b == 0xe0 ? 0xa0 : i == 1 && b == 0xf0 ? 0x90 : 0x80;
	return cd_utf8_seq(t, want) ? 0 : -1;
}

/* p[0..n) as the inside of a JSON string, in ASCII only: control
 * characters, DEL and everything past ASCII as \u escapes (so the file is
 * harmless on a terminal too), each invalid byte as U+FFFD.  Unless final,
 * an incomplete sequence at the end is left: *ret_used says how much was
 * taken. */
static int json_text(struct cd_buf *out, const unsigned char *p, size_t n, int final,
                     size_t *ret_used)
{
	size_t i = 0;
	int r = 0;

	while (i < n && r == 0) {
		uint32_t cp;
		int k = utf8_seq(p + i, n - i, &cp);

		if (k == 0 && !final)
			break;
		if (k <= 0) {
			cp = 0xfffd;
			k = 1;
		}
		i += (size_t)k;
		if (cp == '"' || cp == '\\')
			r = cd_buf_printf(out, "\\%c", (char)cp);
		else if (cp == '\n')
			r = cd_buf_puts(out, "\\n");
		else if (cp == '\r')
			r = cd_buf_puts(out, "\\r");
		else if (cp == '\t')
			r = cd_buf_puts(out, "\\t");
		else if (cp >= 0x20 && cp < 0x7f)
			r = cd_buf_putc(out, (char)cp);
		else if (cp < 0x10000)
			r = cd_buf_printf(out, "\\u%04x", (unsigned)cp);
		else
			r = cd_buf_printf(out, "\\u%04x\\u%04x", 0xd800 + ((cp - 0x10000) >> 10),
			                  0xdc00 + ((cp - 0x10000) & 0x3ff));
	}
	*ret_used = i;
	return r;
}

/* One "o" event from what pending holds, keeping an incomplete UTF-8
 * sequence at its end for the next one (unless final). */
static int cast_output(struct cd_buf *out, struct cd_buf *pending, uint32_t ms, int final)
{
	size_t used = 0, mark = out->len;
	int r;

	if (!pending->len)
		return 0;
	r = cd_buf_printf(out, "[%u.%03u, \"o\", \"", ms / 1000, ms % 1000);
	if (r == 0)
		r = json_text(out, (const unsigned char *)pending->data, pending->len, final,
		              &used);
	if (r == 0)
		r = cd_buf_puts(out, "\"]\n");
	if (r == 0 && used == 0) {
		out->len = mark; /* nothing complete yet: no empty event */
		out->data[mark] = '\0';
	}
	if (r == 0 && used) {
		memmove(pending->data, pending->data + used, pending->len - used);
		pending->len -= used;
		pending->data[pending->len] = '\0';
	}
	return r;
}

int cd_session_asciicast(const char *path, uint64_t cap, const char *want_sha256, int64_t start,
                         struct cd_buf *out, struct cd_err *err)
{
	struct cd_buf f, pending;
	struct frame fr = { 0, 0, NULL, 0 };
	size_t at = MAGIC_LEN;
	unsigned rows = 24, cols = 80, wr, wc;
	uint32_t last = 0, ms;
	int r, sized = 0;

	r = load(path, cap, want_sha256, &f, err);
	if (r < 0)
		return r;
	/* The header's size is the first one the pty was given. */
	while ((r = next_frame(&f, &at, &fr, err)) > 0)
		if (fr.dir == 'w' && winsize(&fr, &wr, &wc) && wr && wc) {
			rows = wr;
			cols = wc;
			break;
		}
	if (r < 0) {
		cd_buf_release(&f);
		return r;
	}
	r = cd_buf_printf(out, "{\"version\": 2, \"width\": %u, \"height\": %u", cols, rows);
	if (r == 0 && start > 0)
		r = cd_buf_printf(out, ", \"timestamp\": %lld", (long long)start);
	if (r == 0)
		r = cd_buf_puts(out, ", \"env\": {\"TERM\": \"xterm-256color\"}}\n");
	cd_buf_init(&pending, (size_t)cap);
	at = MAGIC_LEN;
	while (r == 0 && (r = next_frame(&f, &at, &fr, err)) > 0) {
		/* Times never go back, whatever the file says. */
		ms = fr.ms > last ? fr.ms : last;
		last = ms;
		r = 0;
		if (fr.dir == 'o') {
			r = cd_buf_append(&pending, fr.p, fr.len);
			if (r == 0)
				r = cast_output(out, &pending, ms, 0);
		} else if (fr.dir == 'w' && winsize(&fr, &wr, &wc) && wr && wc) {
			/* Typed input ('i') is left out: a password typed without
			 * echo would travel with a file made to be shared. */
			if (sized || wr != rows || wc != cols)
				r = cd_buf_printf(out, "[%u.%03u, \"r\", \"%ux%u\"]\n", ms / 1000,
				                  ms % 1000, wc, wr);
			sized = 1;
		}
	}
	if (r == 0)
		r = cast_output(out, &pending, last, 1);
	if (r < 0 && err && !err->msg[0])
		cd_err_set(err, r, "session recording: the export is past its cap");
	cd_buf_release(&pending);
	cd_buf_release(&f);
	return r;
}
