/* cmd-serve.c — `cordon serve [login NAME]`: the web console for the
 * people in the loop (console/console.h).  `serve` listens, prints a
 * one-time login link for the operator and serves until SIGINT or
 * SIGTERM; `serve login NAME` prints a one-time link for an approver of
 * the policy.  Options, messages and exit codes are all this file does.
 *
 * Exit statuses: 0 done (stopped by a signal), 1 refused (NAME may not
 * approve), 2 usage, 125 the console could not start (address, TLS, state
 * database, audit log, libmicrohttpd). */
#include "cli.h"
#include "proposal/proposal.h"

#include "cli-audit.h"

#include "console/console.h"
#include "gate/approval-sign.h"
#include "http/httpd.h"
#include "mask/mask.h"
#include "policy/policy.h"
#include "store/state.h"
#include "store/store.h"
#include "util/num.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
        "usage: cordon serve [--listen ADDR:PORT] [--tls-cert FILE --tls-key FILE]\n"
        "                    [--origin URL] [--policy FILE] [--state PATH] [--audit PATH]\n"
        "                    [--notify-webhook URL]... [--notify-key FILE] [--sign-key FILE]\n"
        "                    [--trust-proxy-header NAME]\n"
        "       cordon serve login NAME [--listen ADDR:PORT | --origin URL] [--policy FILE]\n"
        "                    [--ttl SECONDS] [--state PATH]\n"
        "\n"
        "A web console for the people in the loop: the calls held for approval\n"
        "by any cordon process on this host (runs, MCP sessions) appear live, with\n"
        "their agent, task, tool, action, arguments (masked as the audit log masks\n"
        "them), grant, binding SHA-256 and deadline, and Approve and Deny buttons\n"
        "that decide exactly as 'cordon approvals approve|deny' does: the approver\n"
        "must be among the policy's approvers.people and never the requesting agent,\n"
        "and every decision is in the audit log.  The audit log is there too:\n"
        "newest first, filtered by agent, run, kind, decision, time and text, a\n"
        "page per run, and the chain's verification ('cordon log verify') on a\n"
        "button; and the proposals of 'run --propose', their diffs, and Apply and\n"
        "Reject buttons that decide as 'cordon proposals apply|reject' does; and the\n"
        "grants: the agents x tools matrix, re-certification ('policy review'), and\n"
        "the live break-glass and delegated grants with a Revoke button; and the\n"
        "MCP tool definitions waiting for approval ('cordon mcp pins approve').\n"
        "\n"
        "'serve' listens on --listen (default 127.0.0.1:8750; port 0 picks a free\n"
        "one) and prints a one-time login link for the operator (single use, valid\n"
        "10 minutes, stored hashed in the state database).  An address that is not\n"
        "loopback is refused without --tls-cert and --tls-key (PEM).  --origin URL\n"
        "is the scheme://host:port browsers use when a name or a proxy stands in\n"
        "front.  'serve login NAME' prints a link for approver NAME (checked\n"
        "against --policy's approvers.people) for the console at --listen or\n"
        "--origin over the same state database; without either, for the console\n"
        "serving that state database (STATE.console holds its origin).\n"
        "--notify-webhook URL (repeatable, up to 8) posts a JSON message (Slack's\n"
        "'text', the event, a link) when a call is held and when a break-glass\n"
        "grant is made or used; never the call's arguments.  Each message is signed:\n"
        "X-Cordon-Signature: t=UNIX,v1=HMAC-SHA256(key, 'UNIX.BODY') in hex, the key\n"
        "the 32 bytes of --notify-key FILE (default webhook.key in cordon's\n"
        "configuration directory, made when absent).  Sent off the decision path,\n"
        "three tries; a failure is recorded (console.webhook), never blocking.\n"
        "--sign-key FILE (made by 'cordon approvals keygen') signs every decision\n"
        "made in the console; list its public key under the policy's\n"
        "approvers.consoles, which trusts this console to have authenticated the\n"
        "person (needed for approvers with a key in approvers.keys, and with a\n"
        "postgresql:// state store).\n"
        "--trust-proxy-header NAME (e.g. X-Forwarded-User): behind an auth proxy on\n"
        "this host, a request from loopback carrying NAME: PERSON is PERSON's, when\n"
        "PERSON is among approvers.people (else 403, recorded); from any other peer\n"
        "the header is ignored.  The proxy must set it itself, never pass a\n"
        "client's; anyone who reaches loopback here can send it.\n"
        "Sessions are kept hashed in the state database (MACed with\n"
        "console-session.key in cordon's configuration directory): they outlive a\n"
        "restart; logging out ends one.\n"
        "Exit 0 stopped by a signal, 1 refused, 2 usage, 125 could not start.\n";

