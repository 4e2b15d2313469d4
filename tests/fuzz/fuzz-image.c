/* fuzz-image.c — an image's untrusted parts on arbitrary bytes.  The first
 * byte picks what the rest is:
 *
 *   0: the files of an image ([name length][name][2-byte length][bytes]...)
 *      read as an OCI layout or a docker-archive: either refused with a
 *      message, or a key and digest of the right form and at most the
 *      layer cap of plain relative layer names with sha256 digests;
 *   1: a layer (a tar stream, plain, gzip or zstd) applied onto an empty
 *      root in a fresh directory, its digest being its own: either
 *      refused with a message, or a tree with no device node, no setuid
 *      or setgid bit, no symlink that climbs out, and nothing written
 *      beside the root.
 *
 * It never crashes, hangs or leaks. */
#include "image/image-int.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

const char *cd_fuzz_name = "image";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NFILES 16

struct files {
	char name[NFILES][256];
	const uint8_t *buf[NFILES];
	size_t len[NFILES];
	size_t n;
};

static int get(void *ctx, const char *name, size_t cap, char **ret_buf, size_t *ret_len,
               struct cd_err *err)
{
	struct files *f = ctx;
	size_t i;

	for (i = 0; i < f->n; i++) {
		if (strcmp(f->name[i], name) != 0)
			continue;
		if (f->len[i] > cap)
			return cd_err_set(err, -CD_E_LIMIT, "too large");
		if (!(*ret_buf = malloc(f->len[i] + 1)))
			return cd_err_set(err, -12, "out of memory");
		memcpy(*ret_buf, f->buf[i], f->len[i]);
		(*ret_buf)[f->len[i]] = '\0';
		*ret_len = f->len[i];
		return 0;
	}
	return -2; /* -ENOENT */
}

static void manifest(const uint8_t *p, size_t size)
{
	struct files f;
	struct cd_image_desc *d = calloc(1, sizeof *d);
	struct cd_err err = { 0, "" };
	size_t i, nl, len;

	if (!d)
		return;
	memset(&f, 0, sizeof f);
	while (size >= 1 && f.n < NFILES) {
		nl = p[0];
		if (size < 1 + nl + 2)
			break;
		memcpy(f.name[f.n], p + 1, nl);
		f.name[f.n][nl] = '\0';
		len = (size_t)p[1 + nl] | (size_t)p[2 + nl] << 8;
		p += 3 + nl;
		size -= 3 + nl;
		if (len > size)
			len = size;
		f.buf[f.n] = p;
		f.len[f.n++] = len;
		p += len;
		size -= len;
	}
	if (cd_image_desc_read(get, &f, d, &err) < 0) {
		if (!err.msg[0])
			abort();
	} else {
		if ((strncmp(d->key, "oci-sha256-", 11) && strncmp(d->key, "docker-sha256-", 14)) ||
		    !cd_image_digest_ok(d->digest) || d->nlayers > CD_IMAGE_LAYERS_MAX ||
		    strcmp(strchr(d->key, '-') + 8, d->digest + 7) != 0)
			abort();
		for (i = 0; i < d->nlayers; i++) {
			const char *lp = d->layers[i].path;
			char norm[CD_IMAGE_NAME_MAX];

			if (!cd_image_digest_ok(d->layers[i].digest) || !lp[0] || lp[0] == '/' ||
			    cd_image_name_norm(lp, norm, sizeof norm, NULL) < 0 || strcmp(norm, lp))
				abort();
		}
	}
	free(d);
}

/* Every entry below dfd at relative path `at`: the invariants of a layer. */
static void check_tree(int dfd, const char *at, int depth)
{
	DIR *d = fdopendir(dfd);
	struct dirent *e;
	struct stat st;
	char path[8192], target[4096];
	ssize_t n;

	if (!d)
		abort();
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof path, "%s%s%s", at, at[0] ? "/" : "", e->d_name);
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			abort();
		if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) || S_ISFIFO(st.st_mode) ||
		    S_ISSOCK(st.st_mode) || (st.st_mode & 06000))
			abort();
		if (S_ISLNK(st.st_mode)) {
			n = readlinkat(dirfd(d), e->d_name, target, sizeof target - 1);
			if (n < 0)
				abort();
			target[n] = '\0';
			if (!cd_image_link_inside(path, target))
				abort();
		}
		if (S_ISDIR(st.st_mode) && depth < 200) {
			int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
			if (fd < 0)
				abort();
			check_tree(fd, path, depth + 1);
		}
	}
	closedir(d);
}

static void layer(const uint8_t *p, size_t size)
{
	char dir[] = "/tmp/fuzz-image.XXXXXX", digest[72];
	struct cd_image_stats st;
	struct cd_image_budget b;
	struct cd_err err = { 0, "" };
	int fd = memfd_create("layer", MFD_CLOEXEC), top, root, r;
	DIR *d;
	struct dirent *e;

	if (fd < 0 || !mkdtemp(dir))
		abort();
	if (size && write(fd, p, size) != (ssize_t)size)
		abort();
	cd_image_sha256(p, size, digest);
	top = open(dir, O_RDONLY | O_DIRECTORY);
	if (top < 0 || mkdirat(top, "root", 0755) < 0 ||
	    (root = openat(top, "root", O_PATH | O_DIRECTORY)) < 0)
		abort();
	memset(&st, 0, sizeof st);
	memset(&b, 0, sizeof b);
	b.bytes_max = 64 * 1024 * 1024;
	b.ratio_max = 100;
	b.entries_max = 10000;
	r = cd_image_layer_apply(fd, digest, root, &st, &b, &err);
	if (r == 0)
		r = cd_image_links_check(root, &err); /* as the unpack does, after its layers */
	if (r < 0 && !err.msg[0])
		abort();
	if (r == 0)
		check_tree(openat(top, "root", O_RDONLY | O_DIRECTORY), "", 0);
	/* Nothing beside the root, whatever happened. */
	d = fdopendir(dup(top));
	while (d && (e = readdir(d))) {
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "root"))
			abort();
	}
	if (d)
		closedir(d);
	cd_image_remove(top, "root");
	close(root);
	close(top);
	close(fd);
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] & 1)
		layer(data + 1, size - 1);
	else
		manifest(data + 1, size - 1);
	return 0;
}
