/* cmd-mcp.h — what the files of `cordon mcp` share: cmd-mcp.c (usage, the
 * gateway session) and cmd-mcp-pins.c (`cordon mcp pins`). */
#ifndef CD_CMD_MCP_H
#define CD_CMD_MCP_H

#include <stdio.h>

struct cd_state;

/* cmd-mcp.c */
void mcp_usage(FILE *f);
/* Open the state database of --state (or its default); 0, or -1 said. */
int mcp_open_state(const char *opt, struct cd_state **ret);

/* cmd-mcp-token.c: `cordon mcp token`; the SHA-256 hex of a token. */
int mcp_token_cmd(int argc, char **argv);
void mcp_token_hash(const char *token, char out[65]);

/* cmd-mcp-front.c: `cordon mcp --listen` (the gateway's own argv). */
int mcp_front_cmd(int argc, char **argv);
int mcp_front_wanted(int argc, char **argv);

/* cmd-mcp-pins.c */
int mcp_pins_cmd(int argc, char **argv);

#endif
