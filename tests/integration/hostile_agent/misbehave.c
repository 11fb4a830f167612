#include "misbehave.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define HOSTILE_PROGRAM "airlock-hostile"
#define HOSTILE_LIST_PREFIX "/airlock-hostile/"
/* What a flood or an endless listing sends at most, then stalls: far more
 * than a host that queued it all could hold under the test's RSS bound. */
#define FLOOD_BYTES (64u << 20)
#define UNOPENED_STREAM 0x7fff0000u
#define ENDLESS_NAME_LEN 200
#define ENDLESS_PACE_MS 50
#define TRICKLE_PACE_MS 500
#define TRICKLE_MAX_MS (10 * 60 * 1000)

static void __attribute__((noreturn)) stall(void)
{
    for (;;)
        pause();
}

/* Writes all of buf to the non-blocking port; false once it fails. */
static bool port_write(int port, const uint8_t *buf, size_t len)
{
    while (len > 0) {
        ssize_t w = write(port, buf, len);
        if (w > 0) {
            buf += w;
            len -= (size_t)w;
        } else if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
            struct pollfd p = { .fd = port, .events = POLLOUT };
            poll(&p, 1, 1000);
        } else {
            return false;
        }
    }
    return true;
}

static bool send_frame(int port, GuestFrame *f)
{
    return frame_write_fd(port, f) == 0;
}

static bool send_started(int port, uint32_t stream)
{
    Airlock__Guest__V1__ExecStarted st = AIRLOCK__GUEST__V1__EXEC_STARTED__INIT;
    st.pid = 4242;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.stream_id = stream;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_EXEC_STARTED;
    f.exec_started = &st;
    return send_frame(port, &f);
}

static bool send_output(int port, uint32_t stream, size_t len)
{
    static uint8_t bytes[AIRLOCK_CHUNK_MAX];
    memset(bytes, 'F', sizeof(bytes));
    Airlock__Guest__V1__Output o = AIRLOCK__GUEST__V1__OUTPUT__INIT;
    o.fd = 1;
    o.data.data = bytes;
    o.data.len = len;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.stream_id = stream;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_OUTPUT;
    f.output = &o;
    return send_frame(port, &f);
}

static void flood(int port, uint32_t stream)
{
    if (!send_started(port, stream))
        return;
    for (size_t sent = 0; sent < FLOOD_BYTES; sent += AIRLOCK_CHUNK_MAX)
        if (!send_output(port, stream, AIRLOCK_CHUNK_MAX))
            return;
}

static void unknown_stream(int port, uint32_t stream)
{
    if (send_started(port, stream))
        send_output(port, UNOPENED_STREAM, 10);
}

static void oversize(int port)
{
    static uint8_t bytes[AIRLOCK_CHUNK_MAX];
    const uint8_t prefix[AIRLOCK_FRAME_HEADER] = { 0x10, 0, 0, 0 }; /* 256 MiB */
    if (port_write(port, prefix, sizeof(prefix)))
        port_write(port, bytes, sizeof(bytes));
}

/* GuestFrame{stream_id, output: Output{data: <claims 1 MiB, has 16 bytes>}}
 * in protobuf's wire format, the outer lengths true, the inner one not. */
static void lie_length(int port, uint32_t stream)
{
    uint8_t output[32], frame[64];
    size_t o = 0, n = AIRLOCK_FRAME_HEADER;
    output[o++] = 0x12;                              /* Output.data, bytes */
    output[o++] = 0x80, output[o++] = 0x80, output[o++] = 0x40; /* 1 MiB */
    memset(output + o, 'L', 16);
    o += 16;
    frame[n++] = 0x08;                               /* stream_id, varint */
    frame[n++] = (uint8_t)(stream | 0x80), frame[n++] = (uint8_t)(stream >> 7);
    frame[n++] = 0x62;                               /* output (12), bytes */
    frame[n++] = (uint8_t)o;
    memcpy(frame + n, output, o);
    n += o;
    uint32_t body = (uint32_t)(n - AIRLOCK_FRAME_HEADER);
    frame[0] = (uint8_t)(body >> 24), frame[1] = (uint8_t)(body >> 16);
    frame[2] = (uint8_t)(body >> 8), frame[3] = (uint8_t)body;
    port_write(port, frame, n);
}

