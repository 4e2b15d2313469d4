/* proposal-diff.c — unified diffs of text files for proposals, in process
 * (a diff(1) per file cost ~30 ms of fork and exec on a loaded machine:
 * 20 s for a 1,000-file change set).
 *
 * The common prefix and suffix are trimmed; the middle gets an exact
 * longest-common-subsequence edit script when it is small (at most
 * CD_PROP_DIFF_CELLS line pairs), else it is shown as replaced as a whole:
 * still a correct diff, only not a minimal one.  Hunks have three lines of
 * context, as diff -u.  Inputs are untrusted bytes: lines are (pointer,
 * length) views, nothing is NUL-terminated, sizes are capped by the
 * caller (CD_PROP_DIFF_INPUT) and by the output buffer's cap. */
#include "proposal-int.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CD_PROP_DIFF_CELLS (4u * 1024 * 1024)
#define CONTEXT            3

struct line {
	const char *p;
	size_t n; /* without the newline */
	int eol;  /* ends with '\n' */
};

struct op {
	char kind;     /* ' ', '-', '+' */
	size_t ai, bi; /* lines of a and b before this op */
};

static int split(const char *s, size_t n, struct line **ret, size_t *ret_n)
{
	size_t i, cnt = 0, at = 0;
	struct line *v;

	for (i = 0; i < n; i++)
		cnt += s[i] == '\n';
	if (n && s[n - 1] != '\n')
		cnt++;
	v = calloc(cnt ? cnt : 1, sizeof *v);
	if (!v)
		return -ENOMEM;
	for (i = 0; i < cnt; i++) {
		const char *nl = memchr(s + at, '\n', n - at);
		size_t len = nl ? (size_t)(nl - (s + at)) : n - at;
		v[i].p = s + at;
		v[i].n = len;
		v[i].eol = nl != NULL;
		at += len + (nl != NULL);
	}
	*ret = v;
	*ret_n = cnt;
	return 0;
}

static int same(const struct line *x, const struct line *y)
{
	return x->n == y->n && x->eol == y->eol && memcmp(x->p, y->p, x->n) == 0;
}

/* The edit script for a[0..na) against b[0..nb). */
static int script(const struct line *a, size_t na, const struct line *b, size_t nb, struct op **ret,
                  size_t *ret_n)
{
	size_t pre = 0, suf = 0, m, n, i, j, k = 0;
	struct op *ops = calloc(na + nb + 1, sizeof *ops);
	uint32_t *L = NULL;

	if (!ops)
		return -ENOMEM;
	while (pre < na && pre < nb && same(&a[pre], &b[pre]))
		pre++;
	while (suf < na - pre && suf < nb - pre && same(&a[na - 1 - suf], &b[nb - 1 - suf]))
		suf++;
	m = na - pre - suf;
	n = nb - pre - suf;
	for (i = 0; i < pre; i++)
		ops[k++] = (struct op){ ' ', i, i };
	if (m && n && (m + 1) <= CD_PROP_DIFF_CELLS / (n + 1)) {
		/* L[i][j]: the LCS length of a[pre+i..] and b[pre+j..]. */
		size_t w = n + 1;
		L = calloc((m + 1) * w, sizeof *L);
		if (!L) {
			free(ops);
			return -ENOMEM;
		}
		for (i = m; i-- > 0;)
			for (j = n; j-- > 0;)
				L[i * w + j] = same(&a[pre + i], &b[pre + j])
				                       ? L[(i + 1) * w + j + 1] + 1
				                       : (L[(i + 1) * w + j] >= L[i * w + j + 1]
				                                  ? L[(i + 1) * w + j]
				                                  : L[i * w + j + 1]);
		i = j = 0;
		while (i < m || j < n) {
			if (i < m && j < n && same(&a[pre + i], &b[pre + j])) {
				ops[k++] = (struct op){ ' ', pre + i, pre + j };
				i++;
				j++;
			} else if (j == n || (i < m && L[(i + 1) * w + j] >= L[i * w + j + 1])) {
				ops[k++] = (struct op){ '-', pre + i, pre + j };
				i++;
			} else {
				ops[k++] = (struct op){ '+', pre + i, pre + j };
				j++;
			}
		}
		free(L);
	} else {
		for (i = 0; i < m; i++)
			ops[k++] = (struct op){ '-', pre + i, pre };
		for (j = 0; j < n; j++)
			ops[k++] = (struct op){ '+', pre + m, pre + j };
	}
	for (i = 0; i < suf; i++)
		ops[k++] = (struct op){ ' ', na - suf + i, nb - suf + i };
	*ret = ops;
	*ret_n = k;
	return 0;
}

