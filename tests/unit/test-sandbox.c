/* test-sandbox.c — the launcher through its library interface: the
 * before_exec hook gates the command (no record, no run), exit statuses and
 * hashes come back in the result. */
#include "../tap.h"

#include "sandbox/plan.h"
#include "sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static int hook_calls;

static int refuse_hook(void *ctx, char *msg, size_t msglen)
{
	(void)ctx;
	hook_calls++;
	snprintf(msg, msglen, "test: the intent could not be written");
	return -1;
}

static int allow_hook(void *ctx, char *msg, size_t msglen)
{
	(void)ctx;
	(void)msg;
	(void)msglen;
	hook_calls++;
	return 0;
}

static int run(const char *dir, const char *script, int (*hook)(void *, char *, size_t),
               struct cd_result *res)
{
	char *argv[] = { "sh", "-c", (char *)script, NULL };
	struct cd_plan_bind bind = { dir, "/out", 1 };
	struct cd_plan_opts o;
	struct cd_plan *p = NULL;
	struct cd_sandbox_io io;
	struct cd_err err = { 0, "" };
	char id[CD_RUN_ID_LEN + 1];
	int null = open("/dev/null", O_RDWR | O_CLOEXEC), r;

	memset(&o, 0, sizeof o);
	o.argv = argv;
	o.host_cwd = dir;
	o.binds = &bind;
	o.nbinds = 1;
	o.host_uid = geteuid();
	o.host_gid = getegid();
	o.allow_degraded = 1;
	o.skip_socket_scan = 1;
	r = cd_plan_build(&o, &p, &err);
	if (r < 0) {
		diag("plan: %s", err.msg);
		close(null);
		return r;
	}
	cd_run_id_new(id);
	memset(&io, 0, sizeof io);
	io.stdin_fd = null;
	io.stdout_fd = null;
	io.stderr_fd = null;
	io.signal_fd = -1;
	io.before_exec = hook;
	r = cd_sandbox_run(p, id, &io, res, &err);
	cd_plan_free(p);
	close(null);
	return r;
}

int main(void)
{
	char tmpl[] = "/tmp/cordon-test-sandbox.XXXXXX";
	char marker[600];
	struct cd_result res;
	struct stat st;
	char *dir;
	int n;

	tap_start(60);
	dir = mkdtemp(tmpl);
	if (!dir) {
		tap_skip("no temp dir");
		return tap_done();
	}
	chmod(dir, 0777);
	n = snprintf(marker, sizeof marker, "%s/ran", dir);
	if (n < 0 || (size_t)n >= sizeof marker)
		return 1;

	hook_calls = 0;
	run(dir, "touch /out/ran", refuse_hook, &res);
	is_int(hook_calls, 1, "the hook is called once");
	is_int(res.reason, CD_REASON_SETUP_ERROR, "a refusing hook is a setup error");
	is_int(res.exit_code, 125, "... with exit code 125");
	ok(strstr(res.error, "intent could not be written") != NULL,
	   "... and the hook's reason (%s)", res.error);
	ok(stat(marker, &st) < 0 && errno == ENOENT, "the command never ran: no record, no run");

	hook_calls = 0;
	is_int(run(dir, "touch /out/ran; exit 7", allow_hook, &res), 0, "an allowing hook runs");
	is_int(hook_calls, 1, "the hook is called once");
	ok(stat(marker, &st) == 0, "the command ran after the hook");
	is_int(res.reason, CD_REASON_EXITED, "reason exited");
	is_int(res.exit_code, 7, "the command's exit code");
	is_str(res.stdin_sha256, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	       "an empty stdin hashes as empty");
	unlink(marker);

	run(dir, "kill -9 $$", NULL, &res);
	is_int(res.reason, CD_REASON_SIGNALED, "a killed command is signaled");
	is_int(res.exit_code, 137, "128+9");
	rmdir(dir);
	return tap_done();
}
