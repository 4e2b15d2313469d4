/* cmd-run.c — placeholder, replaced by the sandbox front end. */
#include "cli.h"

int cmd_run(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return CD_EXIT_CORDON;
}
