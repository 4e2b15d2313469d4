/* bounds.h — every cap on untrusted or unbounded input, in one place.
 * A buffer that grows past its cap fails with -CD_E_LIMIT; nothing grows
 * without one. */
#ifndef CD_BOUNDS_H
#define CD_BOUNDS_H

#define CD_MIB (1024UL * 1024UL)
#define CD_GIB (1024UL * CD_MIB)

/* cordon shell: the session recording (what was typed and printed) */
#define CD_SESSION_DEFAULT (1 * CD_MIB)
#define CD_SESSION_MAX     (64 * CD_MIB)
#define CD_SANDBOX_PTY_MAX "16" /* ptys in the sandbox's own devpts (a string: fsconfig) */

/* cordon run */
#define CD_PLAN_MAX_MOUNTS     1024 /* binds, tmpfs, symlinks, covers in one plan */
#define CD_PLAN_MAX_ENV        256  /* environment entries */
#define CD_PLAN_MAX_ARGV       4096 /* arguments of the command */
#define CD_PLAN_MAX_ARGS_BYTES (1 * CD_MIB)
#define CD_PATH_MAX            4096 /* one path, with its NUL */
#define CD_PLAN_MAX_FILES      32   /* generated files (passwd, hosts ...) */
#define CD_PLAN_FILE_MAX       4096 /* one generated file */
#define CD_SECRET_MAX          (64 * 1024)
#define CD_SOCKET_SCAN_MAX     200000 /* entries walked looking for host sockets */

/* Defaults of the strict profile. */
#define CD_DEFAULT_SCRATCH_SIZE (256 * CD_MIB)
#define CD_DEFAULT_TIMEOUT_MS   (60 * 1000)
#define CD_DEFAULT_OUTPUT_LIMIT (16 * CD_MIB) /* per stream */
#define CD_DEFAULT_MEMORY       (512 * CD_MIB)
#define CD_DEFAULT_PIDS         256
#define CD_DEFAULT_NOFILE       1024
#define CD_DEFAULT_FSIZE        (1 * CD_GIB)

/* The run's share of per-user kernel objects (quotas.h): well under the
 * host defaults (128 inotify instances, 819200 bytes of message queues,
 * 8 MiB locked), so the invoking user keeps most of its own. */
#define CD_DEFAULT_INOTIFY_INSTANCES 16
#define CD_DEFAULT_INOTIFY_WATCHES   8192
#define CD_DEFAULT_MSGQUEUE          (256 * 1024)
#define CD_DEFAULT_SIGPENDING        1024
#define CD_DEFAULT_MEMLOCK           (64 * 1024)

/* cordon run --propose: the overlay's upper and work directories live on a
 * tmpfs of this size and inode count (inside the sandbox's namespaces);
 * writes past either fail with ENOSPC inside. */
#define CD_DEFAULT_PROPOSE_SIZE   (256 * CD_MIB)
#define CD_DEFAULT_PROPOSE_INODES 65536
#define CD_PROPOSE_SIZE_MAX       (4 * CD_GIB) /* the most --propose-size may ask for */
#define CD_PROPOSE_INODES_MAX     200000       /* = CD_PROP_MAX_FILES */

#define CD_PROXY_PORT 3128 /* the egress proxy, on 127.0.0.1 inside the sandbox */

#define CD_SANDBOX_UID 1000 /* the unprivileged user inside */
#define CD_SANDBOX_GID 1000

