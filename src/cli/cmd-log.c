/* cmd-log.c — `cordon log`: placeholder until the audit module lands. */
#include "cli.h"

int cmd_log(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	cli_errorf("the audit log is not built yet");
	return CD_EXIT_CORDON;
}
