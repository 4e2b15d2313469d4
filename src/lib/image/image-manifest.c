/* image-manifest.c — what an image is, from its JSON: an OCI image
 * layout's index.json, manifest and config, or a docker-archive's
 * manifest.json and config.
 *
 * Trust boundary: all of it is the image author's.  A document is used
 * only after it hashed to the digest that named it (an OCI blob) or was
 * hashed to make the key (a docker config, whose diff_ids then name each
 * layer's bytes).  The key binds every layer: an OCI manifest names its
 * layers' digests, a docker config their diff_ids.  Names of files come
 * from the documents and are checked by cd_image_name_norm. */
#include "image-int.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cd_image_sha256(const void *buf, size_t len, char out[72])
{
	unsigned char d[crypto_hash_sha256_BYTES];
	size_t i;

	crypto_hash_sha256(d, buf, len);
	memcpy(out, "sha256:", 7);
	for (i = 0; i < sizeof d; i++)
		snprintf(out + 7 + 2 * i, 3, "%02x", d[i]);
}

int cd_image_digest_ok(const char *s)
{
	size_t i;

	if (!s || strncmp(s, "sha256:", 7) != 0 || strlen(s) != 7 + 64)
		return 0;
	for (i = 7; s[i]; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	}
	return 1;
}

static json_t *load_json(const char *buf, size_t len, const char *what, struct cd_err *err)
{
	json_error_t je;
	json_t *j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);

	if (!j)
		cd_err_set(err, -CD_E_PARSE, "%s: not JSON (line %d: %s)", what, je.line, je.text);
	return j;
}

/* Read blob DIGEST of an OCI layout and check it hashes to that digest
 * (and has the descriptor's size when one is given). */
static json_t *read_blob(cd_image_read_fn rd, void *ctx, json_t *desc, const char *what,
                         char ret_digest[72], struct cd_err *err)
{
	const char *d = json_string_value(json_object_get(desc, "digest"));
	json_t *size = json_object_get(desc, "size"), *j;
	char name[96], got[72];
	char *buf = NULL;
	size_t len = 0;
	int r;

	if (!json_is_object(desc) || !cd_image_digest_ok(d)) {
		cd_err_set(err, -CD_E_PARSE, "%s: no sha256 digest", what);
		return NULL;
	}
	snprintf(name, sizeof name, "blobs/sha256/%s", d + 7);
	r = rd(ctx, name, CD_IMAGE_JSON_MAX, &buf, &len, err);
	if (r < 0) {
		if (r == -ENOENT)
			cd_err_set(err, -CD_E_PARSE, "%s %s: not in the image", what, d);
		return NULL;
	}
	cd_image_sha256(buf, len, got);
	if (strcmp(got, d) != 0 ||
	    (size && (!json_is_integer(size) || json_integer_value(size) != (json_int_t)len))) {
		cd_err_set(err, -CD_E_CORRUPT, "%s %s: its bytes hash to %s (%zu bytes)", what, d,
		           got, len);
		free(buf);
		return NULL;
	}
	j = load_json(buf, len, what, err);
	free(buf);
	if (j && !json_is_object(j)) {
		cd_err_set(err, -CD_E_PARSE, "%s: not a JSON object", what);
		json_decref(j);
		return NULL;
	}
	if (j && ret_digest)
		memcpy(ret_digest, d, 72);
	return j;
}

static int media_is(json_t *desc, const char *a, const char *b)
{
	const char *m = json_string_value(json_object_get(desc, "mediaType"));

	return m && (!strcmp(m, a) || !strcmp(m, b));
}

#define MT_INDEX    "application/vnd.oci.image.index.v1+json"
#define MT_DLIST    "application/vnd.docker.distribution.manifest.list.v2+json"
#define MT_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define MT_DMAN     "application/vnd.docker.distribution.manifest.v2+json"

/* The one manifest of an index: the only entry, else the linux/amd64 one. */
static json_t *pick(json_t *index, const char *what, struct cd_err *err)
{
	json_t *ms = json_object_get(index, "manifests"), *m, *found = NULL;
	size_t i, n = 0;

	if (!json_is_array(ms) || json_array_size(ms) == 0) {
		cd_err_set(err, -CD_E_PARSE, "%s: no manifests", what);
		return NULL;
	}
	if (json_array_size(ms) == 1)
		return json_array_get(ms, 0);
	json_array_foreach(ms, i, m)
	{
		json_t *pl = json_object_get(m, "platform");
		const char *os = json_string_value(json_object_get(pl, "os"));
		const char *arch = json_string_value(json_object_get(pl, "architecture"));

		if (os && arch && !strcmp(os, "linux") && !strcmp(arch, "amd64")) {
			found = m;
			n++;
		}
	}
	if (n != 1) {
		cd_err_set(err, -CD_E_PARSE,
		           "%s: %zu manifests, %zu for linux/amd64: name one image (one manifest)",
		           what, json_array_size(ms), n);
		return NULL;
	}
	return found;
}

