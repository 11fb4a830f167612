/* airlock logs ID [--tail BYTES]: the sandbox's serial console (kernel,
 * init, anything written to /dev/console) as the node kept it. With
 * --json: {"id":…,"log":"…"} ("log_b64" when it is not UTF-8). */
#include <getopt.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "fsutil.h"

#define LOGS_MAX_TAIL (1 << 20)

static json_t *log_json(const char *id, const struct strbuf *text)
{
    json_t *j = json_pack("{s:s}", "id", id);
    json_t *s = json_stringn(text->data ? text->data : "", text->len);
    if (s) {
        json_object_set_new(j, "log", s);
        return j;
    }
    unsigned char *b64 = malloc(4 * ((text->len + 2) / 3) + 1);
    if (b64) {
        int n = EVP_EncodeBlock(b64, (const unsigned char *)text->data, (int)text->len);
        json_object_set_new(j, "log_b64", json_stringn((const char *)b64, (size_t)n));
    }
    free(b64);
    return j;
}

int cmd_logs(struct cli *c, int argc, char **argv)
{
    static const struct option opts[] = {
        { "tail", required_argument, NULL, 't' },
        { NULL, 0, NULL, 0 },
    };
    long tail = 0;
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
        char *end = "";
        tail = opt == 't' ? strtol(optarg, &end, 10) : -1;
        if (tail <= 0 || tail > LOGS_MAX_TAIL || *end) {
            fprintf(stderr, "airlock: --tail: a number of bytes in 1..%d\n", LOGS_MAX_TAIL);
            return CLI_EXIT_USAGE;
        }
    }
    if (optind + 1 != argc) {
        fprintf(stderr, "usage: airlock logs [--tail BYTES] ID\n");
        return CLI_EXIT_USAGE;
    }
    const char *id = argv[optind];
    char path[256];
    if (tail)
        snprintf(path, sizeof(path), "/v1/sandboxes/%.100s/logs?tail=%ld", id, tail);
    else
        snprintf(path, sizeof(path), "/v1/sandboxes/%.100s/logs", id);
    struct http_request req = { .method = "GET", .path = path, .body_fd = -1 };
    struct http_response resp;
    if (cli_send(c, &req, NULL, &resp) < 0)
        return CLI_EXIT_ERROR;
    struct strbuf text = { 0 };
    int rc = CLI_EXIT_ERROR;
    if (http_read_all(&resp, &text) < 0) {
        fprintf(stderr, "airlock: the console log of %s broke off\n", id);
    } else if (resp.status != 200) {
        json_t *err = text.len ? json_loadb(text.data, text.len, 0, NULL) : NULL;
        rc = cli_fail(c, resp.status, err, id);
        json_decref(err);
    } else if (c->json) {
        json_t *j = log_json(id, &text);
        cli_print_json(stdout, j);
        json_decref(j);
        rc = CLI_EXIT_OK;
    } else {
        rc = fs_write_all(STDOUT_FILENO, text.data ? text.data : "", text.len) == 0
                 ? CLI_EXIT_OK
                 : CLI_EXIT_ERROR;
    }
    strbuf_free(&text);
    http_close(&resp);
    return rc;
}