struct sopts {
	const char *listen, *cert, *key, *origin, *policy, *state, *audit, *sign_key, *proxy_header;
	const char *hooks[CD_CONSOLE_WEBHOOKS_MAX], *hook_key;
	int listen_given;
	size_t nhooks;
	int64_t ttl;
};

enum {
	OPT_LISTEN = 256,
	OPT_CERT,
	OPT_KEY,
	OPT_ORIGIN,
	OPT_POLICY,
	OPT_STATE,
	OPT_AUDIT,
	OPT_TTL,
	OPT_HOOK,
	OPT_HOOK_KEY,
	OPT_SIGN_KEY,
	OPT_PROXY_HEADER,
	OPT_HELP,
};

static const struct option long_opts[] = {
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "tls-cert", required_argument, NULL, OPT_CERT },
	{ "tls-key", required_argument, NULL, OPT_KEY },
	{ "origin", required_argument, NULL, OPT_ORIGIN },
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "state", required_argument, NULL, OPT_STATE },
	{ "audit", required_argument, NULL, OPT_AUDIT },
	{ "ttl", required_argument, NULL, OPT_TTL },
	{ "notify-webhook", required_argument, NULL, OPT_HOOK },
	{ "notify-key", required_argument, NULL, OPT_HOOK_KEY },
	{ "sign-key", required_argument, NULL, OPT_SIGN_KEY },
	{ "trust-proxy-header", required_argument, NULL, OPT_PROXY_HEADER },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};
const struct option *const cli_opts_serve = long_opts; /* cordon completion */

/* 0 parsed, 1 --help, -1 usage error (reported). */
static int parse(int argc, char **argv, struct sopts *o)
{
	uint64_t v;
	int c;

	memset(o, 0, sizeof *o);
	o->listen = "127.0.0.1:8750";
	optind = 1;
	opterr = 0;
	while ((c = cli_getopt(argc, argv, "h", long_opts, CD_EXIT_USAGE)) != -1) {
		switch (c) {
		case OPT_LISTEN:
			o->listen = optarg;
			o->listen_given = 1;
			break;
		case OPT_CERT:
			o->cert = optarg;
			break;
		case OPT_KEY:
			o->key = optarg;
			break;
		case OPT_ORIGIN:
			o->origin = optarg;
			break;
		case OPT_SIGN_KEY:
			o->sign_key = optarg;
			break;
		case OPT_PROXY_HEADER:
			if (!*optarg || strlen(optarg) > 64 ||
			    strspn(optarg, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			                   "0123456789-") != strlen(optarg)) {
				cli_errorf(
				        "--trust-proxy-header is a header name (letters, digits, "
				        "'-')");
				return -1;
			}
			o->proxy_header = optarg;
			break;
		case OPT_POLICY:
			o->policy = optarg;
			break;
		case OPT_STATE:
			o->state = optarg;
			break;
		case OPT_AUDIT:
			o->audit = optarg;
			break;
		case OPT_TTL:
			if (cd_parse_u64(optarg, strlen(optarg), 86400, &v) < 0 || v == 0) {
				cli_errorf("--ttl is a number of seconds from 1 to 86400");
				return -1;
			}
			o->ttl = (int64_t)v;
			break;
		case OPT_HOOK:
			if (o->nhooks == CD_CONSOLE_WEBHOOKS_MAX) {
				cli_errorf("at most %d --notify-webhook", CD_CONSOLE_WEBHOOKS_MAX);
				return -1;
			}
			o->hooks[o->nhooks++] = optarg;
			break;
		case OPT_HOOK_KEY:
			o->hook_key = optarg;
			break;
		case 'h':
		case OPT_HELP:
			fputs(usage, stdout);
			return 1;
		default:
			cli_errorf("unknown or incomplete option '%s' (see --help)",
			           argv[optind - 1]);
			return -1;
		}
	}
	if (o->origin && strncmp(o->origin, "http://", 7) && strncmp(o->origin, "https://", 8)) {
		cli_errorf("--origin is http://HOST:PORT or https://HOST:PORT");
		return -1;
	}
	return 0;
}

/* A link for NAME (`serve login NAME`, or the operator at start). */
static int session_key(unsigned char key[CD_CONSOLE_SESSION_KEY_LEN]);