static bool send_entries(int port, uint32_t stream, size_t count, size_t name_len)
{
    static Airlock__Guest__V1__FileInfo infos[AIRLOCK_DIR_BATCH_ENTRIES];
    static Airlock__Guest__V1__FileInfo *ptrs[AIRLOCK_DIR_BATCH_ENTRIES];
    static uint8_t name[ENDLESS_NAME_LEN];
    memset(name, 'n', sizeof(name));
    for (size_t i = 0; i < count; i++) {
        airlock__guest__v1__file_info__init(&infos[i]);
        infos[i].name.data = name;
        infos[i].name.len = name_len;
        ptrs[i] = &infos[i];
    }
    Airlock__Guest__V1__DirEntries de = AIRLOCK__GUEST__V1__DIR_ENTRIES__INIT;
    de.entries = ptrs;
    de.n_entries = count;
    de.done = false;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.stream_id = stream;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_DIR_ENTRIES;
    f.dir_entries = &de;
    return send_frame(port, &f);
}

static void endless_listing(int port, uint32_t stream)
{
    size_t batch = AIRLOCK_DIR_BATCH_ENTRIES * ENDLESS_NAME_LEN;
    for (size_t sent = 0; sent < FLOOD_BYTES; sent += batch) {
        if (!send_entries(port, stream, AIRLOCK_DIR_BATCH_ENTRIES, ENDLESS_NAME_LEN))
            return;
        usleep(ENDLESS_PACE_MS * 1000);
    }
}

static void trickle_listing(int port, uint32_t stream)
{
    for (int waited = 0; waited < TRICKLE_MAX_MS; waited += TRICKLE_PACE_MS) {
        if (!send_entries(port, stream, 1, 8))
            return;
        usleep(TRICKLE_PACE_MS * 1000);
    }
}

static bool bytes_equal(ProtobufCBinaryData b, const char *s)
{
    return b.len == strlen(s) && memcmp(b.data, s, b.len) == 0;
}

/* The name an Exec asks for, or NULL. */
static const char *exec_misbehaviour(const GuestFrame *f, char *buf, size_t buflen)
{
    if (f->body_case != AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_EXEC || f->exec->n_argv != 2 ||
        !bytes_equal(f->exec->argv[0], HOSTILE_PROGRAM))
        return NULL;
    snprintf(buf, buflen, "%.*s", (int)f->exec->argv[1].len, (const char *)f->exec->argv[1].data);
    return buf;
}

/* The name a List asks for, or NULL. */
static const char *list_misbehaviour(const GuestFrame *f, char *buf, size_t buflen)
{
    size_t plen = strlen(HOSTILE_LIST_PREFIX);
    if (f->body_case != AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_LIST ||
        f->list->path.len <= plen || memcmp(f->list->path.data, HOSTILE_LIST_PREFIX, plen) != 0)
        return NULL;
    snprintf(buf, buflen, "list-%.*s", (int)(f->list->path.len - plen),
             (const char *)f->list->path.data + plen);
    return buf;
}

bool misbehave_if_asked(int port, const GuestFrame *f)
{
    char buf[64];
    const char *what = exec_misbehaviour(f, buf, sizeof(buf));
    if (!what)
        what = list_misbehaviour(f, buf, sizeof(buf));
    if (!what)
        return false;
    fprintf(stderr, "hostile-agent: %s on stream %u\n", what, f->stream_id);
    uint32_t stream = f->stream_id;
    if (strcmp(what, "flood") == 0)
        flood(port, stream);
    else if (strcmp(what, "unknown-stream") == 0)
        unknown_stream(port, stream);
    else if (strcmp(what, "oversize") == 0)
        oversize(port);
    else if (strcmp(what, "lie-length") == 0)
        lie_length(port, stream);
    else if (strcmp(what, "list-endless") == 0)
        endless_listing(port, stream);
    else if (strcmp(what, "list-trickle") == 0)
        trickle_listing(port, stream);
    /* "stall", and the end of every other: serve nothing more. */
    fprintf(stderr, "hostile-agent: %s done; stalling\n", what);
    stall();
}