/* cordon proxy (egress): the request head, the allowlist, connections. */
#define CD_EGRESS_HEAD_MAX           8192         /* request head with its blank line */
#define CD_EGRESS_LINE_MAX           4096         /* one line of the head, CRLF included */
#define CD_EGRESS_HEADERS_MAX        64           /* header fields in one head */
#define CD_EGRESS_RULES_MAX          256          /* --allow-host entries */
#define CD_EGRESS_ADDRS_MAX          32           /* addresses one name may resolve to */
#define CD_EGRESS_CONNS_MAX          256          /* default cap on open connections */
#define CD_EGRESS_CONNS_LIMIT        4096         /* the most --max-conns may ask for */
#define CD_EGRESS_RELAY_BUF          (64 * 1024)  /* per direction, per connection */
#define CD_EGRESS_PIPE_SIZE          (256 * 1024) /* splice pipe, per direction (when granted) */
#define CD_EGRESS_HEAD_TIMEOUT_MS    (10 * 1000)  /* accept to complete head */
#define CD_EGRESS_CONNECT_TIMEOUT_MS (10 * 1000)
#define CD_EGRESS_IDLE_TIMEOUT_MS    (5 * 60 * 1000)
#define CD_EGRESS_RESOLVE_THREADS    8    /* decisions (lookups) made at once, off the loop */
#define CD_EGRESS_RESOLVE_PER_CLIENT 4    /* of them for one client address */
#define CD_EGRESS_EVICT_AFTER_MS     1000 /* at the cap, a head this old may be closed */
#define CD_EGRESS_RESULTS_PENDING    64   /* closing records held for the next write */
#define CD_EGRESS_RESULTS_WAIT_MS    1000 /* and for a second at most */

/* The TLS ClientHello the proxy peeks at on CONNECT to port 443: one
 * record header and at most 2^14 bytes of record body (RFC 8446 5.1). */
#define CD_TLS_RECORD_BODY_MAX 16384
#define CD_TLS_RECORD_MAX      (5 + CD_TLS_RECORD_BODY_MAX)

/* cordon mcp: JSON-RPC frames from the client and from the tool server. */
#define CD_JSONRPC_LINE_MAX   (16 * CD_MIB) /* one message; the SDK itself stops at 10 MiB */
#define CD_JSONRPC_DEPTH_MAX  64            /* nesting of arrays and objects */
#define CD_JSONRPC_ID_MAX     256           /* bytes of a string id */
#define CD_JSONRPC_VALUES_MAX 1000000       /* values in one line (parsing memory) */
#define CD_MCP_INFLIGHT_MAX   4096          /* requests awaiting a response, per direction */
#define CD_MCP_TOOLS_MAX      4096          /* tools one server may offer */
#define CD_MCP_PAGES_MAX      256           /* tools/list pages the gateway follows */
#define CD_MCP_HELD_MAX       256           /* tools/call held while the gateway lists */
#define CD_MCP_BATCH_MAX      100           /* elements of one batch (MCP 2025-03-26) */
#define CD_MCP_BATCHES_MAX    8             /* client batches whose answer is not complete */

/* cordon mcp with a remote (url:) upstream: HTTP responses and SSE events. */
#define CD_HTTP_BODY_MAX      CD_JSONRPC_LINE_MAX /* one JSON response body */
#define CD_SSE_LINE_MAX       CD_JSONRPC_LINE_MAX /* one line of an event stream */
#define CD_SSE_EVENT_MAX      CD_JSONRPC_LINE_MAX /* the data of one event */
#define CD_SSE_ID_MAX         256                 /* an event id (Last-Event-ID) */
#define CD_SSE_RETRY_MAX_MS   30000               /* a server's retry: is capped here */
#define CD_HTTP_STREAM_MAX    (256 * CD_MIB)      /* bytes of one event stream in all */
#define CD_HTTP_INFLIGHT_MAX  64                  /* requests open at once */
#define CD_MCP_SESSION_ID_MAX 256                 /* Mcp-Session-Id, visible ASCII */

/* cordon run --image: an image's files, all the author's (image/image.h). */
#define CD_IMAGE_JSON_MAX    (4 * CD_MIB)  /* index.json, manifest, config */
#define CD_IMAGE_SMALL_TOTAL (32 * CD_MIB) /* small files read from a tarball's first pass */
#define CD_IMAGE_LAYERS_MAX  256           /* layers of one image */
#define CD_IMAGE_NESTING_MAX 4             /* indexes within indexes */
#define CD_IMAGE_ENTRIES_MAX 2000000       /* entries of all layers */
#define CD_IMAGE_BYTES_MAX   (8 * CD_GIB)  /* bytes unpacked per pass, all layers (default) */
#define CD_IMAGE_RATIO_MAX   100           /* unpacked bytes per byte read (default) */
#define CD_IMAGE_RATIO_FLOOR (64 * CD_MIB) /* unpacked bytes always allowed by the ratio */
#define CD_IMAGE_NAME_MAX    1024          /* one entry's path */
#define CD_IMAGE_DEPTH_MAX   128           /* its components */

#endif
