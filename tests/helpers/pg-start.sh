# pg-start.sh — a real PostgreSQL server for one test file, sourced after
# tests/lib.sh:   . "$CORDON_SRC/tests/helpers/pg-start.sh"; pg_start
#
# initdb in a temporary directory owned by uid 65534 (postgres refuses to
# run as root), a Unix socket only (listen_addresses = ''), password
# (SCRAM) authentication for every role so that connection secrets mean
# something.  fsync and synchronous_commit stay ON: the durability tests
# (write-ahead before a run) rely on a commit being on disk when it
# returns; only sizes (buffers, connections) are made small.
#
# Sets: PG_DIR (data + socket, removed on exit), PG_SOCK (socket dir),
# PG_ADMIN_URI (superuser "cordon_admin", password in PG_ADMIN_PW),
# PG_URI_BASE "postgresql:///cordon?host=$PG_SOCK" (database "cordon").
# pg_sql SQL...  runs SQL as the superuser (psql -v ON_ERROR_STOP=1 -qAt);
# pg_stop stops the server (also on exit: chained into lib.sh's trap);
# pg_start again after pg_stop restarts it on the same data.
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
PG_DIR=""
PG_PID=""

_pg_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$@"; }

pg_stop() {
	[ -n "$PG_PID" ] || return 0
	# SIGINT: "fast" shutdown (checkpoint, then exit).
	kill -INT "$PG_PID" 2>/dev/null
	_i=0
	while kill -0 "$PG_PID" 2>/dev/null && [ $_i -lt 300 ]; do sleep 0.1; _i=$((_i + 1)); done
	kill -KILL "$PG_PID" 2>/dev/null
	wait "$PG_PID" 2>/dev/null
	PG_PID=""
}

_pg_cleanup() {
	pg_stop
	[ -n "$PG_DIR" ] && rm -rf "$PG_DIR"
	_tap_cleanup
}

pg_start() {
	if [ -z "$PG_DIR" ]; then
		[ -x "$PG_BIN/initdb" ] || { skip "no PostgreSQL 15 in $PG_BIN (apt-get install postgresql)"; return 1; }
		[ "$(id -u)" -eq 0 ] || { skip "pg_start needs root (postgres runs as uid 65534)"; return 1; }
		PG_DIR=$(mktemp -d /tmp/cordon-pg.XXXXXX)
		trap _pg_cleanup EXIT
		chmod 0711 "$PG_DIR"
		mkdir "$PG_DIR/sock"
		chmod 0755 "$PG_DIR/sock"
		chown 65534:65534 "$PG_DIR" "$PG_DIR/sock"
		PG_ADMIN_PW=admin-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
		printf '%s\n' "$PG_ADMIN_PW" >"$PG_DIR/pw"
		chown 65534 "$PG_DIR/pw"
		chmod 0600 "$PG_DIR/pw"
		_pg_nobody "$PG_BIN/initdb" -D "$PG_DIR/data" -U cordon_admin --pwfile="$PG_DIR/pw" \
			--auth=scram-sha-256 --no-sync -E UTF8 --locale=C.UTF-8 >"$PG_DIR/initdb.log" 2>&1 || {
			diag "initdb failed: $(tail -3 "$PG_DIR/initdb.log")"
			return 1
		}
		rm -f "$PG_DIR/pw"
		cat >>"$PG_DIR/data/postgresql.conf" <<-EOF
			listen_addresses = ''
			unix_socket_directories = '$PG_DIR/sock'
			unix_socket_permissions = 0777
			max_connections = 60
			shared_buffers = 16MB
			fsync = on
			synchronous_commit = on
			full_page_writes = on
			wal_level = minimal
			max_wal_senders = 0
			logging_collector = off
		EOF
	fi
	# setpriv itself, not the function: $! must be postgres's own pid.
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$PG_BIN/postgres" -D "$PG_DIR/data" >>"$PG_DIR/server.log" 2>&1 &
	PG_PID=$!
	PG_SOCK=$PG_DIR/sock
	_i=0
	until "$PG_BIN/pg_isready" -q -h "$PG_SOCK" 2>/dev/null; do
		_i=$((_i + 1))
		if [ $_i -gt 300 ] || ! kill -0 "$PG_PID" 2>/dev/null; then
			diag "postgres did not start: $(tail -3 "$PG_DIR/server.log")"
			return 1
		fi
		sleep 0.1
	done
	PG_ADMIN_URI="postgresql://cordon_admin@/postgres?host=$PG_SOCK"
	PG_URI_BASE="postgresql:///cordon?host=$PG_SOCK"
	export PG_SOCK PG_ADMIN_URI PG_URI_BASE PG_ADMIN_PW
	if [ "$(pg_sql_db postgres "SELECT count(*) FROM pg_database WHERE datname = 'cordon'")" != 1 ]; then
		pg_sql_db postgres "CREATE DATABASE cordon" || return 1
	fi
	return 0
}

