/* try-syscall — attempt named syscalls from inside a sandbox.
 *
 *   try-syscall NAME...     call each, print "NAME ok" or "NAME errno=EPERM"
 *   try-syscall nr:N...     call syscall number N with every argument -1
 *                           (a bad fd, pointer, flag set or length for each
 *                           refused call: tests/integration/9028 iterates
 *                           the filter's deny tables with it); prints
 *                           "nr:N ok" or "nr:N errno=EPERM"
 *   try-syscall --list      print every NAME with what the filter should do
 *
 * Exit status: 0 when no call returned its refusal errno (EPERM, or ENOSYS
 * for io_uring_*, landlock, clone3), 1 when at least one did ("looks
 * filtered"), 2 on a usage error.  A process killed by SIGSYS was refused by
 * a bad-arch kill.  Calls use harmless arguments (see syscall-probes.h), so
 * an allowed call fails with another errno or does nothing lasting; compare
 * with a run outside the sandbox, or with cordon's count of refusals, where
 * the kernel itself answers EPERM. */
#include "syscall-probes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *kind_name(enum probe_kind k)
{
	switch (k) {
	case PROBE_ALLOW:
		return "allow";
	case PROBE_DENY:
		return "deny";
	case PROBE_SILENT:
		return "deny-silent";
	case PROBE_INET:
		return "allow-with-inet";
	case PROBE_ABI:
		return "deny-abi";
	}
	return "?";
}

int main(int argc, char **argv)
{
	int i, filtered = 0;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc < 2) {
		fprintf(stderr, "usage: try-syscall NAME... | --list\n");
		return 2;
	}
	if (strcmp(argv[1], "--list") == 0) {
		size_t j;
		for (j = 0; j < PROBES_N; j++)
			printf("%s %s %s\n", probes[j].name, kind_name(probes[j].kind),
			       probes[j].deny_errno ? strerrorname_np(probes[j].deny_errno) : "-");
		return 0;
	}
	for (i = 1; i < argc; i++) {
		const struct probe *p = probe_find(argv[i]);
		long r;

		if (strncmp(argv[i], "nr:", 3) == 0) {
			char *end;
			long nr = strtol(argv[i] + 3, &end, 10);

			if (*end || nr < 0 || nr > 1023) {
				fprintf(stderr, "try-syscall: bad syscall number '%s'\n", argv[i]);
				return 2;
			}
			r = PR(syscall(nr, -1L, -1L, -1L, -1L, -1L, -1L));
			if (r >= 0)
				printf("%s ok\n", argv[i]);
			else
				printf("%s errno=%s\n", argv[i], strerrorname_np((int)-r));
			if (r == -EPERM || r == -ENOSYS)
				filtered = 1;
			continue;
		}
		if (!p) {
			fprintf(stderr, "try-syscall: unknown syscall probe '%s' (see --list)\n",
			        argv[i]);
			return 2;
		}
		r = p->fn();
		if (r >= 0) {
			printf("%s ok\n", p->name);
		} else {
			const char *e = strerrorname_np((int)-r);
			if (e)
				printf("%s errno=%s\n", p->name, e);
			else
				printf("%s errno=%ld\n", p->name, -r);
			if (p->deny_errno && -r == p->deny_errno)
				filtered = 1;
		}
	}
	return filtered;
}
