/* The byte streams of files between the gateway and a sandbox's vmhost,
 * shared by REST's /v1/sandboxes/{id}/files (handlers_files.c) and envd's
 * /files (envd_files.c): ReadFile as a streaming HTTP response, WriteFile
 * fed piece by piece as an upload arrives. */
#ifndef AIRLOCK_GATEWAY_FILE_STREAMS_H
#define AIRLOCK_GATEWAY_FILE_STREAMS_H

#include <microhttpd.h>
#include <stddef.h>

#include "airlock_error.h"
#include "rpc_client.h"
#include "vmhost.pb-c.h"

/* A 200-ready response streaming file path of the sandbox (ReadFile on
 * ch) once its first chunk came, so a missing file is an error here and
 * not a cut body: 0 with *resp, or -1 with e. A failure mid-file ends
 * the body with an error, never as if complete. */
int file_read_response(struct rpc_channel *ch, const char *sandbox_id, const char *path,
                       struct MHD_Response **resp, struct airlock_error *e);

/* A WriteFile of path (atomic; mode 0644; make_parents creates missing
 * directories) on ch; NULL when out of memory. */
struct rpc_stream *file_write_open(struct rpc_channel *ch, const char *sandbox_id,
                                   const char *path, bool make_parents);
/* Sends data in messages of at most 1 MiB. A failed send means the call
 * is over: file_write_finish says why. */
void file_write_chunk(struct rpc_stream *s, const void *data, size_t len);
/* Ends the write: 0 with the file's *info (may be NULL; caller frees),
 * or -1 with e. s is gone either way. */
int file_write_finish(struct rpc_stream *s, Airlock__Guest__V1__FileInfo **info,
                      struct airlock_error *e);
/* Abandons a write (the client went away): vmhost drops the temp file
 * instead of installing half a file. */
void file_write_abort(struct rpc_stream *s);

#endif
