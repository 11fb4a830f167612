/* Files in a sandbox: cat, put, ls-files, stat, mkdir, rm-file, mv, chmod. */
#include "args.h"
#include "ctl.h"
#include "json.h"
#include "fsutil.h"
#include "output.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define PUT_CHUNK (64 * 1024)

typedef Airlock__Guest__V1__FileInfo FileInfo;

static ProtobufCBinaryData path_bytes(const char *path)
{
    return (ProtobufCBinaryData){.len = strlen(path), .data = (uint8_t *)path};
}

static void file_json(struct json *j, const FileInfo *f)
{
    char type[16];
    ctl_format_enum(&airlock__guest__v1__file_type__descriptor, f->type, "FILE_TYPE_", type,
                    sizeof(type));
    json_object_begin(j, NULL);
    json_bytes(j, "name", f->name.data, f->name.len);
    json_string(j, "type", type);
    json_int(j, "size", (int64_t)f->size);
    json_int(j, "mode", f->mode);
    json_int(j, "mtime_unix_ms", f->mtime_unix_ms);
    json_int(j, "uid", f->uid);
    json_int(j, "gid", f->gid);
    if (f->link_target.len)
        json_bytes(j, "link_target", f->link_target.data, f->link_target.len);
    json_object_end(j);
}

static void print_file_json(const FileInfo *f)
{
    struct json j;
    json_begin(&j, stdout);
    file_json(&j, f);
    json_end(&j);
}

/* "drwxr-xr-x" from the type and permission bits. */
static void format_mode(const FileInfo *f, char buf[11])
{
    static const char type_chars[] = {'?', '-', 'd', 'l', '?'};
    buf[0] = f->type < sizeof(type_chars) ? type_chars[f->type] : '?';
    static const char rwx[] = "rwxrwxrwx";
    for (int i = 0; i < 9; i++)
        buf[1 + i] = f->mode & (0400u >> i) ? rwx[i] : '-';
    buf[10] = '\0';
}

/* One `ls -l` style line: mode uid gid size mtime name [-> target]. */
static void print_file_line(const FileInfo *f)
{
    char mode[11], mtime[32];
    format_mode(f, mode);
    ctl_format_time(f->mtime_unix_ms, mtime, sizeof(mtime));
    printf("%s %5u %5u %10llu %-20s ", mode, f->uid, f->gid, (unsigned long long)f->size, mtime);
    fwrite(f->name.data, 1, f->name.len, stdout);
    if (f->link_target.len) {
        fputs(" -> ", stdout);
        fwrite(f->link_target.data, 1, f->link_target.len, stdout);
    }
    putchar('\n');
}

/* An Empty-returning call; silent on success. */
static int call_for_empty(struct ctl *ctl, const char *method, const ProtobufCMessage *req)
{
    ProtobufCMessage *resp = NULL;
    if (ctl_unary(ctl, method, req, &airlock__vmhost__v1__empty__descriptor, &resp) < 0)
        return CTL_EXIT_ERROR;
    protobuf_c_message_free_unpacked(resp, NULL);
    return 0;
}

int ctl_cmd_cat(struct ctl *ctl, int argc, char **argv)
{
    if (ctl_operands_only(argc, argv, 2))
        return CTL_EXIT_USAGE;
    Airlock__Guest__V1__FileReadRequest fr = AIRLOCK__GUEST__V1__FILE_READ_REQUEST__INIT;
    fr.path = path_bytes(argv[optind + 1]);
    Airlock__Vmhost__V1__ReadFileRequest req = AIRLOCK__VMHOST__V1__READ_FILE_REQUEST__INIT;
    req.sandbox_id = argv[optind];
    req.request = &fr;
    if (ctl_connect(ctl) < 0)
        return CTL_EXIT_ERROR;
    /* No deadline: a large file may take long; the stream ends with it. */
    struct rpc_stream *s = rpc_stream_open(ctl->channel, VMHOST_METHOD("ReadFile"), 0);
    if (!s)
        return CTL_EXIT_ERROR;
    if (rpc_stream_send(s, &req.base) == 0 && rpc_stream_close_send(s) == 0) {
        Airlock__Vmhost__V1__FileChunk *chunk;
        while (rpc_stream_recv(s, &airlock__vmhost__v1__file_chunk__descriptor,
                               (ProtobufCMessage **)&chunk)) {
            int written = fs_write_all(STDOUT_FILENO, chunk->data.data, chunk->data.len);
            protobuf_c_message_free_unpacked(&chunk->base, NULL);
            if (written < 0) {
                perror("vmhostctl: writing stdout");
                rpc_stream_cancel(s);
                break;
            }
        }
    }
    return ctl_finish_stream(s) < 0 ? CTL_EXIT_ERROR : 0;
}

/* Fills buf from stdin (pipes deliver less per read): len bytes, fewer
 * only at the end of the input, or -1 on a read error. */
