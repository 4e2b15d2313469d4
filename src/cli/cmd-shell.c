/* cmd-shell.c — `cordon shell [options] [-- CMD [ARG...]]`: the same
 * sandbox as `cordon run`, interactive.
 *
 * The command gets a fresh pseudo-terminal of the sandbox's own devpts as
 * its stdin, stdout, stderr and controlling terminal; cordon relays the
 * person's terminal (raw mode, restored on every way out) to its
 * controller side.  The host terminal's fd never enters the sandbox, so
 * TIOCSTI from inside can only reach the sandbox's own pty (THREATS row 1).
 * Everything else — options, decision, plan, records — is the launcher's.
 */
#include "cli.h"
#include "cli-launch.h"

static void usage(FILE *f)
{
	fputs("usage: cordon shell [OPTIONS] [-- CMD [ARG...]]\n"
	      "\n"
	      "An interactive shell (default: your $SHELL when it is visible inside, else\n"
	      "/bin/sh; -i) in the same throwaway sandbox as `cordon run`: same options,\n"
	      "profile, walls, limits, policy decision and audit records.  The shell gets a\n"
	      "fresh pseudo-terminal of the sandbox's own (never your terminal); cordon\n"
	      "relays your terminal to it in raw mode and passes on window-size changes.\n"
	      "What was typed and printed is recorded (capped) with the run's audit\n"
	      "records: `cordon log show --run ID --replay` prints it back, --asciicast\n"
	      "instead of --replay exports it for `asciinema play`.  Without\n"
	      "--timeout (and without --policy) the wall clock is 1h instead of 60s.\n"
	      "\n",
	      f);
	cli_launch_options_help(f);
	fputs("\n"
	      "Exit status: the shell's, or 128+signal; 124 timeout; 125 cordon refused or\n"
	      "failed (the reason is on stderr).\n",
	      f);
}

int cmd_shell(int argc, char **argv)
{
	static const struct cli_launch_mode mode = { "shell", 1, usage };

	return cli_launch(argc, argv, &mode);
}
