/* test-session.c — the session recording: frames, the cap, save, and a
 * replay that checks the hash, refuses malformed files and escapes every
 * byte it prints. */
#include "../tap.h"

#include "util/buf.h"
#include "util/err.h"
#include "audit/session.h"

#include <fcntl.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/cordon-test-session.XXXXXX";

static int save(const struct cd_session *s, const char *name, char sha[65])
{
	char path[256];
	struct cd_err err = { 0, "" };
	int fd, r;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	r = cd_session_save(s, fd, sha, &err);
	close(fd);
	return r;
}

static int replay(const char *name, const char *sha, struct cd_buf *out, struct cd_err *err)
{
	char path[256];

	snprintf(path, sizeof path, "%s/%s", dir, name);
	cd_buf_init(out, 1 << 20);
	return cd_session_replay(path, 1 << 20, sha, out, err);
}

static void test_roundtrip(void)
{
	struct cd_session s;
	struct cd_buf out;
	struct cd_err err = { 0, "" };
	char sha[65];
	uint16_t ws[2] = { 24, 80 };

	cd_session_init(&s, 4096);
	cd_session_add(&s, 'w', ws, sizeof ws);
	cd_session_add(&s, 'o', "$ ", 2);
	cd_session_add(&s, 'i', "ls", 2);
	cd_session_add(&s, 'i', "\r", 1);
	cd_session_add(&s, 'o', "a\r\nb\x1b[2J\r\n$ ", 13);
	is_int(s.typed, 3, "typed bytes counted");
	is_int(s.printed, 15, "printed bytes counted");
	is_int(s.dropped, 0, "nothing dropped under the cap");
	is_int(save(&s, "ok.rec", sha), 0, "saved");
	is_int(replay("ok.rec", sha, &out, &err), 0, "replays");
	ok(strstr(out.data, " size 24x80\n") != NULL, "the window size");
	ok(strstr(out.data, " in  ls\\r\n") != NULL, "consecutive input joined");
	ok(strstr(out.data, " out a\\r\\n\n") != NULL, "output split after newlines");
	ok(strstr(out.data, " out b\\x1b[2J\\r\\n\n") != NULL, "control bytes escaped");
	ok(memchr(out.data, 0x1b, out.len) == NULL, "no raw escape in the rendering");
	cd_buf_release(&out);
	cd_session_release(&s);
}

static void test_cap(void)
{
	struct cd_session s;
	char big[100];

	memset(big, 'x', sizeof big);
	cd_session_init(&s, 8 + 9 + 50);
	cd_session_add(&s, 'o', big, sizeof big);
	is_int(s.buf.len, 8 + 9 + 50, "kept up to the cap");
	is_int(s.dropped, 50, "the rest counted as dropped");
	cd_session_add(&s, 'i', "a", 1);
	is_int(s.dropped, 51, "nothing more kept once something was dropped");
	is_int(s.typed, 1, "but still counted");
	cd_session_release(&s);
}

static void test_hostile(void)
{
	static const struct {
		const char *name, *bytes;
		size_t len;
		int want;
	} cases[] = {
		{ "magic.rec", "NOTREC!!", 8, -CD_E_PARSE },
		{ "short.rec", "CDSESS1\no\0\0\0", 12, -CD_E_PARSE },
		{ "long.rec",
		  "CDSESS1\no\0\0\0\0\0\0\0\x10"
		  "abc",
		  20, -CD_E_PARSE },
		{ "dir.rec",
		  "CDSESS1\nz\0\0\0\0\0\0\0\x01"
		  "a",
		  18, -CD_E_PARSE },
		{ "empty.rec", "CDSESS1\n", 8, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		unsigned char d[32];
		char sha[65], path[256];
		struct cd_buf out;
		struct cd_err err = { 0, "" };
		int fd;

		snprintf(path, sizeof path, "%s/%s", dir, cases[i].name);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || write(fd, cases[i].bytes, cases[i].len) != (ssize_t)cases[i].len)
			diag("cannot write %s", path);
		close(fd);
		crypto_hash_sha256(d, (const unsigned char *)cases[i].bytes, cases[i].len);
		sodium_bin2hex(sha, sizeof sha, d, sizeof d);
		is_int(replay(cases[i].name, sha, &out, &err), cases[i].want, "%s", cases[i].name);
		cd_buf_release(&out);
		memset(&err, 0, sizeof err);
		is_int(replay(cases[i].name, "00", &out, &err), -CD_E_CORRUPT,
		       "%s: a hash mismatch is refused first", cases[i].name);
		cd_buf_release(&out);
	}
}

/* The asciicast export: the header's size and timestamp, printed frames as
 * JSON text in ASCII only, a character split across frames whole, invalid
 * UTF-8 as U+FFFD, typed input left out. */
static int starts(const char *s, const char *prefix)
{
	return s && !strncmp(s, prefix, strlen(prefix));
}

