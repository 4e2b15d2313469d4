/* cmd-run.c — `cordon run [options] -- CMD [ARG...]`: the sandbox front end.
 *
 * Only the help text lives here: the options, the decision, the plan, the
 * sandbox and the records are the launcher's (cli-launch.c), shared with
 * `cordon shell`.
 */
#include "cli.h"
#include "cli-launch.h"

static void usage(FILE *f)
{
	fputs("usage: cordon run [OPTIONS] -- CMD [ARG...]\n"
	      "\n"
	      "Run CMD in a throwaway sandbox: new user, mount, pid, net, ipc, uts and cgroup\n"
	      "namespaces; a read-only view of the system and of the current directory; one\n"
	      "writable scratch directory (/tmp, also $HOME and $TMPDIR); loopback only; no\n"
	      "capabilities; seccomp and Landlock as second walls; memory, pids, time and\n"
	      "output caps; a clean environment.  Every run is in the audit log, decided and\n"
	      "recorded before it starts.  Nothing of the run remains afterwards.\n"
	      "\n",
	      f);
	cli_launch_options_help(f);
	fputs("\n"
	      "Exit status: the command's, or 128+signal; 124 timeout; 125 cordon refused or\n"
	      "failed (the reason is on stderr); 126 not executable; 127 not found.\n",
	      f);
}

int cmd_run(int argc, char **argv)
{
	static const struct cli_launch_mode mode = { "run", 0, usage };

	return cli_launch(argc, argv, &mode);
}