static int layer_add(struct cd_image_desc *d, const char *path, const char *digest,
                     struct cd_err *err)
{
	struct cd_image_layer *l;

	if (d->nlayers >= CD_IMAGE_LAYERS_MAX)
		return cd_err_set(err, -CD_E_LIMIT, "more than %d layers", CD_IMAGE_LAYERS_MAX);
	if (!cd_image_digest_ok(digest))
		return cd_err_set(err, -CD_E_PARSE, "layer %zu: no sha256 digest", d->nlayers + 1);
	l = &d->layers[d->nlayers];
	if (!path || cd_image_name_norm(path, l->path, sizeof l->path, err) < 0 || !l->path[0])
		return cd_err_set(err, -CD_E_PARSE,
		                  "layer %zu: its file name is not a plain "
		                  "relative name",
		                  d->nlayers + 1);
	memcpy(l->digest, digest, 72);
	d->nlayers++;
	return 0;
}

static int oci_layers(json_t *man, struct cd_image_desc *d, struct cd_err *err)
{
	json_t *ls = json_object_get(man, "layers"), *l;
	char path[96];
	size_t i;
	int r;

	if (!json_is_array(ls))
		return cd_err_set(err, -CD_E_PARSE, "manifest: no layers");
	json_array_foreach(ls, i, l)
	{
		const char *mt = json_string_value(json_object_get(l, "mediaType"));
		const char *dg = json_string_value(json_object_get(l, "digest"));

		/* tar, tar+gzip, tar+zstd (OCI); docker's rootfs.diff.tar(.gzip). */
		if (!mt ||
		    (strncmp(mt, "application/vnd.oci.image.layer.", 32) != 0 &&
		     strncmp(mt, "application/vnd.docker.image.rootfs.", 36) != 0) ||
		    !strstr(mt, "tar"))
			return cd_err_set(err, -CD_E_PARSE,
			                  "layer %zu: media type '%.80s' is not a "
			                  "tar layer",
			                  i + 1, mt ? mt : "");
		if (!cd_image_digest_ok(dg))
			return cd_err_set(err, -CD_E_PARSE, "layer %zu: no sha256 digest", i + 1);
		snprintf(path, sizeof path, "blobs/sha256/%s", dg + 7);
		if ((r = layer_add(d, path, dg, err)) < 0)
			return r;
	}
	return 0;
}

static int oci_read(cd_image_read_fn rd, void *ctx, struct cd_image_desc *d, struct cd_err *err)
{
	char *buf = NULL;
	size_t len, depth;
	json_t *top, *cur, *m, *next, *cfg;
	int r = rd(ctx, "index.json", CD_IMAGE_JSON_MAX, &buf, &len, err);

	if (r < 0)
		return r == -ENOENT
		               ? cd_err_set(err, -CD_E_PARSE, "an OCI layout without index.json")
		               : r;
	top = load_json(buf, len, "index.json", err);
	free(buf);
	if (!top)
		return -CD_E_PARSE;
	cur = json_incref(top);
	for (depth = 0;; depth++) {
		if (!(m = pick(cur, depth ? "index" : "index.json", err)) ||
		    depth >= CD_IMAGE_NESTING_MAX) {
			r = depth >= CD_IMAGE_NESTING_MAX
			            ? cd_err_set(err, -CD_E_LIMIT, "indexes nested too deep")
			            : -CD_E_PARSE;
			goto out;
		}
		if (!media_is(m, MT_INDEX, MT_DLIST))
			break;
		next = read_blob(rd, ctx, m, "index", NULL, err);
		if (!next) {
			r = err ? err->code : -CD_E_PARSE;
			goto out;
		}
		json_decref(cur);
		cur = next;
	}
	if (json_object_get(m, "mediaType") && !media_is(m, MT_MANIFEST, MT_DMAN)) {
		r = cd_err_set(err, -CD_E_PARSE,
		               "index: the manifest's media type is not an image "
		               "manifest");
		goto out;
	}
	next = read_blob(rd, ctx, m, "manifest", d->digest, err);
	if (!next) {
		r = err ? err->code : -CD_E_PARSE;
		goto out;
	}
	json_decref(cur);
	cur = next;
	cfg = read_blob(rd, ctx, json_object_get(cur, "config"), "config", NULL, err);
	if (!cfg) {
		r = err ? err->code : -CD_E_PARSE;
		goto out;
	}
	json_decref(cfg);
	r = oci_layers(cur, d, err);
	d->format = CD_IMAGE_OCI;
	snprintf(d->key, sizeof d->key, "oci-sha256-%s", d->digest + 7);
out:
	json_decref(cur);
	json_decref(top);
	return r < 0 ? r : 0;
}