static ssize_t read_chunk(uint8_t *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = read(STDIN_FILENO, buf + got, len - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        got += (size_t)n;
    }
    return (ssize_t)got;
}

/* Streams stdin as WriteFile chunks after the header message; -1 when the
 * call failed (its status says why) or stdin could not be read. */
static int put_stream_stdin(struct rpc_stream *s, const Airlock__Vmhost__V1__WriteFileRequest *head)
{
    if (rpc_stream_send(s, &head->base) < 0)
        return -1;
    static uint8_t buf[PUT_CHUNK];
    Airlock__Vmhost__V1__WriteFileRequest chunk = AIRLOCK__VMHOST__V1__WRITE_FILE_REQUEST__INIT;
    for (;;) {
        ssize_t n = read_chunk(buf, sizeof(buf));
        if (n < 0) {
            perror("vmhostctl: reading stdin");
            rpc_stream_cancel(s); /* an incomplete file must not be committed */
            return -1;
        }
        if (n > 0) {
            chunk.data = (ProtobufCBinaryData){.len = (size_t)n, .data = buf};
            if (rpc_stream_send(s, &chunk.base) < 0)
                return -1;
        }
        if ((size_t)n < sizeof(buf))
            return rpc_stream_close_send(s);
    }
}

int ctl_cmd_put(struct ctl *ctl, int argc, char **argv)
{
    static const struct option options[] = {
        {"mode", required_argument, NULL, 'm'},
        {"append", no_argument, NULL, 'a'},
        {"parents", no_argument, NULL, 'p'},
        {0},
    };
    Airlock__Guest__V1__FileWriteRequest fw = AIRLOCK__GUEST__V1__FILE_WRITE_REQUEST__INIT;
    fw.mode = 0644;
    Airlock__Vmhost__V1__WriteFileRequest head = AIRLOCK__VMHOST__V1__WRITE_FILE_REQUEST__INIT;
    head.request = &fw;
    int opt;
    while ((opt = ctl_next_option(argc, argv, ":", options)) != -1) {
        switch (opt) {
        case 'm':
            if (ctl_parse_mode(optarg, &fw.mode) < 0)
                return ctl_usage_error(argv[0], "invalid --mode '%s'", optarg);
            break;
        case 'a':
            fw.append = true;
            break;
        case 'p':
            fw.make_parents = true;
            break;
        default:
            return CTL_EXIT_USAGE;
        }
    }
    if (ctl_expect_operands(argc, argv, 2))
        return CTL_EXIT_USAGE;
    head.sandbox_id = argv[optind];
    fw.path = path_bytes(argv[optind + 1]);
    if (ctl_connect(ctl) < 0)
        return CTL_EXIT_ERROR;
    struct rpc_stream *s = rpc_stream_open(ctl->channel, VMHOST_METHOD("WriteFile"), 0);
    if (!s)
        return CTL_EXIT_ERROR;
    FileInfo *info = NULL;
    if (put_stream_stdin(s, &head) == 0)
        rpc_stream_recv(s, &airlock__guest__v1__file_info__descriptor, (ProtobufCMessage **)&info);
    int rc = ctl_finish_stream(s) < 0 ? CTL_EXIT_ERROR : 0;
    if (rc == 0 && info && ctl->json)
        print_file_json(info);
    if (info)
        protobuf_c_message_free_unpacked(&info->base, NULL);
    return rc;
}

int ctl_cmd_ls_files(struct ctl *ctl, int argc, char **argv)
{
    if (ctl_operands_only(argc, argv, 2))
        return CTL_EXIT_USAGE;
    Airlock__Guest__V1__ListRequest lr = AIRLOCK__GUEST__V1__LIST_REQUEST__INIT;
    lr.path = path_bytes(argv[optind + 1]);
    Airlock__Vmhost__V1__ListDirRequest req = AIRLOCK__VMHOST__V1__LIST_DIR_REQUEST__INIT;
    req.sandbox_id = argv[optind];
    req.request = &lr;
    Airlock__Vmhost__V1__ListDirResponse *resp = NULL;
    if (ctl_unary(ctl, VMHOST_METHOD("ListDir"), &req.base,
                  &airlock__vmhost__v1__list_dir_response__descriptor,
                  (ProtobufCMessage **)&resp) < 0)
        return CTL_EXIT_ERROR;
    if (ctl->json) {
        struct json j;
        json_begin(&j, stdout);
        json_array_begin(&j, NULL);
        for (size_t i = 0; i < resp->n_entries; i++)
            file_json(&j, resp->entries[i]);
        json_array_end(&j);
        json_end(&j);
    } else {
        for (size_t i = 0; i < resp->n_entries; i++)
            print_file_line(resp->entries[i]);
    }
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    return 0;
}

