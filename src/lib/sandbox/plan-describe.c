/* plan-describe.c — the plan as JSON text, for --dry-run (see plan.h).
 *
 * Reads a built plan and changes nothing; the caller frees the string.
 * A secret environment entry appears as its name only, never its value.
 */
#include "plan.h"

#include "quotas.h"

#include <jansson.h>
#include <string.h>

static const char *kind_name(enum cd_mount_kind k)
{
	switch (k) {
	case CD_MNT_BIND:
		return "bind";
	case CD_MNT_TMPFS:
		return "tmpfs";
	case CD_MNT_PROC:
		return "proc";
	case CD_MNT_SYMLINK:
		return "symlink";
	case CD_MNT_FILE:
		return "file";
	case CD_MNT_DIR:
		return "dir";
	case CD_MNT_MASK:
		return "mask";
	case CD_MNT_REMOUNT_RO:
		return "remount-ro";
	case CD_MNT_DEVPTS:
		return "devpts";
	case CD_MNT_OVERLAY:
		return "overlay";
	case CD_MNT_HOLD:
		return "hold";
	}
	return "?";
}

json_t *cd_plan_image_json(const struct cd_plan *p)
{
	/* "FORMAT DIGEST CACHE FILE": the file may hold spaces. */
	const char *a = p->image ? strchr(p->image, ' ') : NULL, *b = a ? strchr(a + 1, ' ') : NULL;
	const char *c = b ? strchr(b + 1, ' ') : NULL;

	if (!c)
		return json_null();
	return json_pack("{s:s%,s:s%,s:s%,s:s,s:s}", "format", p->image, (size_t)(a - p->image),
	                 "digest", a + 1, (size_t)(b - a - 1), "cache", b + 1, (size_t)(c - b - 1),
	                 "file", c + 1, "rootfs", p->rootfs ? p->rootfs : "");
}

char *cd_plan_describe(const struct cd_plan *p)
{
	json_t *o = json_object(), *argv = json_array(), *env = json_array(),
	       *mounts = json_array(), *lim = json_object();
	char *s = NULL;
	size_t i;

	if (!o || !argv || !env || !mounts || !lim)
		goto out;
	for (i = 0; i < p->argc; i++)
		json_array_append_new(argv, json_string(p->argv[i]));
	for (i = 0; i < p->envc; i++) {
		if (p->env_secret[i]) {
			const char *eq = strchr(p->envp[i], '=');
			json_array_append_new(env,
			                      json_stringn(p->envp[i], (size_t)(eq - p->envp[i])));
		} else {
			json_array_append_new(env, json_string(p->envp[i]));
		}
	}
	for (i = 0; i < p->nmounts; i++) {
		const struct cd_mount *m = &p->mounts[i];
		json_t *e = json_object();

		json_object_set_new(e, "kind", json_string(kind_name(m->kind)));
		json_object_set_new(e, "dest", json_string(m->dest));
		if (m->src)
			json_object_set_new(e, "src", json_string(m->src));
		if (m->kind == CD_MNT_BIND || m->kind == CD_MNT_TMPFS)
			json_object_set_new(e, "writable", json_boolean(m->flags & CD_MNT_RW));
		if (m->kind == CD_MNT_TMPFS)
			json_object_set_new(e, "size", json_integer((json_int_t)m->size));
		if (m->kind == CD_MNT_OVERLAY) {
			json_object_set_new(e, "layer_size", json_integer((json_int_t)m->size));
			json_object_set_new(e, "layer_inodes", json_integer((json_int_t)m->inodes));
		}
		json_array_append_new(mounts, e);
	}
	json_object_set_new(lim, "memory", json_integer((json_int_t)p->limits.memory));
	json_object_set_new(lim, "pids", json_integer((json_int_t)p->limits.pids));
	json_object_set_new(lim, "cpu_ms", json_integer((json_int_t)p->limits.cpu_ms));
	json_object_set_new(lim, "timeout_ms", json_integer((json_int_t)p->limits.timeout_ms));
	json_object_set_new(lim, "output_limit", json_integer((json_int_t)p->limits.output_limit));
	json_object_set_new(lim, "scratch_size", json_integer((json_int_t)p->limits.scratch_size));
	if (cd_quotas_json(&p->limits, lim) < 0)
		goto out;
	json_object_set_new(o, "profile", json_string(p->profile));
	json_object_set_new(o, "argv", argv);
	json_object_set_new(o, "cwd", json_string(p->cwd));
	json_object_set_new(o, "env", env);
	json_object_set_new(o, "uid", json_integer(p->uid));
	json_object_set_new(o, "gid", json_integer(p->gid));
	json_object_set_new(o, "host_uid", json_integer((json_int_t)p->host_uid));
	json_object_set_new(o, "host_gid", json_integer((json_int_t)p->host_gid));
	json_object_set_new(o, "id_slot", p->idmap ? json_integer(p->id_slot) : json_null());
	json_object_set_new(o, "idmapped_binds", json_boolean(p->idmap));
	json_object_set_new(o, "hostname", json_string(p->hostname));
	json_object_set_new(o, "mounts", mounts);
	json_object_set_new(o, "limits", lim);
	json_object_set_new(o, "landlock_abi", json_integer(p->landlock_abi));
	json_object_set_new(o, "egress_proxy_port", json_integer(p->proxy_port));
	if (p->no_inet)
		json_object_set_new(o, "inet_sockets", json_false());
	if (p->seccomp_spec.len)
		json_object_set_new(o, "seccomp_spec_skipped",
		                    json_integer((json_int_t)p->seccomp_spec_skipped));
	json_object_set_new(o, "seccomp", json_boolean(p->walls & CD_WALL_SECCOMP));
	json_object_set_new(o, "tty", json_boolean(p->tty));
	if (p->rootfs)
		json_object_set_new(o, "rootfs", json_string(p->rootfs));
	if (p->image)
		json_object_set_new(o, "image", cd_plan_image_json(p));
	argv = env = mounts = lim = NULL;
	s = json_dumps(o, JSON_INDENT(2) | JSON_ENSURE_ASCII);
out:
	json_decref(argv);
	json_decref(env);
	json_decref(mounts);
	json_decref(lim);
	json_decref(o);
	return s;
}