/* The link is MACed under the console's session key (this user's
 * console-session.key), which the console checks when it is used. */
static int print_link(struct cd_state *st, const char *origin, const char *person, int64_t ttl)
{
	struct cd_err err = { 0, "" };
	unsigned char key[CD_CONSOLE_SESSION_KEY_LEN];
	char link[512];
	int r;

	if (session_key(key) < 0)
		return CD_EXIT_CORDON;
	r = cd_console_login_link(st, key, origin, person, (int64_t)time(NULL), ttl, link,
	                          sizeof link, &err);
	sodium_memzero(key, sizeof key);
	if (r < 0) {
		cli_errorf("login link: %s", err.msg);
		return CD_EXIT_CORDON;
	}
	printf("%s\n", link);
	fflush(stdout);
	return CD_EXIT_OK;
}

/* The file a running console leaves beside a state database file
 * (STATE.console: its origin and pid), so that `serve login NAME` finds it
 * without --listen.  -1 for a store URI (no directory to look in). */
static int where_file(const char *state_opt, char *out, size_t outlen)
{
	char st[4096];

	if (cli_state_path(state_opt, st, sizeof st) < 0 || cd_store_is_uri(st))
		return -1;
	return snprintf(out, outlen, "%s.console", st) < (int)outlen ? 0 : -1;
}

static void where_write(const char *state_opt, const char *origin)
{
	char path[4200], tmp[4300];
	FILE *f;
	int fd;

	if (where_file(state_opt, path, sizeof path) < 0)
		return;
	snprintf(tmp, sizeof tmp, "%s.%ld", path, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		if (fd >= 0)
			close(fd);
		cli_warnf("cannot write %s: serve login will need --listen", tmp);
		return;
	}
	fprintf(f, "%s\n%ld\n", origin, (long)getpid());
	if (fclose(f) != 0 || rename(tmp, path) < 0) {
		unlink(tmp);
		cli_warnf("cannot write %s: serve login will need --listen", path);
	}
}

/* Remove the file if it is still this process's. */
static void where_remove(const char *state_opt)
{
	char path[4200], line[400];
	FILE *f;
	long pid = 0;

	if (where_file(state_opt, path, sizeof path) < 0 || !(f = fopen(path, "re")))
		return;
	if (fgets(line, sizeof line, f) && fscanf(f, "%ld", &pid) == 1 && pid == (long)getpid())
		unlink(path);
	fclose(f);
}

/* The origin of the console serving this state database: 0, or -1 after
 * saying why. */
static int where_read(const char *state_opt, char *origin, size_t n)
{
	char path[4200];
	struct stat sb;
	FILE *f;
	long pid = 0;
	size_t len;
	int fd;

	if (where_file(state_opt, path, sizeof path) < 0 ||
	    (fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		cli_errorf("login: no console is serving this state database (none started "
		           "'cordon serve' over it); give --listen ADDR:PORT or --origin URL");
		return -1;
	}
	/* Only a file our own console wrote: where the state directory is
	 * writable by others, anyone could leave one naming their own server,
	 * and the link printed below is a working login. */
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_uid != geteuid() ||
	    (sb.st_mode & 077)) {
		close(fd);
		cli_errorf("login: %s is not this user's own 0600 file: not trusted; give "
		           "--listen or --origin",
		           path);
		return -1;
	}
	if (!(f = fdopen(fd, "r"))) {
		close(fd);
		cli_errorf("login: cannot read %s; give --listen or --origin", path);
		return -1;
	}
	if (!fgets(origin, (int)n, f) || fscanf(f, "%ld", &pid) != 1 || pid <= 0) {
		fclose(f);
		cli_errorf("login: %s is malformed; give --listen or --origin", path);
		return -1;
	}
	fclose(f);
	len = strcspn(origin, "\n");
	origin[len] = '\0';
	if (kill((pid_t)pid, 0) < 0 && errno == ESRCH) {
		cli_errorf(
		        "login: the console of %s (pid %ld) is not running; start 'cordon serve' "
		        "or give --listen",
		        path, pid);
		return -1;
	}
	if (strncmp(origin, "http://", 7) && strncmp(origin, "https://", 8)) {
		cli_errorf("login: %s does not name an origin", path);
		return -1;
	}
	return 0;
}