static void test_asciicast(void)
{
	static const struct {
		const char *a, *b; /* two printed frames */
		const char *want;  /* the text of the events, concatenated */
	} cases[] = {
		{ "a\"b\\c\r\n", "", "a\\\"b\\\\c\\r\\n" },
		{ "\x1b[1m\x07\x7f", "", "\\u001b[1m\\u0007\\u007f" },
		{ "caf\xc3\xa9", "", "caf\\u00e9" },
		{ "\xe2", "\x82\xac!", "\\u20ac!" },          /* split across frames */
		{ "\xf0\x9f", "\x98\x80", "\\ud83d\\ude00" }, /* 4 bytes, split */
		{ "\xc2\x85", "", "\\u0085" },                /* C1 control */
		{ "x\xff\xfey", "", "x\\ufffd\\ufffdy" },
		{ "\xc0\xaf", "", "\\ufffd\\ufffd" },            /* overlong */
		{ "\xed\xa0\x80", "", "\\ufffd\\ufffd\\ufffd" }, /* surrogate */
		{ "end\xe2\x82", "", "end\\ufffd\\ufffd" },      /* cut at the end */
	};
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct cd_session s;
		struct cd_buf out, text;
		struct cd_err err = { 0, "" };
		char sha[65], name[32], path[256];
		uint16_t ws[2] = { 30, 100 };
		const char *p, *q;
		int r;

		snprintf(name, sizeof name, "cast%zu.rec", i);
		snprintf(path, sizeof path, "%s/%s", dir, name);
		cd_session_init(&s, 4096);
		if (i == 0)
			cd_session_add(&s, 'w', ws, sizeof ws);
		cd_session_add(&s, 'i', "typed-secret", 12);
		cd_session_add(&s, 'o', cases[i].a, strlen(cases[i].a));
		cd_session_add(&s, 'o', cases[i].b, strlen(cases[i].b));
		save(&s, name, sha);
		cd_session_release(&s);
		cd_buf_init(&out, 1 << 16);
		r = cd_session_asciicast(path, 1 << 20, sha, i == 0 ? 1700000000 : 0, &out, &err);
		is_int(r, 0, "asciicast %zu: exported", i);
		/* The strings of the events, joined. */
		cd_buf_init(&text, 1 << 16);
		for (p = out.data ? strstr(out.data, "\n[") : NULL; p; p = strstr(q, "\n[")) {
			p = strstr(p, ", \"o\", \"");
			if (!p)
				break;
			p += 8;
			q = strstr(p, "\"]\n");
			if (!q)
				break;
			cd_buf_append(&text, p, (size_t)(q - p));
			q++;
		}
		is_str(text.data ? text.data : "", cases[i].want, "asciicast %zu: the text", i);
		if (i == 0)
			ok(starts(out.data, "{\"version\": 2, \"width\": 100, \"height\": 30, "
			                    "\"timestamp\": 1700000000"),
			   "asciicast: the header's size is the pty's, the timestamp the start");
		if (i == 1)
			ok(starts(out.data, "{\"version\": 2, \"width\": 80, \"height\": 24, "
			                    "\"env\""),
			   "asciicast: 80x24 without a size frame, no timestamp without a start");
		ok(out.data && !strstr(out.data, "typed-secret"), "asciicast %zu: nothing typed",
		   i);
		for (p = out.data; p && *p && ((*p >= 0x20 && *p < 0x7f) || *p == '\n'); p++)
			;
		ok(p && !*p, "asciicast %zu: printable ASCII only", i);
		cd_buf_release(&text);
		cd_buf_release(&out);
		unlink(path);
	}
}

/* A later window size is an "r" event (COLSxROWS); the first is the
 * header's and no event. */
static void test_asciicast_resize(void)
{
	struct cd_session s;
	struct cd_buf out;
	struct cd_err err = { 0, "" };
	char sha[65], path[256];
	uint16_t a[2] = { 30, 100 }, b[2] = { 40, 120 };

	snprintf(path, sizeof path, "%s/resize.rec", dir);
	cd_session_init(&s, 4096);
	cd_session_add(&s, 'w', a, sizeof a);
	cd_session_add(&s, 'o', "x", 1);
	cd_session_add(&s, 'w', b, sizeof b);
	save(&s, "resize.rec", sha);
	cd_session_release(&s);
	cd_buf_init(&out, 1 << 16);
	is_int(cd_session_asciicast(path, 1 << 20, sha, 0, &out, &err), 0, "resize: exported");
	ok(out.data && strstr(out.data, "\"width\": 100, \"height\": 30"),
	   "resize: the first size is the header's");
	ok(out.data && strstr(out.data, ", \"r\", \"120x40\"]\n"),
	   "resize: a later one an r event");
	ok(out.data && !strstr(out.data, "\"100x30\""), "resize: the first is no event");
	cd_buf_release(&out);
	unlink(path);
}

int main(void)
{
	char cmd[300];

	tap_start(30 + 10 * 4 + 2 + 4);
	if (!mkdtemp(dir) || sodium_init() < 0) {
		tap_skip("no temporary directory");
		return tap_done();
	}
	test_roundtrip();
	test_cap();
	test_hostile();
	test_asciicast();
	test_asciicast_resize();
	snprintf(cmd, sizeof cmd, "%s/ok.rec", dir);
	unlink(cmd);
	{
		static const char *const names[] = { "magic.rec", "short.rec", "long.rec",
			                             "dir.rec",   "empty.rec", NULL };
		size_t i;
		for (i = 0; names[i]; i++) {
			snprintf(cmd, sizeof cmd, "%s/%s", dir, names[i]);
			unlink(cmd);
		}
	}
	rmdir(dir);
	return tap_done();
}
