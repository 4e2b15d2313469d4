/* mask.c — masking actions on text and JSON, keyed pseudonyms, the
 * per-deployment key, and field scoping of JSON results.
 *
 * Trust boundary: the input is hostile tool output; the key file lives in
 * the operator's config directory and is refused unless it is private.
 * Every error is returned so the caller can withhold the output. */
#include "mask.h"

#include "util/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct cd_masker {
	struct cd_scanner *scan;
	unsigned char key[CD_MASK_KEY_BYTES];
	unsigned char commit_key[CD_MASK_KEY_BYTES]; /* derived: commitments */
	cd_mask_witness_fn witness;
	void *witness_ctx;
};

static const char *const action_names[] = { "none", "pseudonymize", "redact", "drop" };

const char *cd_mask_action_name(enum cd_mask_action a)
{
	return (unsigned)a < sizeof action_names / sizeof action_names[0] ? action_names[a] : "?";
}

int cd_mask_action_parse(const char *s, enum cd_mask_action *ret)
{
	unsigned i;

	for (i = 0; s && i < sizeof action_names / sizeof action_names[0]; i++) {
		if (!strcmp(s, action_names[i])) {
			*ret = (enum cd_mask_action)i;
			return 0;
		}
	}
	return -EINVAL;
}

int cd_mask_rules_active(const struct cd_mask_rules *r)
{
	unsigned i;

	for (i = 0; r && i < CD_SCAN_NTYPES; i++)
		if (r->action[i] != CD_MASK_NONE)
			return 1;
	return 0;
}

void cd_mask_rules_merge(struct cd_mask_rules *a, const struct cd_mask_rules *b)
{
	unsigned i;

	for (i = 0; i < CD_SCAN_NTYPES; i++)
		if (b->action[i] > a->action[i])
			a->action[i] = b->action[i];
}

/* ---- the key ---------------------------------------------------------- */

static int read_key(int fd, const char *path, unsigned char *key, struct cd_err *err)
{
	struct stat st;
	ssize_t got;

	if (fstat(fd, &st) < 0)
		return cd_err_sys(err, -errno, "mask key '%s'", path);
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
		return cd_err_set(err, -CD_E_CORRUPT,
		                  "mask key '%s' must be a regular file of ours with mode 0600",
		                  path);
	if (st.st_size != CD_MASK_KEY_BYTES)
		return cd_err_set(err, -CD_E_CORRUPT, "mask key '%s' is not %d bytes", path,
		                  CD_MASK_KEY_BYTES);
	got = read(fd, key, CD_MASK_KEY_BYTES);
	if (got != CD_MASK_KEY_BYTES) {
		sodium_memzero(key, CD_MASK_KEY_BYTES);
		return cd_err_set(err, -CD_E_CORRUPT, "mask key '%s': short read", path);
	}
	return 0;
}

static int key_open(const char *path, int create, unsigned char ret_key[CD_MASK_KEY_BYTES],
                    struct cd_err *err)
{
	unsigned char key[CD_MASK_KEY_BYTES];
	int fd, r;

	if (sodium_init() < 0)
		return cd_err_set(err, -EIO, "libsodium failed to initialize");
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 && errno == ENOENT && create) {
		if ((r = cd_mkdir_parents(path, err)) < 0)
			return r;
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd >= 0) {
			randombytes_buf(key, sizeof key);
			r = write(fd, key, sizeof key) == (ssize_t)sizeof key && fsync(fd) == 0
			            ? 0
			            : -errno;
			close(fd);
			sodium_memzero(key, sizeof key);
			if (r < 0) {
				unlink(path);
				return cd_err_sys(err, r, "cannot write mask key '%s'", path);
			}
		} else if (errno != EEXIST) {
			return cd_err_sys(err, -errno, "cannot create mask key '%s'", path);
		}
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	}
	if (fd < 0)
		return cd_err_sys(err, -errno, "cannot open mask key '%s'", path);
	r = read_key(fd, path, key, err);
	close(fd);
	if (r == 0)
		memcpy(ret_key, key, sizeof key);
	sodium_memzero(key, sizeof key);
	return r;
}

int cd_mask_key_load(const char *path, unsigned char ret_key[CD_MASK_KEY_BYTES], struct cd_err *err)
{
	return key_open(path, 1, ret_key, err);
}

int cd_mask_key_read(const char *path, unsigned char ret_key[CD_MASK_KEY_BYTES], struct cd_err *err)
{
	return key_open(path, 0, ret_key, err);
}

/* ---- the masker --------------------------------------------------------- */

