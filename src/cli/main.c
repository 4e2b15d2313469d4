/* main.c — cordon's entry point: the subcommand table and shared CLI
 * plumbing.  Everything a subcommand decides lives in src/lib; this file
 * only dispatches. */
#include "cli.h"
#include "cli-warm.h"

#include "util/buf.h"
#include "util/clock-time.h"
#include "sandbox/userns-why.h"

#include <errno.h>
#include <pwd.h>
#include <time.h>
#include <fcntl.h>
#include <stdarg.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

static const struct cd_cmd commands[] = {
	{ "run", cmd_run, "run a command in a throwaway sandbox" },
	{ "cache", cmd_cache, "list or clear the package caches of --cache" },
	{ "shell", cmd_shell, "an interactive shell in the same sandbox, on a pty of its own" },
	{ "log", cmd_log, "show, export, verify the audit log; confirm masked values" },
	{ "policy", cmd_policy,
	  "the grant matrix: lint, check, explain, test, diff, review, matrix" },
	{ "proxy", cmd_proxy, "egress proxy: allowlisted destinations, every attempt logged" },
	{ "grant", cmd_grant, "break-glass grants: add, list, revoke temporary grants" },
	{ "delegate", cmd_delegate, "hand part of an agent's grants to a sub-agent" },
	{ "approvals", cmd_approvals, "list, show, approve, deny, sample held calls" },
	{ "serve", cmd_serve, "a web console: approve or deny held calls in a browser" },
	{ "inventory", cmd_inventory, "what each MCP server really offers, per agent" },
	{ "proposals", cmd_proposals,
	  "review, apply or reject the file changes of --propose runs" },
	{ "mcp", cmd_mcp, "MCP gateway: granted tools only, every call decided and logged" },
	{ "doctor", cmd_doctor, "what this host enforces, and the fix for each gap" },
	{ "completion", cmd_completion, "print a completion script for bash, zsh or fish" },
};

const struct cd_cmd *cli_commands(size_t *ret_n)
{
	*ret_n = sizeof commands / sizeof commands[0];
	return commands;
}

static char prog[64] = "cordon";

void cli_set_prog(const char *sub)
{
	int n = snprintf(prog, sizeof prog, "cordon %s", sub);
	if (n < 0 || (size_t)n >= sizeof prog)
		memcpy(prog, "cordon", sizeof "cordon");
}

static void vmsg(const char *kind, const char *fmt, va_list ap)
{
	char raw[1024];
	struct cd_buf b;
	int n = vsnprintf(raw, sizeof raw, fmt, ap);

	if (n < 0)
		return;
	if ((size_t)n >= sizeof raw)
		n = sizeof raw - 1;
	cd_buf_init(&b, 4 * sizeof raw);
	if (cd_buf_escape(&b, raw, (size_t)n) == 0)
		fprintf(stderr, "%s: %s%s\n", prog, kind, b.data ? b.data : "");
	else
		fprintf(stderr, "%s: %s(message could not be shown)\n", prog, kind);
	cd_buf_release(&b);
}

const char *cli_login_name(void)
{
	struct passwd *pw = getpwuid(getuid());
	return pw && pw->pw_name ? pw->pw_name : "unknown";
}

void cli_time_utc(int64_t t, char *out, size_t n)
{
	if (!t)
		snprintf(out, n, "-");
	else
		cd_time_format(t, out, n);
}

void cli_size_human(uint64_t v, char *out, size_t n)
{
	static const char unit[] = "KMGT";
	unsigned u = 0;
	uint64_t d = 1024;
	int r;

	if (v < 1024) {
		r = snprintf(out, n, "%llu bytes", (unsigned long long)v);
	} else {
		while (u + 1 < sizeof unit - 1 && v >= d * 1024) {
			d *= 1024;
			u++;
		}
		if (v % d == 0)
			r = snprintf(out, n, "%llu%c", (unsigned long long)(v / d), unit[u]);
		else
			r = snprintf(out, n, "%.1f%c", (double)v / (double)d, unit[u]);
	}
	if (r < 0 && n)
		out[0] = '\0';
}

void cli_errorf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void cli_warnf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: cordon COMMAND [OPTIONS] ...\n\n"
	           "A sandbox and least-privilege gateway for AI agents with tool access.\n\n"
	           "Commands:\n");
	for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nRun 'cordon COMMAND --help' for a command's options; see cordon(1).\n");
}

/* A cordon started with fd 0, 1 or 2 closed would hand its own pipes or
 * sockets out under those numbers; give them /dev/null first. */
static void ensure_stdio(void)
{
	int fd;

	for (fd = 0; fd < 3; fd++) {
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
			int n = open("/dev/null", O_RDWR);
			if (n < 0)
				_exit(CD_EXIT_CORDON);
			if (n != fd) {
				dup2(n, fd);
				close(n);
			}
		}
	}
}

int main(int argc, char **argv)
{
	const char *v;
	size_t i;

	ensure_stdio();
	/* A multi-call binary: as `cordon-oci` (a link beside it) it is the
	 * OCI runtime, with runc's command line (cmd-oci.c). */
	v = argc > 0 ? strrchr(argv[0], '/') : NULL;
	if (argc > 0 && strcmp(v ? v + 1 : argv[0], "cordon-oci") == 0) {
		cli_set_prog("oci");
		return cmd_oci(argc, argv);
	}
	/* Tests only: the sysctls that name why a user namespace was refused
	 * are read below this directory instead of /proc (a message is all it
	 * changes; see userns-why.h). */
	v = getenv("CORDON_TEST_PROC_ROOT");
	if (v && *v && cd_userns_set_proc_root(v) < 0) {
		cli_errorf("CORDON_TEST_PROC_ROOT is too long");
		return CD_EXIT_USAGE;
	}

	if (argc < 2) {
		usage(stderr);
		return CD_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return CD_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("cordon %s\n", CORDON_VERSION);
		return CD_EXIT_OK;
	}
	for (i = 0; i < sizeof commands / sizeof commands[0]; i++) {
		if (strcmp(argv[1], commands[i].name) == 0) {
			cli_set_prog(commands[i].name);
			return commands[i].fn(argc - 1, argv + 1);
		}
	}
	/* Not in the table: started by cordon run, never typed (cli-warm.h). */
	if (strcmp(argv[1], "service") == 0) {
		cli_set_prog("service");
		return cmd_service(argc - 1, argv + 1);
	}
	cli_errorf("unknown command '%s' (see 'cordon --help')", argv[1]);
	return CD_EXIT_USAGE;
}