static int docker_layers(json_t *ent, json_t *cfg, struct cd_image_desc *d, struct cd_err *err)
{
	json_t *ls = json_object_get(ent, "Layers");
	json_t *ids = json_object_get(json_object_get(cfg, "rootfs"), "diff_ids");
	size_t i;
	int r;

	if (!json_is_array(ls) || !json_is_array(ids) ||
	    json_array_size(ls) != json_array_size(ids))
		return cd_err_set(err, -CD_E_PARSE,
		                  "manifest.json's Layers and the config's "
		                  "rootfs.diff_ids are not two lists of one length");
	for (i = 0; i < json_array_size(ls); i++) {
		r = layer_add(d, json_string_value(json_array_get(ls, i)),
		              json_string_value(json_array_get(ids, i)), err);
		if (r < 0)
			return r;
	}
	return 0;
}

static int docker_read(cd_image_read_fn rd, void *ctx, struct cd_image_desc *d, struct cd_err *err)
{
	char *buf = NULL, name[CD_IMAGE_NAME_MAX];
	size_t len;
	json_t *top, *ent, *cfg = NULL;
	const char *cname;
	int r = rd(ctx, "manifest.json", CD_IMAGE_JSON_MAX, &buf, &len, err);

	if (r < 0)
		return r == -ENOENT
		               ? cd_err_set(err, -CD_E_PARSE,
		                            "neither an OCI layout (oci-layout, index.json) nor "
		                            "a docker-archive (manifest.json)")
		               : r;
	top = load_json(buf, len, "manifest.json", err);
	free(buf);
	buf = NULL;
	if (!top)
		return -CD_E_PARSE;
	if (!json_is_array(top) || json_array_size(top) != 1) {
		r = cd_err_set(err, -CD_E_PARSE,
		               "manifest.json: not a list of one image (cordon "
		               "takes a docker-archive of one image)");
		goto out;
	}
	ent = json_array_get(top, 0);
	cname = json_string_value(json_object_get(ent, "Config"));
	if (!cname || cd_image_name_norm(cname, name, sizeof name, err) < 0 || !name[0]) {
		r = cd_err_set(err, -CD_E_PARSE,
		               "manifest.json: Config is not a plain relative name");
		goto out;
	}
	if ((r = rd(ctx, name, CD_IMAGE_JSON_MAX, &buf, &len, err)) < 0) {
		if (r == -ENOENT)
			r = cd_err_set(err, -CD_E_PARSE,
			               "manifest.json's Config '%s' is not in the "
			               "archive",
			               name);
		goto out;
	}
	cd_image_sha256(buf, len, d->digest);
	cfg = load_json(buf, len, "config", err);
	free(buf);
	if (!cfg) {
		r = -CD_E_PARSE;
		goto out;
	}
	r = docker_layers(ent, cfg, d, err);
	d->format = CD_IMAGE_DOCKER;
	snprintf(d->key, sizeof d->key, "docker-sha256-%s", d->digest + 7);
out:
	json_decref(cfg);
	json_decref(top);
	return r < 0 ? r : 0;
}

int cd_image_desc_read(cd_image_read_fn rd, void *ctx, struct cd_image_desc *ret,
                       struct cd_err *err)
{
	char *buf = NULL;
	size_t len;
	int r;

	memset(ret, 0, sizeof *ret);
	r = rd(ctx, "oci-layout", 4096, &buf, &len, err);
	free(buf);
	if (r == 0)
		return oci_read(rd, ctx, ret, err);
	if (r != -ENOENT)
		return r;
	return docker_read(rd, ctx, ret, err);
}
