/* The exec event stream (SSE of the exec and process output routes):
 * stdout/stderr events written out as they come, the exit event turned
 * into an exit status. Shared by exec and shell. */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "fsutil.h"

#define EXEC_TIMED_OUT_EXIT 124

/* Writes the data of a stdout/stderr event to fd. */
static int write_output(int fd, json_t *data)
{
    const char *text = json_string_value(json_object_get(data, "data"));
    if (text)
        return fs_write_all(fd, text, json_string_length(json_object_get(data, "data")));
    const char *b64 = json_string_value(json_object_get(data, "data_b64"));
    if (!b64)
        return -1;
    size_t len = strlen(b64);
    unsigned char *raw = malloc(len / 4 * 3 + 3);
    int n = raw ? EVP_DecodeBlock(raw, (const unsigned char *)b64, (int)len) : -1;
    /* EVP_DecodeBlock counts the padding as data bytes. */
    if (n >= 0)
        n -= (len >= 1 && b64[len - 1] == '=') + (len >= 2 && b64[len - 2] == '=');
    int rc = n >= 0 ? fs_write_all(fd, raw, (size_t)n) : -1;
    free(raw);
    return rc;
}

int cli_exit_status(json_t *exit)
{
    if (json_is_true(json_object_get(exit, "timed_out")))
        return EXEC_TIMED_OUT_EXIT;
    json_int_t sig = json_integer_value(json_object_get(exit, "signal"));
    if (sig > 0)
        return 128 + (int)sig;
    return (int)json_integer_value(json_object_get(exit, "exit_code"));
}

/* Reads SSE events until exit; the exit status to use. */
int cli_relay_exec_events(struct http_response *resp)
{
    struct strbuf line = { 0 };
    char event[32] = "";
    int rc = -1;
    json_t *data;
    while (rc < 0 && cli_sse_next(resp, &line, event, sizeof(event), &data) == 1) {
        if (strcmp(event, "stdout") == 0 || strcmp(event, "stderr") == 0) {
            write_output(event[3] == 'o' ? STDOUT_FILENO : STDERR_FILENO, data);
        } else if (strcmp(event, "exit") == 0) {
            rc = cli_exit_status(data);
        } else if (strcmp(event, "error") == 0) {
            const char *msg = json_string_value(json_object_get(json_object_get(data, "error"), "message"));
            fprintf(stderr, "airlock: the command's output stream broke: %s\n", msg ? msg : "?");
            rc = CLI_EXIT_ERROR;
        }
        json_decref(data);
    }
    if (rc < 0) {
        fprintf(stderr, "airlock: the gateway closed the stream before the command exited\n");
        rc = CLI_EXIT_ERROR;
    }
    strbuf_free(&line);
    return rc;
}