int ctl_cmd_stat(struct ctl *ctl, int argc, char **argv)
{
    if (ctl_operands_only(argc, argv, 2))
        return CTL_EXIT_USAGE;
    Airlock__Guest__V1__StatRequest sr = AIRLOCK__GUEST__V1__STAT_REQUEST__INIT;
    sr.path = path_bytes(argv[optind + 1]);
    Airlock__Vmhost__V1__StatFileRequest req = AIRLOCK__VMHOST__V1__STAT_FILE_REQUEST__INIT;
    req.sandbox_id = argv[optind];
    req.request = &sr;
    FileInfo *info = NULL;
    if (ctl_unary(ctl, VMHOST_METHOD("StatFile"), &req.base,
                  &airlock__guest__v1__file_info__descriptor, (ProtobufCMessage **)&info) < 0)
        return CTL_EXIT_ERROR;
    if (ctl->json)
        print_file_json(info);
    else
        print_file_line(info);
    protobuf_c_message_free_unpacked(&info->base, NULL);
    return 0;
}

int ctl_cmd_mkdir(struct ctl *ctl, int argc, char **argv)
{
    static const struct option options[] = {
        {"parents", no_argument, NULL, 'p'},
        {"mode", required_argument, NULL, 'm'},
        {0},
    };
    Airlock__Guest__V1__MkdirRequest m = AIRLOCK__GUEST__V1__MKDIR_REQUEST__INIT;
    m.mode = 0755;
    Airlock__Vmhost__V1__MakeDirRequest req = AIRLOCK__VMHOST__V1__MAKE_DIR_REQUEST__INIT;
    req.request = &m;
    int opt;
    while ((opt = ctl_next_option(argc, argv, ":p", options)) != -1) {
        switch (opt) {
        case 'p':
            m.parents = true;
            break;
        case 'm':
            if (ctl_parse_mode(optarg, &m.mode) < 0)
                return ctl_usage_error(argv[0], "invalid --mode '%s'", optarg);
            break;
        default:
            return CTL_EXIT_USAGE;
        }
    }
    if (ctl_expect_operands(argc, argv, 2))
        return CTL_EXIT_USAGE;
    req.sandbox_id = argv[optind];
    m.path = path_bytes(argv[optind + 1]);
    return call_for_empty(ctl, VMHOST_METHOD("MakeDir"), &req.base);
}

int ctl_cmd_rm_file(struct ctl *ctl, int argc, char **argv)
{
    static const struct option options[] = {{"recursive", no_argument, NULL, 'r'}, {0}};
    Airlock__Guest__V1__RemoveRequest r = AIRLOCK__GUEST__V1__REMOVE_REQUEST__INIT;
    Airlock__Vmhost__V1__RemoveFileRequest req = AIRLOCK__VMHOST__V1__REMOVE_FILE_REQUEST__INIT;
    req.request = &r;
    int opt;
    while ((opt = ctl_next_option(argc, argv, ":r", options)) != -1) {
        if (opt != 'r')
            return CTL_EXIT_USAGE;
        r.recursive = true;
    }
    if (ctl_expect_operands(argc, argv, 2))
        return CTL_EXIT_USAGE;
    req.sandbox_id = argv[optind];
    r.path = path_bytes(argv[optind + 1]);
    return call_for_empty(ctl, VMHOST_METHOD("RemoveFile"), &req.base);
}

int ctl_cmd_mv(struct ctl *ctl, int argc, char **argv)
{
    if (ctl_operands_only(argc, argv, 3))
        return CTL_EXIT_USAGE;
    Airlock__Guest__V1__RenameRequest r = AIRLOCK__GUEST__V1__RENAME_REQUEST__INIT;
    r.from = path_bytes(argv[optind + 1]);
    r.to = path_bytes(argv[optind + 2]);
    Airlock__Vmhost__V1__RenameFileRequest req = AIRLOCK__VMHOST__V1__RENAME_FILE_REQUEST__INIT;
    req.sandbox_id = argv[optind];
    req.request = &r;
    return call_for_empty(ctl, VMHOST_METHOD("RenameFile"), &req.base);
}

int ctl_cmd_chmod(struct ctl *ctl, int argc, char **argv)
{
    if (ctl_operands_only(argc, argv, 3))
        return CTL_EXIT_USAGE;
    Airlock__Guest__V1__ChmodRequest c = AIRLOCK__GUEST__V1__CHMOD_REQUEST__INIT;
    if (ctl_parse_mode(argv[optind + 1], &c.mode) < 0)
        return ctl_usage_error(argv[0], "invalid MODE '%s'", argv[optind + 1]);
    c.path = path_bytes(argv[optind + 2]);
    Airlock__Vmhost__V1__ChmodFileRequest req = AIRLOCK__VMHOST__V1__CHMOD_FILE_REQUEST__INIT;
    req.sandbox_id = argv[optind];
    req.request = &c;
    return call_for_empty(ctl, VMHOST_METHOD("ChmodFile"), &req.base);
}
