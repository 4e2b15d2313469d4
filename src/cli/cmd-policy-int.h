/* cmd-policy-int.h — what the files of `cordon policy` share:
 * cmd-policy.c (usage, the request options, check and explain),
 * cmd-policy-lint.c (lint, test) and cmd-policy-review.c (diff, review).
 * cmd-policy-matrix.c has its own header. */
#ifndef CD_CMD_POLICY_INT_H
#define CD_CMD_POLICY_INT_H

#include <getopt.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

struct cd_policy;

enum {
	EXIT_DENY = 1,
	EXIT_APPROVAL = 3,
	EXIT_NOPOLICY = 4,
};

/* --json and --help: the options of lint, test and diff. */
extern const struct option policy_json_opts[];

/* Set by policy_optval() when an option lacked its value. */
extern int policy_opt_missing;

/* cmd-policy.c */
void policy_usage_sub(const char *sub, FILE *f);
const char *policy_optval(int argc, char **argv, int *i, const char *name);
struct cd_policy *policy_load(const char *file);
int policy_print_json(json_t *o, int rc);
int policy_take_number(const char **s, uint64_t *ret);

/* cmd-policy-lint.c */
int policy_lint_cmd(int argc, char **argv);
int policy_test_cmd(int argc, char **argv);

/* cmd-policy-review.c */
int policy_diff_cmd(int argc, char **argv);
int policy_review_cmd(int argc, char **argv);

#endif
