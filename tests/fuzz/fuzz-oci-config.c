/* fuzz-oci-config.c — an OCI bundle's config.json on arbitrary bytes: the
 * parser either refuses with a message or returns a spec whose invariants
 * hold (a non-empty command, absolute normalized paths, at most the mount
 * cap, namespace paths absolute, a bounded seccomp profile that builds
 * into a filter or says why not), which then maps onto the plan's
 * options; it never crashes, hangs or leaks. */
#include "oci/oci-spec.h"
#include "sandbox/seccomp.h"
#include "util/path.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const char *cd_fuzz_name = "oci-config";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_path(const char *p)
{
	char norm[4096];

	if (!p || p[0] != '/' || cd_path_normalize(p, norm, sizeof norm) < 0 || strcmp(norm, p))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cd_oci_spec s;
	struct cd_err err;
	struct cd_plan_opts po;
	struct cd_limits lim;
	struct cd_plan_bind *binds = NULL;
	const char **tmpfs = NULL;
	size_t i;

	if (cd_oci_spec_parse((const char *)data, size, "/bundle", &s, &err) < 0) {
		if (!err.msg[0])
			abort(); /* every refusal says why */
		return 0;
	}
	if (!s.args || !s.args[0] || !s.args[0][0] || !s.annotations)
		abort();
	check_path(s.root);
	check_path(s.cwd);
	if (s.nmounts > CD_OCI_MAX_MOUNTS)
		abort();
	for (i = 0; i < s.nmounts; i++) {
		check_path(s.mounts[i].dest);
		if (s.mounts[i].use == CD_OCI_MNT_BIND)
			check_path(s.mounts[i].src);
		if (strcmp(s.mounts[i].dest, "/") == 0)
			abort();
	}
	for (i = 0; i < CD_OCI_NS_N; i++) {
		if (s.ns_path[i] && s.ns_path[i][0] != '/')
			abort();
	}
	if (s.seccomp) {
		struct cd_seccomp_prog prog;
		unsigned skipped;

		if (s.seccomp->nrules > CD_SECCOMP_PROFILE_MAX_RULES)
			abort();
		for (i = 0; i < s.seccomp->nrules; i++) {
			if (!s.seccomp->rules[i].name || s.seccomp->rules[i].nargs > 6)
				abort();
		}
		err.msg[0] = '\0';
		memset(&prog, 0, sizeof prog);
		if (cd_seccomp_build_profile(s.seccomp, &prog, &skipped, &err) < 0 && !err.msg[0])
			abort();
		cd_seccomp_prog_release(&prog);
	}
	memset(&po, 0, sizeof po);
	if (cd_oci_plan_opts(&s, &po, &lim, &binds, &tmpfs, &err) == 0 &&
	    (po.rootfs != s.root || lim.timeout_ms != 0 || lim.output_limit != 0))
		abort();
	free(binds);
	free(tmpfs);
	cd_oci_spec_free(&s);
	return 0;
}