# pg_sql_db DB SQL: SQL in database DB as the superuser; prints rows.
pg_sql_db() {
	PGPASSWORD=$PG_ADMIN_PW psql -X -v ON_ERROR_STOP=1 -qAt -h "$PG_SOCK" -U cordon_admin -d "$1" -c "$2"
}

# pg_sql SQL: SQL in the database "cordon".
pg_sql() {
	pg_sql_db cordon "$1"
}

# pg_schema: the audit schema, made by the owner's first connection
# (quietly); ADMIN is the owner's URI (its password in PG_ADMIN_PW).
pg_schema() {
	ADMIN="postgresql://cordon_admin@/cordon?host=$PG_SOCK"
	env PGPASSWORD="$PG_ADMIN_PW" "$CORDON" log verify --audit "$ADMIN" >/dev/null 2>&1
}

# pg_audit_hosts X...: the roles of docs/postgresql-roles.sql, and for each
# X a login role host_X (password pw-X) in cordon_writer that writes the
# chain of host-X (audit_writers); a failed assertion when that fails.
pg_audit_hosts() {
	_roles="" _writers=""
	for _h; do
		_roles="$_roles
CREATE ROLE host_$_h LOGIN PASSWORD 'pw-$_h' IN ROLE cordon_writer;"
		_writers="$_writers${_writers:+, }('host_$_h', 'host-$_h')"
	done
	pg_sql "$(cat "$CORDON_SRC/docs/postgresql-roles.sql")$_roles
INSERT INTO audit_writers VALUES $_writers;" ||
		ok "the roles of docs/postgresql-roles.sql are made" false
}

# pg_two_hosts: the schema (the owner's first connection makes it), the
# roles of docs/postgresql-roles.sql and two hosts' writer roles: host_b is
# this host (B_URI connects as it), host_a the compromised other host
# (`forge SQL` runs SQL as its writer role).  Two assertions.
pg_two_hosts() {
	ok "the owner's first connection makes the schema" env PGPASSWORD="$PG_ADMIN_PW" \
		"$CORDON" log verify --audit "postgresql://cordon_admin@/cordon?host=$PG_SOCK"
	ok "the roles of docs/postgresql-roles.sql are made" pg_sql "$(cat "$CORDON_SRC/docs/postgresql-roles.sql")
CREATE ROLE host_a LOGIN PASSWORD 'pw-a' IN ROLE cordon_writer;
CREATE ROLE host_b LOGIN PASSWORD 'pw-b' IN ROLE cordon_writer;
INSERT INTO audit_writers VALUES ('host_a', 'host-a'), ('host_b', '$(uname -n)');"
	B_URI="postgresql://host_b:pw-b@/cordon?host=$PG_SOCK"
}
forge() { env PGPASSWORD=pw-a psql -X -v ON_ERROR_STOP=1 -qAt -h "$PG_SOCK" -U host_a -d cordon -c "$1"; }
