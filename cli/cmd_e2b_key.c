/* airlock e2b-key: the configured API key in E2B's form (e2b_<hex> for
 * ak_<hex>, gateway/e2b_key.h), for E2B's SDKs' E2B_API_KEY against the
 * gateway's E2B-compatible API (docs/e2b.md). Asks no server. */
#include <stdio.h>

#include "cli.h"
#include "e2b_key.h"

int cmd_e2b_key(struct cli *c, int argc, char **argv)
{
    (void)argv;
    if (argc != 1) {
        fprintf(stderr, "usage: airlock e2b-key\n");
        return CLI_EXIT_USAGE;
    }
    char key[128];
    if (e2b_key_from_airlock(c->key, key, sizeof(key)) < 0) {
        fprintf(stderr, "airlock: the API key is not of the form ak_<64 hex digits>\n");
        return CLI_EXIT_USAGE;
    }
    printf("%s\n", key);
    return CLI_EXIT_OK;
}
