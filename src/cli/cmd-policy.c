/* cmd-policy.c — placeholder until the policy module lands. */
#include "cli.h"

int cmd_policy(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	cli_errorf("the grant matrix is not built yet");
	return CD_EXIT_CORDON;
}
