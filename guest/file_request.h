/* Path handling shared by the file request handlers. */
#ifndef GUESTD_FILE_REQUEST_H
#define GUESTD_FILE_REQUEST_H

#include <protobuf-c/protobuf-c.h>
#include <stdint.h>

struct guestd;

/* The request's path as an absolute C string (malloc'd); on an empty path,
 * a NUL byte or no memory answers the stream with Result and returns NULL. */
char *request_path(struct guestd *g, uint32_t id, const char *op, const ProtobufCBinaryData *b);

/* Result{err, "<op> \"<path>\": <strerror>"}. */
void send_path_error(struct guestd *g, uint32_t id, const char *op, const char *path, int err);

#endif
