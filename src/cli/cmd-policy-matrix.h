/* cmd-policy-matrix.h — `cordon policy matrix`, called by cmd-policy.c. */
#ifndef CD_CMD_POLICY_MATRIX_H
#define CD_CMD_POLICY_MATRIX_H

#include <stdio.h>

/* argv[0] is "matrix".  Exit 0 printed, 1 unknown --agent, 2 usage, 4 the
 * policy did not load. */
int policy_matrix_cmd(int argc, char **argv);
void policy_matrix_usage(FILE *f);

#endif
