/* cli-launch.h — the launcher `cordon run` and `cordon shell` share.
 *
 * One path for both: options, the gate's decision (and approval), the
 * plan, the sandbox, the audit records, egress.  The mode says what
 * differs; nothing else may.
 */
#ifndef CD_CLI_LAUNCH_H
#define CD_CLI_LAUNCH_H

#include <stdio.h>

struct cli_launch_mode {
	const char *name;       /* "run" or "shell", for messages */
	int tty;                /* a fresh pty of the sandbox's own as the command's stdio */
	void (*usage)(FILE *f); /* --help */
};

/* Parse argv (argv[0] is the subcommand) and run.  Returns the exit
 * status: the command's, 128+signal, 124 timeout, 125 refused or failed. */
int cli_launch(int argc, char **argv, const struct cli_launch_mode *m);

/* The run options' part of --help, shared by run and shell. */
void cli_launch_options_help(FILE *f);

/* The run's host ids into po: the caller's own, or for a root caller a
 * slot of root's range taken into *slot (idslot.h; the caller releases
 * it after the run).  Also used by the OCI runtime (cmd-oci-run.c). */
struct cd_plan_opts;
struct cd_idslot;
struct cd_err;
int launch_host_ids(struct cd_plan_opts *po, struct cd_idslot *slot, struct cd_err *err);

#endif
