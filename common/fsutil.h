/* Small file-system and process helpers shared by the services.
 *
 * Every function returns 0 on success or -1 with a message in err that names
 * the path or command and the reason (strerror, exit status). err may be
 * NULL when the caller does not want the message. */
#ifndef AIRLOCK_FSUTIL_H
#define AIRLOCK_FSUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* snprintf for paths: returns -1 (errno ENAMETOOLONG) instead of silently
 * truncating. */
int fs_path(char *buf, size_t buflen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* mkdir -p: creates path and any missing parents with mode. */
int fs_mkdir_p(const char *path, mode_t mode, char *err, size_t errlen);

/* Writes data to path so that readers see either the old or the complete
 * new content, also after a crash: temp file in the same directory, fsync,
 * rename, fsync of the directory. */
int fs_write_file_atomic(const char *path, const void *data, size_t len, mode_t mode, char *err,
                         size_t errlen);
/* The same without the fsyncs: readers, and a restart after the writing
 * process died, see the old or the new content; a power cut may lose it. */
int fs_write_file_replace(const char *path, const void *data, size_t len, mode_t mode, char *err,
                          size_t errlen);

/* write() until all len bytes are out, retrying on EINTR. Returns 0 or -1
 * with errno set. */
int fs_write_all(int fd, const void *data, size_t len);
/* The same on a socket with send(MSG_NOSIGNAL): a peer that closed is
 * -1 with EPIPE, not SIGPIPE; a 0-byte send is an error too. */
int fs_send_all(int fd, const void *data, size_t len);

/* Reads the whole file (at most max_bytes) into a malloc'd NUL-terminated
 * buffer. *len (if not NULL) gets the size without the NUL. */
int fs_read_file(const char *path, size_t max_bytes, char **data, size_t *len, char *err,
                 size_t errlen);

/* The last max_bytes of a file (all of it when smaller) into a malloc'd
 * NUL-terminated buffer; *truncated says whether older bytes were left out.
 * 0, or -1 with errno set (ENOENT for a missing file). */
int fs_read_tail(const char *path, size_t max_bytes, char **data, size_t *len, bool *truncated);

/* Copies src to dst (created or truncated with mode), keeping holes: only
 * the data regions of src are written, so sparse disk images stay sparse. */
int fs_copy_file(const char *src, const char *dst, mode_t mode, char *err, size_t errlen);

/* rm -rf without following symlinks. A missing path is not an error. */
int fs_remove_tree(const char *path, char *err, size_t errlen);

/* fsync() of a directory, making renames and creations in it durable. */
int fs_fsync_dir(const char *dir, char *err, size_t errlen);
/* fsync() of a file by path (e.g. one another process wrote). */
int fs_fsync_file(const char *path, char *err, size_t errlen);

/* Bytes allocated on disk for a file or, recursively, a directory tree
 * (st_blocks, so holes do not count). */
unsigned long long fs_disk_usage(const char *path);

/* Runs argv[0] (looked up in PATH) with argv, stdin from /dev/null and
 * stdout+stderr captured together, in cwd (NULL = current directory).
 * Succeeds only if the command exits with status 0. If output is not NULL it
 * receives the captured text (malloc'd, NUL-terminated; the oldest part is
 * dropped beyond 8 MiB), also on failure (then possibly NULL). On failure
 * err names the command, how it ended and the last lines it printed. */
int run_command(const char *const argv[], const char *cwd, char **output, char *err,
                size_t errlen);

/* Formats a byte count as "272 MiB", "8.9 MiB", "51 KiB". */
const char *fs_human_size(unsigned long long bytes, char *buf, size_t buflen);

#endif