int cd_masker_new(const unsigned char key[CD_MASK_KEY_BYTES], struct cd_masker **ret,
                  struct cd_err *err)
{
	struct cd_masker *m;

	if (sodium_init() < 0)
		return cd_err_set(err, -EIO, "libsodium failed to initialize");
	m = calloc(1, sizeof *m);
	if (!m)
		return cd_err_set(err, -ENOMEM, "out of memory");
	/* The scanner comes with the first text to mask: a front end that
	 * holds a masker for records it may never need to mask (a policy
	 * where some other grant masks) does not pay for its database. */
	memcpy(m->key, key, CD_MASK_KEY_BYTES);
	{
		/* A subkey, so a commitment and a pseudonym of one value share
		 * no key material in use. */
		static const char label[] = "cordon commitment key v1";
		crypto_auth_hmacsha256(m->commit_key, (const unsigned char *)label, sizeof label,
		                       m->key);
	}
	*ret = m;
	return 0;
}

int cd_masker_prepare(struct cd_masker *m, struct cd_err *err)
{
	if (!m)
		return cd_err_set(err, -EINVAL, "no masker");
	return m->scan ? 0 : cd_scanner_new(&m->scan, err);
}

void cd_masker_witness(struct cd_masker *m, cd_mask_witness_fn fn, void *ctx)
{
	if (!m)
		return;
	m->witness = fn;
	m->witness_ctx = ctx;
}

void cd_masker_free(struct cd_masker *m)
{
	if (!m)
		return;
	cd_scanner_free(m->scan);
	sodium_memzero(m->key, sizeof m->key);
	sodium_memzero(m->commit_key, sizeof m->commit_key);
	free(m);
}

/* The value as pseudonymized: emails lower-cased, numbers without their
 * separators, IBANs without spaces; secrets as they are. */
static size_t normalize(enum cd_scan_type t, const char *v, size_t n, char *out)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		char c = v[i];
		switch (t) {
		case CD_SCAN_EMAIL:
			out[k++] = (c >= 'A' && c <= 'Z') ? (char)(c | 0x20) : c;
			break;
		case CD_SCAN_PHONE:
		case CD_SCAN_CARD:
		case CD_SCAN_SSN:
			if (c >= '0' && c <= '9')
				out[k++] = c;
			break;
		case CD_SCAN_IBAN:
			if (c != ' ')
				out[k++] = c;
			break;
		default:
			out[k++] = c;
			break;
		}
	}
	return k;
}

int cd_mask_pseudonym(const struct cd_masker *m, enum cd_scan_type t, const char *value, size_t n,
                      char out[CD_MASK_PSEUDONYM_MAX])
{
	static const char domain[] = "cordon mask v1";
	crypto_auth_hmacsha256_state st;
	unsigned char mac[crypto_auth_hmacsha256_BYTES];
	const char *name = cd_scan_type_name(t);
	char *norm;
	size_t nn;
	int w;

	if (!name)
		return -EINVAL;
	norm = malloc(n ? n : 1);
	if (!norm)
		return -ENOMEM;
	nn = normalize(t, value, n, norm);
	/* Domain-separated: the type is part of the message, so one string
	 * seen as two types gets two unrelated pseudonyms. */
	crypto_auth_hmacsha256_init(&st, m->key, sizeof m->key);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)domain, sizeof domain);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)name, strlen(name) + 1);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)norm, nn);
	crypto_auth_hmacsha256_final(&st, mac);
	sodium_memzero(norm, n ? n : 1);
	free(norm);
	w = snprintf(out, CD_MASK_PSEUDONYM_MAX, "<%s:%02x%02x%02x%02x>", name, mac[0], mac[1],
	             mac[2], mac[3]);
	sodium_memzero(&st, sizeof st);
	return w > 0 && w < CD_MASK_PSEUDONYM_MAX ? 0 : -EINVAL;
}

int cd_mask_commit(const struct cd_masker *m, const unsigned char salt[CD_MASK_SALT_BYTES],
                   const char *label, const void *value, size_t n, char out[65])
{
	static const char domain[] = "cordon commitment v1";
	crypto_auth_hmacsha256_state st;
	unsigned char mac[crypto_auth_hmacsha256_BYTES];
	enum cd_scan_type t;
	char *norm = NULL;
	size_t nn = n;

	if (!m || !salt || !label || (!value && n))
		return -EINVAL;
	if (cd_scan_type_parse(label, &t) == 0) {
		norm = malloc(n ? n : 1);
		if (!norm)
			return -ENOMEM;
		nn = normalize(t, value, n, norm);
		value = norm;
	}
	crypto_auth_hmacsha256_init(&st, m->commit_key, sizeof m->commit_key);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)domain, sizeof domain);
	crypto_auth_hmacsha256_update(&st, salt, CD_MASK_SALT_BYTES);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)label, strlen(label) + 1);
	crypto_auth_hmacsha256_update(&st, value, nn);
	crypto_auth_hmacsha256_final(&st, mac);
	sodium_memzero(&st, sizeof st);
	if (norm) {
		sodium_memzero(norm, n ? n : 1);
		free(norm);
	}
	sodium_bin2hex(out, 65, mac, sizeof mac);
	return 0;
}

