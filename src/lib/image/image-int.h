/* image-int.h — the image module's parts: the manifest reader
 * (image-manifest.c: JSON in, a list of verified-to-be blobs out), the
 * file-system side (image-fs.c: names, walks below a descriptor, removal,
 * the tree's identity), libarchive (image-arc.c: tar streams, layers) and
 * the cache (image.c). */
#ifndef CD_IMAGE_INT_H
#define CD_IMAGE_INT_H

#include "image.h"
#include "util/bounds.h"

#include <sodium.h>

enum cd_image_format { CD_IMAGE_OCI = 1, CD_IMAGE_DOCKER = 2 };

struct cd_image_layer {
	char path[CD_IMAGE_NAME_MAX]; /* relative to the image's top, checked by name_norm */
	char digest[72];              /* "sha256:HEX" the file's bytes must hash to */
};

struct cd_image_desc {
	enum cd_image_format format;
	char key[CD_IMAGE_KEY_MAX];
	char digest[72];
	size_t nlayers;
	struct cd_image_layer layers[CD_IMAGE_LAYERS_MAX];
};

/* Read the image's file NAME (relative, checked) whole, at most `cap`
 * bytes: 0 and a malloc'd buffer (NUL-terminated) in *ret_buf, -ENOENT
 * when it is not there, -CD_E_LIMIT past cap, else -errno with err. */
typedef int (*cd_image_read_fn)(void *ctx, const char *name, size_t cap, char **ret_buf,
                                size_t *ret_len, struct cd_err *err);

/* What the image is: its format, its key and digest, its layers in order.
 * Every JSON document it reads through `rd` is checked against the digest
 * that names it (an OCI blob) or hashed to make the key (a docker config).
 * The layers themselves are not read here. */
int cd_image_desc_read(cd_image_read_fn rd, void *ctx, struct cd_image_desc *ret,
                       struct cd_err *err);

/* "sha256:HEX" of buf. */
void cd_image_sha256(const void *buf, size_t len, char out[72]);
/* 1 when s is "sha256:" and 64 lower-case hex digits. */
int cd_image_digest_ok(const char *s);

/* An archive entry's path made relative and plain: an absolute path is
 * refused (-CD_E_DENIED), so is a ".." component; "." and empty
 * components are dropped.  out may be "" (the top itself). */
int cd_image_name_norm(const char *in, char *out, size_t cap, struct cd_err *err);
/* 1 when a symlink at relative path `at` with target `target` resolves,
 * read by name from at's directory (an absolute target from the top),
 * inside the top; 0 when it climbs out. */
int cd_image_link_inside(const char *at, const char *target);
/* Every link in the tree below dirfd `top` checked with the links it
 * passes through followed inside the tree (an absolute target from the
 * top): -CD_E_DENIED, naming the link, when one climbs out (a hard link
 * copying a link elsewhere, a chain through another link), which the
 * lexical check of one entry cannot see. */
int cd_image_links_check(int top, struct cd_err *err);
/* Open the directory holding relative path `path` below dirfd `top`
 * (O_PATH, never following a link; missing directories made 0755, and
 * counted in *made, when `made` is not NULL); *ret_leaf points into path
 * at the last component.  -ENOENT when missing and !made, -CD_E_DENIED
 * when a component is a link or not a directory. */
int cd_image_parent(int top, const char *path, uint64_t *made, int *ret_fd, const char **ret_leaf,
                    struct cd_err *err);
/* Remove name below dirfd, a directory with all it holds, never following
 * a link.  0 also when it was not there. */
int cd_image_remove(int dirfd, const char *name);
/* Remove everything inside directory `name` below dirfd (an opaque
 * whiteout). */
int cd_image_empty_dir(int dirfd, const char *name);
/* The tree's identity below dirfd `top`: each entry's path, type, mode,
 * size, inode, link count and ctime, and each link's target, in name
 * order, hashed: "sha256:HEX".  *ret_n: the entries. */
int cd_image_tree_id(int top, char out[72], uint64_t *ret_n, struct cd_err *err);

/* What one unpack may still do (cd_image_limits, defaults filled in).
 * `read`: the bytes of the streams opened so far (their files' sizes);
 * each pass's decompressed bytes are counted, block by block, in `used`. */
struct cd_image_budget {
	uint64_t bytes_max, ratio_max, entries_max;
	uint64_t read;
	uint64_t used[3]; /* staging a tarball, whiteout passes, entry passes */
	uint64_t entries; /* made, directories made for a deep path included */
};

/* libarchive (image-arc.c). */
struct cd_image_small; /* a tarball's small files, read in one pass */
int cd_image_small_read(int fd, const struct cd_image_budget *b, struct cd_image_small **ret,
                        struct cd_err *err);
void cd_image_small_free(struct cd_image_small *s);
int cd_image_small_get(void *ctx, const char *name, size_t cap, char **ret_buf, size_t *ret_len,
                       struct cd_err *err);
/* Copy a tarball's files and directories below dirfd `dst` (nothing
 * else: a link or device in the outer archive is refused). */
int cd_image_stage(int fd, int dst, struct cd_image_budget *b, struct cd_err *err);
/* Apply layer file `fd` onto dirfd `root`: its bytes must hash to
 * `digest` (checked on each of its two passes: whiteouts, then entries). */
int cd_image_layer_apply(int fd, const char *digest, int root, struct cd_image_stats *st,
                         struct cd_image_budget *b, struct cd_err *err);

#endif