static int login_cmd(const struct sopts *o, const char *name)
{
	struct cd_policy *p = NULL;
	struct cd_state *st = NULL;
	struct cd_err err = { 0, "" };
	char addr[256], origin[300], why[256];
	uint16_t port;
	int ok, rc;

	if (!o->policy) {
		cli_errorf("login: give --policy, whose approvers.people must name '%s'", name);
		return CD_EXIT_USAGE;
	}
	if (cd_policy_load_file(o->policy, &p, &err) < 0) {
		cli_errorf("policy: %s", err.msg);
		return CD_EXIT_CORDON;
	}
	ok = cd_policy_approver_person(p, name, "", why, sizeof why);
	cd_policy_free(p);
	if (!ok) {
		cli_errorf("refused: %s", why);
		return CD_EXIT_FAIL;
	}
	if (o->origin) {
		snprintf(origin, sizeof origin, "%s", o->origin);
	} else if (!o->listen_given) {
		if (where_read(o->state, origin, sizeof origin) < 0)
			return CD_EXIT_CORDON;
	} else if (cd_http_parse_listen(o->listen, addr, sizeof addr, &port) < 0 ||
	           cd_console_make_origin(addr, port, o->cert != NULL, origin, sizeof origin) < 0) {
		cli_errorf("--listen '%s': write ADDR:PORT or [V6]:PORT", o->listen);
		return CD_EXIT_USAGE;
	}
	if (cli_state_open(o->state, &st) < 0)
		return CD_EXIT_CORDON;
	rc = print_link(st, origin, name, o->ttl);
	cd_state_close(st);
	return rc;
}

/* The public key and checkpoint file `cordon log verify` would use, for
 * the console's "verify now": the config directory's audit.pub, the
 * checkpoint file beside the log; each only when it exists.  -1 after
 * saying why when the key exists but cannot be read. */
static int verify_inputs(const char *audit_opt, struct cd_console_conf *c,
                         unsigned char pk[CD_AUDIT_PK_LEN], char *cp, size_t cplen)
{
	char pkpath[4096], db[4096];
	struct cd_err err = { 0, "" };

	if (cli_config_path("audit.pub", pkpath, sizeof pkpath) == 0 && access(pkpath, F_OK) == 0) {
		if (cd_audit_pubkey_load(pkpath, pk, &err) < 0) {
			cli_errorf("%s", err.msg);
			return -1;
		}
		c->audit_pubkey = pk;
	}
	if (cli_audit_path(audit_opt, db, sizeof db) == 0 &&
	    cli_checkpoint_path(NULL, db, cp, cplen) == 0 && access(cp, F_OK) == 0)
		c->checkpoint_path = cp;
	return 0;
}

/* Where `cordon shell` keeps its recordings: sessions/ next to a local
 * audit log (cli-launch-tty.c); NULL for none. */
static const char *sessions_dir(const char *audit_opt, char *out, size_t cap)
{
	char *slash;
	size_t n;

	if (cli_audit_local(audit_opt, out, cap) < 0 || !(slash = strrchr(out, '/')))
		return NULL;
	n = (size_t)(slash - out);
	if (cap - n <= sizeof "/sessions")
		return NULL;
	memcpy(slash, "/sessions", sizeof "/sessions");
	return out;
}

/* The key webhook messages are signed with: --notify-key, else
 * webhook.key in the configuration directory, made (0600) when absent. */
static int webhook_key(const struct sopts *o, unsigned char key[CD_CONSOLE_WEBHOOK_KEY_LEN])
{
	char path[4096];
	struct cd_err err = { 0, "" };

	if (o->hook_key)
		snprintf(path, sizeof path, "%s", o->hook_key);
	else if (cli_config_path("webhook.key", path, sizeof path) < 0) {
		cli_errorf("cannot find the webhook key (give --notify-key FILE)");
		return -1;
	}
	if (cd_mask_key_load(path, key, &err) < 0) {
		cli_errorf("webhook key: %s", err.msg);
		return -1;
	}
	return 0;
}

/* The key the console's stored sessions are MACed with: session.key in
 * cordon's configuration directory, made (0600) when absent, so sessions
 * outlive a restart of the console. */
static int session_key(unsigned char key[CD_CONSOLE_SESSION_KEY_LEN])
{
	char path[4096];
	struct cd_err err = { 0, "" };

	if (cli_config_path("console-session.key", path, sizeof path) < 0) {
		cli_errorf("cannot find the console's session key");
		return -1;
	}
	if (cd_mask_key_load(path, key, &err) < 0) {
		cli_errorf("session key: %s", err.msg);
		return -1;
	}
	return 0;
}

