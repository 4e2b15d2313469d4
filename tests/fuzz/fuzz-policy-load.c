/* fuzz-policy-load.c — the policy loader on arbitrary bytes: it either
 * loads (and then decides and self-tests without crashing) or fails with a
 * message; it never crashes, hangs or leaks. */
#include "policy/policy.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

const char *cd_fuzz_name = "policy-load";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void sink(int pass, const char *desc, void *ctx)
{
	(void)pass;
	(void)desc;
	(void)ctx;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cd_policy *p = NULL;
	struct cd_err err;
	struct cd_request q;
	struct cd_decision d;
	const char *paths[1] = { "/repo/a/../b" };
	size_t failed;

	if (cd_policy_load_buf("fuzz.yaml", (const char *)data, size, &p, &err) < 0)
		return 0;
	cd_request_init(&q);
	q.agent = "a";
	q.tool = "t";
	q.action = CD_ACTION_READ;
	q.paths = paths;
	q.npaths = 1;
	q.host = "a.example.com";
	q.port = 443;
	(void)cd_policy_decide(p, &q, &d, NULL);
	(void)cd_policy_test(p, sink, NULL, &failed);
	cd_policy_free(p);
	return 0;
}
