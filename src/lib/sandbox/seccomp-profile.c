/* seccomp-profile.c — a container's own seccomp profile as a filter of
 * its own, stacked on cordon's allowlist (see seccomp.h).
 *
 * Why a second filter rather than merging the two: the kernel runs every
 * filter of the chain and applies the most restrictive action (kill, trap,
 * errno, notify, trace, log, allow, in that order), so the intersection
 * is the kernel's, exact for arguments too, and no rule of the profile can
 * reach past cordon's.  cordon's filter is installed first (its listener
 * handed over), then this one.
 *
 * Trust: the profile comes from config.json (untrusted); oci-spec.c has
 * bounded and checked it.  A rule whose action is the default is dropped
 * (libseccomp refuses it and it changes nothing); rules with several
 * conditions on one argument are added one per condition (any of them
 * matches), as runc does; otherwise the conditions are all required.
 */
#include "seccomp.h"

#include <errno.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint32_t action(enum cd_seccomp_act a, int errno_ret)
{
	switch (a) {
	case CD_SCP_ALLOW:
		return SCMP_ACT_ALLOW;
	case CD_SCP_ERRNO:
		return SCMP_ACT_ERRNO((uint16_t)errno_ret);
	case CD_SCP_KILL_THREAD:
		return SCMP_ACT_KILL_THREAD;
	case CD_SCP_KILL_PROCESS:
		return SCMP_ACT_KILL_PROCESS;
	case CD_SCP_TRAP:
		return SCMP_ACT_TRAP;
	case CD_SCP_LOG:
		return SCMP_ACT_LOG;
	}
	return SCMP_ACT_KILL_PROCESS;
}

static int add_rule(scmp_filter_ctx ctx, const struct cd_seccomp_rule *r, uint32_t act, int nr)
{
	struct scmp_arg_cmp c[6];
	unsigned i, j, seen = 0;
	int rc, repeat = 0;

	for (i = 0; i < r->nargs; i++) {
		c[i].arg = r->args[i].index;
		c[i].op = (enum scmp_compare)r->args[i].op;
		c[i].datum_a = r->args[i].value;
		c[i].datum_b = r->args[i].value2;
		if (seen & (1u << r->args[i].index))
			repeat = 1;
		seen |= 1u << r->args[i].index;
	}
	if (!repeat)
		return seccomp_rule_add_array(ctx, act, nr, r->nargs, c);
	for (j = 0; j < r->nargs; j++) {
		rc = seccomp_rule_add_array(ctx, act, nr, 1, &c[j]);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int cd_seccomp_build_profile(const struct cd_seccomp_profile *pr, struct cd_seccomp_prog *ret,
                             unsigned *ret_skipped, struct cd_err *err)
{
	uint32_t def = action(pr->def, pr->def_errno), act;
	struct cd_seccomp_prog p;
	scmp_filter_ctx ctx;
	size_t i;
	int nr, r = 0;

	*ret_skipped = 0;
	memset(&p, 0, sizeof p);
	ctx = seccomp_init(def);
	if (!ctx)
		return cd_err_set(err, -ENOMEM, "seccomp profile: init failed");
	/* Calls of another ABI: the profile's default (cordon's filter
	 * refuses them anyway). */
	r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, def);
	for (i = 0; r >= 0 && i < pr->nrules; i++) {
		const struct cd_seccomp_rule *ru = &pr->rules[i];

		act = action(ru->act, ru->errno_ret);
		if (act == def)
			continue;
		nr = seccomp_syscall_resolve_name(ru->name);
		if (nr == __NR_SCMP_ERROR) {
			(*ret_skipped)++;
			continue;
		}
		r = add_rule(ctx, ru, act, nr);
		if (r < 0)
			cd_err_sys(err, r, "seccomp profile: the rule for %s", ru->name);
	}
	if (r >= 0)
		r = cd_seccomp_export(ctx, &p, err);
	seccomp_release(ctx);
	if (r < 0)
		return r;
	*ret = p;
	return 0;
}