static int serve_cmd(const struct sopts *o)
{
	unsigned char pk[CD_AUDIT_PK_LEN], hk[CD_CONSOLE_WEBHOOK_KEY_LEN];
	unsigned char sess[CD_CONSOLE_SESSION_KEY_LEN], pkey[CD_PROPOSAL_KEY_LEN];
	char cp[4096], apath[4096], sdir[4096];
	struct cd_console_conf c;
	struct cd_console *con = NULL;
	struct cd_state *st = NULL;
	struct cd_audit *audit = NULL;
	struct cd_approver_key *sk = NULL;
	struct cd_err err = { 0, "" };
	char addr[256];
	sigset_t set;
	int sig, rc = CD_EXIT_CORDON;

	memset(&c, 0, sizeof c);
	if (cd_http_parse_listen(o->listen, addr, sizeof addr, &c.port) < 0) {
		cli_errorf("--listen '%s': write ADDR:PORT or [V6]:PORT", o->listen);
		return CD_EXIT_USAGE;
	}
	if (cli_audit_open(o->audit, &audit) < 0 || cli_state_open(o->state, &st) < 0 ||
	    verify_inputs(o->audit, &c, pk, cp, sizeof cp) < 0)
		goto out;
	/* The indexes the log pages read through; without them (a role that
	 * may not make them) the pages are right, only slower. */
	if (cd_audit_index(audit, &err) < 0)
		cli_warnf("the audit log's indexes: %s", err.msg);
	if (o->sign_key && cd_approver_key_load(o->sign_key, &sk, &err) < 0) {
		cli_errorf("--sign-key: %s", err.msg);
		goto out;
	}
	c.sign_key = sk;
	if (session_key(sess) < 0)
		goto out;
	c.session_key = sess;
	if (cli_proposal_key(o->state, pkey) < 0)
		goto out;
	c.proposal_key = pkey;
	c.proxy_header = o->proxy_header;
	c.addr = addr;
	c.tls_cert = o->cert;
	c.tls_key = o->key;
	c.origin = o->origin;
	c.policy = o->policy;
	c.state = st;
	c.audit = audit;
	c.audit_path = cli_audit_path(o->audit, apath, sizeof apath) == 0 ? apath : NULL;
	c.sessions_dir = sessions_dir(o->audit, sdir, sizeof sdir);
	if (o->nhooks) {
		if (webhook_key(o, hk) < 0)
			goto out;
		c.webhooks = o->hooks;
		c.nwebhooks = o->nhooks;
		c.webhook_key = hk;
	}
	/* The server's threads inherit this mask: the signals come here. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (cd_console_start(&c, &con, &err) < 0) {
		cli_errorf("%s", err.msg);
		goto out;
	}
	fprintf(stderr, "cordon serve: listening on %s; log in as %s with:\n",
	        cd_console_origin(con), cli_login_name());
	{
		char link[512];
		if (cd_console_link(con, cli_login_name(), o->ttl, link, sizeof link, &err) < 0) {
			cli_errorf("login link: %s", err.msg);
			goto out;
		}
		printf("%s\n", link);
		fflush(stdout);
	}
	where_write(o->state, cd_console_origin(con));
	sigwait(&set, &sig);
	where_remove(o->state);
	fprintf(stderr, "cordon serve: stopping (%s)\n", strsignal(sig));
	rc = CD_EXIT_OK;
out:
	cd_console_stop(con);
	cd_approver_key_free(sk);
	cd_state_close(st);
	cd_audit_close(audit);
	sodium_memzero(hk, sizeof hk);
	sodium_memzero(sess, sizeof sess);
	sodium_memzero(pkey, sizeof pkey);
	return rc;
}

int cmd_serve(int argc, char **argv)
{
	struct sopts o;
	int r, login = argc > 1 && !strcmp(argv[1], "login");

	r = login ? parse(argc - 1, argv + 1, &o) : parse(argc, argv, &o);
	if (r)
		return r > 0 ? CD_EXIT_OK : CD_EXIT_USAGE;
	if (login) {
		if (argc - 1 - optind != 1) {
			cli_errorf("login: give one NAME (see --help)");
			return CD_EXIT_USAGE;
		}
		return login_cmd(&o, argv[1 + optind]);
	}
	if (optind != argc) {
		cli_errorf("unexpected argument '%s' (see --help)", argv[optind]);
		return CD_EXIT_USAGE;
	}
	return serve_cmd(&o);
}