static int put_line(struct cd_buf *out, char kind, const struct line *l)
{
	int r = cd_buf_putc(out, kind);

	if (r == 0)
		r = cd_buf_append(out, l->p, l->n);
	if (r == 0)
		r = cd_buf_putc(out, '\n');
	if (r == 0 && !l->eol)
		r = cd_buf_puts(out, "\\ No newline at end of file\n");
	return r;
}

static int range(struct cd_buf *out, char sign, size_t start, size_t count)
{
	/* diff -u: an empty range names the line before it. */
	if (count == 1)
		return cd_buf_printf(out, "%c%zu", sign, start + 1);
	return cd_buf_printf(out, "%c%zu,%zu", sign, count ? start + 1 : start, count);
}

static int hunk(struct cd_buf *out, const struct op *ops, size_t from, size_t to,
                const struct line *a, const struct line *b)
{
	size_t i, ac = 0, bc = 0;
	int r;

	for (i = from; i < to; i++) {
		ac += ops[i].kind != '+';
		bc += ops[i].kind != '-';
	}
	if ((r = cd_buf_puts(out, "@@ ")) < 0 || (r = range(out, '-', ops[from].ai, ac)) < 0 ||
	    (r = cd_buf_putc(out, ' ')) < 0 || (r = range(out, '+', ops[from].bi, bc)) < 0 ||
	    (r = cd_buf_puts(out, " @@\n")) < 0)
		return r;
	for (i = from; i < to && r == 0; i++)
		r = put_line(out, ops[i].kind, ops[i].kind == '+' ? &b[ops[i].bi] : &a[ops[i].ai]);
	return r;
}

int cd_prop_diff(const char *a, size_t alen, const char *b, size_t blen, const char *label_a,
                 const char *label_b, struct cd_buf *out)
{
	struct line *la = NULL, *lb = NULL;
	struct op *ops = NULL;
	size_t na = 0, nb = 0, nops = 0, i, start, end, last;
	int r;

	if ((r = split(a, alen, &la, &na)) < 0 || (r = split(b, blen, &lb, &nb)) < 0 ||
	    (r = script(la, na, lb, nb, &ops, &nops)) < 0)
		goto out;
	if ((r = cd_buf_printf(out, "--- %s\n+++ %s\n", label_a, label_b)) < 0)
		goto out;
	for (i = 0; i < nops;) {
		if (ops[i].kind == ' ') {
			i++;
			continue;
		}
		/* A hunk: from CONTEXT lines before this change to CONTEXT
		 * after the last change that is no more than 2*CONTEXT away. */
		start = i > CONTEXT ? i - CONTEXT : 0;
		last = i;
		for (end = i; end < nops; end++) {
			if (ops[end].kind != ' ')
				last = end;
			else if (end - last > 2 * CONTEXT)
				break;
		}
		end = last + 1 + CONTEXT < nops ? last + 1 + CONTEXT : nops;
		if ((r = hunk(out, ops, start, end, la, lb)) < 0)
			goto out;
		i = end;
	}
out:
	free(la);
	free(lb);
	free(ops);
	return r;
}
