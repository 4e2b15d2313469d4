/* session.c — record, save and replay a `cordon shell` session (see
 * session.h).
 *
 * Trust: the recorded bytes come from the sandbox (and from the person);
 * the saved file may have been edited since.  Replay checks the file's hash
 * against the audit record first, parses frames with explicit lengths and
 * escapes every byte it prints.
 */
#include "session.h"

#include "util.h"

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

int cd_session_replay(const char *path, uint64_t cap, const char *want_sha256, struct cd_buf *out,
                      struct cd_err *err)
{
	struct cd_buf f, group;
	char sha[65];
	size_t at = MAGIC_LEN;
	char gdir = 0;
	uint32_t gms = 0;
	int r;

	r = read_file(path, cap, &f);
	if (r < 0) {
		cd_buf_release(&f);
		return cd_err_sys(err, r, "session recording '%s'", path);
	}
	sha256_hex(f.data, f.len, sha);
	if (!want_sha256 || strcmp(sha, want_sha256) != 0) {
		cd_buf_release(&f);
		return cd_err_set(err, -CD_E_CORRUPT,
		                  "session recording '%s' does not match the run's audit record "
		                  "(modified or replaced)",
		                  path);
	}
	if (f.len < MAGIC_LEN || memcmp(f.data, MAGIC, MAGIC_LEN) != 0) {
		cd_buf_release(&f);
		return cd_err_set(err, -CD_E_PARSE, "session recording '%s': not a recording",
		                  path);
	}
	cd_buf_init(&group, (size_t)cap);
	r = 0;
	while (at < f.len && r == 0) {
		const unsigned char *h = (const unsigned char *)f.data + at;
		uint32_t ms, len;
		char dir;

		if (f.len - at < FRAME_HDR) {
			r = cd_err_set(err, -CD_E_PARSE,
			               "session recording: truncated frame at byte %zu", at);
			break;
		}
		dir = (char)h[0];
		ms = get_u32(h + 1);
		len = get_u32(h + 5);
		if (len > f.len - at - FRAME_HDR || (dir != 'i' && dir != 'o' && dir != 'w')) {
			r = cd_err_set(err, -CD_E_PARSE, "session recording: bad frame at byte %zu",
			               at);
			break;
		}
		if (gdir && gdir != dir) {
			r = flush_group(out, gdir, gms, (const unsigned char *)group.data,
			                group.len);
			cd_buf_reset(&group);
			gdir = 0;
		}
		if (r == 0 && dir == 'w') {
			uint16_t rc[2];

			if (len == sizeof rc) {
				memcpy(rc, h + FRAME_HDR, sizeof rc);
				r = cd_buf_printf(out, "+%u.%03u size %ux%u\n", ms / 1000,
				                  ms % 1000, (unsigned)rc[0], (unsigned)rc[1]);
			}
		} else if (r == 0) {
			if (!gdir) {
				gdir = dir;
				gms = ms;
			}
			r = cd_buf_append(&group, h + FRAME_HDR, len);
		}
		at += FRAME_HDR + (size_t)len;
	}
	if (r == 0 && gdir)
		r = flush_group(out, gdir, gms, (const unsigned char *)group.data, group.len);
	if (r < 0 && err && !err->msg[0])
		cd_err_set(err, r, "session recording: out of memory");
	cd_buf_release(&group);
	cd_buf_release(&f);
	return r;
}
