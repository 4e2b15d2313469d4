/* image.h — container images as roots for `cordon run --image FILE`: an
 * OCI image layout (a directory or its tarball) or a docker-archive
 * (`docker save`), unpacked once into a content-addressed cache.
 *
 * Trust boundary: every byte of FILE is the image author's.  Every blob is
 * checked against the digest its manifest or config names (an OCI
 * manifest's layer digests, a docker-archive's diff_ids) before the
 * unpacked tree is used; entries with absolute paths, `..`, links that
 * climb out of the root, hard links to what is not in the root, paths that
 * pass through a link, and device nodes are refused; FIFOs and sockets are
 * skipped; setuid/setgid bits and every extended attribute (among them
 * security.capability) are dropped; nothing is ever chowned.  libarchive
 * reads the tar streams (loaded on first use: util/dl.h); the files are
 * written by this module alone, below a directory descriptor, never
 * following a link.
 *
 * The cache: DIR/KEY/rootfs and DIR/KEY/stamp, KEY being
 * oci-sha256-HEX (the manifest's digest) or docker-sha256-HEX (the
 * config's, which names every layer's diff_id).  An entry is unpacked in
 * DIR/.unpack-XXXXXX and renamed into place whole, under DIR/KEY.lock
 * (flock); its stamp carries the digest and the tree's identity (each
 * entry's path, type, mode, size, inode and ctime, hashed), MACed with a
 * per-user key (DIR/.mac-key, 0600).  Every use re-reads the tree and
 * checks the stamp: a changed entry is refused, never repaired. */
#ifndef CD_IMAGE_H
#define CD_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

#define CD_IMAGE_KEY_MAX 80

struct cd_image_stats {
	uint64_t entries;   /* files, directories and links written */
	uint64_t bytes;     /* file content written (holes left as holes) */
	uint64_t setid;     /* setuid/setgid bits dropped */
	uint64_t xattrs;    /* entries whose extended attributes were dropped */
	uint64_t caps;      /* of them, with security.capability */
	uint64_t skipped;   /* FIFOs and sockets left out */
	uint64_t whiteouts; /* .wh. entries applied */
};

/* Caps on one unpack, 0 for the default (bounds.h).  Each pass over the
 * image's tar streams (staging a tarball; a layer's whiteouts; its
 * entries) may decompress at most the lower of `bytes_max` and `ratio_max`
 * times the bytes of the layers read so far (never less than
 * CD_IMAGE_RATIO_FLOOR); `entries_max` counts what is made, directories
 * made for a deep path included. */
struct cd_image_limits {
	uint64_t bytes_max;
	uint64_t ratio_max;
	uint64_t entries_max;
};

struct cd_image {
	char key[CD_IMAGE_KEY_MAX];
	char digest[72];             /* "sha256:HEX": the manifest's (oci), the config's (docker) */
	char format[8];              /* "oci" or "docker" */
	char rootfs[4096];           /* DIR/KEY/rootfs */
	int unpacked;                /* 1: unpacked by this call; 0: the cache's entry, checked */
	struct cd_image_stats stats; /* of this call's unpack */
};

/* Resolve image FILE to its cache entry below `cache_dir` (made 0700 with
 * its parents when missing), unpacking it when it is not there.  Fills
 * *ret on success.  Errors (one line in err): -CD_E_PARSE for a malformed
 * image, -CD_E_CORRUPT for a blob whose digest differs or a cache entry
 * that is not what was unpacked, -CD_E_DENIED for an entry refused by the
 * rules above, -CD_E_LIMIT past a cap (lim, NULL for bounds.h's), -CD_E_KERNEL when
 * libarchive is not installed, -errno otherwise. */
int cd_image_open(const char *file, const char *cache_dir, const struct cd_image_limits *lim,
                  struct cd_image *ret, struct cd_err *err);

#endif