/* ---- text ------------------------------------------------------------- */

struct spans {
	struct cd_finding *v;
	size_t n, alloc;
	const struct cd_mask_rules *rules;
};

static int add_span(void *ctx, const struct cd_finding *f)
{
	struct spans *s = ctx;

	if (f->confidence < CD_MASK_MIN_CONFIDENCE || s->rules->action[f->type] == CD_MASK_NONE ||
	    f->to <= f->from)
		return 0;
	if (s->n == s->alloc) {
		size_t na = s->alloc ? s->alloc * 2 : 16;
		struct cd_finding *v;
		if (na > SIZE_MAX / sizeof *v)
			return -ENOMEM;
		v = realloc(s->v, na * sizeof *v);
		if (!v)
			return -ENOMEM;
		s->v = v;
		s->alloc = na;
	}
	s->v[s->n++] = *f;
	return 0;
}

static int cmp_span(const void *a, const void *b)
{
	const struct cd_finding *x = a, *y = b;

	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	if (x->to != y->to)
		return x->to > y->to ? -1 : 1;
	return y->confidence - x->confidence;
}

int cd_mask_text(struct cd_masker *m, const struct cd_mask_rules *r, const char *in, size_t n,
                 struct cd_buf *out, size_t *ret_count)
{
	struct spans s = { NULL, 0, 0, r };
	size_t at = 0, i, count = 0;
	int rc;

	if (!m || !r || !out)
		return -EINVAL;
	if (!m->scan && cd_scanner_new(&m->scan, NULL) < 0)
		return -EIO;
	rc = cd_scan(m->scan, in, n, CD_SCAN_ALL, add_span, &s);
	if (rc < 0)
		goto out;
	if (s.n > 1)
		qsort(s.v, s.n, sizeof *s.v, cmp_span);
	for (i = 0; i < s.n && rc == 0; i++) {
		const struct cd_finding *f = &s.v[i];
		char ps[CD_MASK_PSEUDONYM_MAX];
		if (f->from < at)
			continue; /* inside a span already replaced */
		if ((rc = cd_buf_append(out, in + at, f->from - at)) < 0)
			break;
		if (m->witness &&
		    (rc = m->witness(m->witness_ctx, f->type, in + f->from, f->to - f->from)) < 0)
			break;
		switch (r->action[f->type]) {
		case CD_MASK_PSEUDONYMIZE:
			rc = cd_mask_pseudonym(m, f->type, in + f->from, f->to - f->from, ps);
			if (rc == 0)
				rc = cd_buf_puts(out, ps);
			break;
		case CD_MASK_REDACT:
			rc = cd_buf_printf(out, "<%s>", cd_scan_type_name(f->type));
			break;
		default:
			break; /* drop */
		}
		at = f->to;
		count++;
	}
	if (rc == 0)
		rc = cd_buf_append(out, in + at, n - at);
out:
	free(s.v);
	if (rc == 0 && ret_count)
		*ret_count = count;
	return rc;
}

/* ---- JSON ------------------------------------------------------------- */

static int mask_string(struct cd_masker *m, const struct cd_mask_rules *r, const char *s, size_t n,
                       struct cd_buf *b, size_t *count)
{
	size_t c = 0;
	int rc;

	cd_buf_reset(b);
	if ((rc = cd_mask_text(m, r, s, n, b, &c)) < 0)
		return rc;
	*count += c;
	return c > 0;
}

static int mask_value(struct cd_masker *m, const struct cd_mask_rules *r, json_t *v,
                      struct cd_buf *b, size_t *count, unsigned depth)
{
	size_t i;
	int rc;

	if (depth > 512)
		return -CD_E_LIMIT;
	if (json_is_string(v)) {
		rc = mask_string(m, r, json_string_value(v), json_string_length(v), b, count);
		if (rc > 0)
			rc = json_string_setn(v, b->data, b->len) == 0 ? 0 : -CD_E_PARSE;
		return rc < 0 ? rc : 0;
	}
	if (json_is_array(v)) {
		for (i = 0; i < json_array_size(v); i++)
			if ((rc = mask_value(m, r, json_array_get(v, i), b, count, depth + 1)) < 0)
				return rc;
		return 0;
	}
	if (json_is_object(v)) {
		const char *k;
		json_t *val, *renamed = NULL;
		void *tmp;
		json_object_foreach_safe(v, tmp, k, val)
		{
			if ((rc = mask_value(m, r, val, b, count, depth + 1)) < 0)
				goto fail;
			rc = mask_string(m, r, k, strlen(k), b, count);
			if (rc < 0)
				goto fail;
			if (rc > 0) {
				/* A key with personal data in it: moved under its
				 * masked name once the walk is over. */
				if (!renamed && !(renamed = json_object()))
					return -ENOMEM;
				if (json_object_set(renamed, b->data, val) < 0) {
					rc = -ENOMEM;
					goto fail;
				}
				json_object_del(v, k);
			}
		}
		if (renamed && json_object_update(v, renamed) < 0) {
			json_decref(renamed);
			return -ENOMEM;
		}
		json_decref(renamed);
		return 0;
	fail:
		json_decref(renamed);
		return rc;
	}
	return 0;
}

int cd_mask_json(struct cd_masker *m, const struct cd_mask_rules *r, json_t *v, size_t *ret_count)
{
	struct cd_buf b;
	size_t count = 0;
	int rc;

	if (!m || !r || !v)
		return -EINVAL;
	if (!cd_mask_rules_active(r))
		return 0;
	cd_buf_init(&b, (size_t)CD_SCAN_MAX_BYTES);
	rc = mask_value(m, r, v, &b, &count, 0);
	cd_buf_release(&b);
	if (rc == 0 && ret_count)
		*ret_count += count;
	return rc;
}

/* ---- field scoping ------------------------------------------------------ */

/* How list L sees the path p: 2 named (or under a named path), 1 above a
 * named path, 0 neither. */
static int path_in(const char *p, size_t pn, const char *const *l, size_t ln)
{
	size_t i;
	int best = 0;

	for (i = 0; i < ln; i++) {
		size_t nl = strlen(l[i]);
		if (nl <= pn && !memcmp(l[i], p, nl) && (nl == pn || p[nl] == '.'))
			return 2;
		if (nl > pn && !memcmp(l[i], p, pn) && l[i][pn] == '.')
			best = 1;
	}
	return best;
}

static int verdict(const struct cd_buf *p, const char *const *const *lists, const size_t *counts,
                   size_t nlists)
{
	size_t i;
	int v = 2;

	for (i = 0; i < nlists; i++) {
		int w = path_in(p->data, p->len, lists[i], counts[i]);
		if (w < v)
			v = w;
	}
	return v;
}

static int scope(json_t *v, struct cd_buf *path, const char *const *const *lists,
                 const size_t *counts, size_t nlists, unsigned depth)
{
	size_t i, keep;
	int rc;

	if (depth > 512)
		return -CD_E_LIMIT;
	if (json_is_array(v)) {
		for (i = 0; i < json_array_size(v);) {
			json_t *e = json_array_get(v, i);
			if (json_is_object(e) || json_is_array(e)) {
				if ((rc = scope(e, path, lists, counts, nlists, depth + 1)) < 0)
					return rc;
				i++;
			} else if (json_array_remove(v, i) < 0) {
				return -ENOMEM;
			}
		}
		return 0;
	}
	if (json_is_object(v)) {
		const char *k;
		json_t *val;
		void *tmp;
		keep = path->len;
		json_object_foreach_safe(v, tmp, k, val)
		{
			int w;
			if ((keep && cd_buf_putc(path, '.') < 0) || cd_buf_puts(path, k) < 0)
				return -CD_E_LIMIT;
			w = verdict(path, lists, counts, nlists);
			if (w == 1 && (json_is_object(val) || json_is_array(val))) {
				if ((rc = scope(val, path, lists, counts, nlists, depth + 1)) < 0)
					return rc;
			} else if (w != 2) {
				json_object_del(v, k);
			}
			path->len = keep;
			if (path->data)
				path->data[keep] = '\0';
		}
		return 0;
	}
	return -CD_E_DENIED;
}

int cd_mask_fields(json_t *v, const char *const *const *lists, const size_t *counts, size_t nlists)
{
	struct cd_buf path;
	int rc;

	if (!v)
		return -EINVAL;
	if (!nlists)
		return 0;
	if (!json_is_object(v) && !json_is_array(v))
		return -CD_E_DENIED;
	cd_buf_init(&path, 64 * 1024);
	rc = scope(v, &path, lists, counts, nlists, 0);
	cd_buf_release(&path);
	return rc;
}
