/* The guest half's fixtures: vmhost, witness, targets, outcomes. */
#include "escape_guest.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "escape_node.h"
#include "fsutil.h"
#include "itest_assert.h"
#include "itest_group.h"

#define SCRIPT_MAX_BYTES (1u << 20)
#define POLL_MS 100
#define WITNESS_ID "witness"
#define SHARED_ID "esc-shared"

struct escape_sandbox escape_witness, escape_shared, escape_target;

/* The node's state before the current attempt, and before the kept
 * sandbox in use was made. */
static char *node_before, *kept_before;

/* Every sandbox id the program used: the node's state covers their
 * namespaces. */
#define MAX_IDS 128
static char *ids[MAX_IDS];
static size_t n_ids;

void escape_note_id(const char *id)
{
    for (size_t i = 0; i < n_ids; i++)
        if (strcmp(ids[i], id) == 0)
            return;
    if (n_ids == MAX_IDS)
        fail_msg("more than %d sandboxes", MAX_IDS);
    ids[n_ids++] = strdup(id);
}

static char *node_state(void)
{
    const struct escape_node_scope scope = { .vh = &itest_vh, .witness_qemu = escape_witness.qemu,
                                             .ids = (const char *const *)ids, .n_ids = n_ids };
    return escape_node_state(&scope);
}

void escape_sandbox_path(const struct escape_sandbox *sb, const char *name, char *out,
                         size_t outlen)
{
    assert_int_equal(fs_path(out, outlen, "%s/store/sandboxes/%s/%s", itest_vh.data_dir, sb->id,
                             name), 0);
}

void escape_disk_stat(const struct escape_sandbox *sb, struct stat *st)
{
    char path[PATH_MAX];
    escape_sandbox_path(sb, "disk.ext4", path, sizeof(path));
    assert_int_equal(stat(path, st), 0);
}

static void put_script(const char *id, const char *name)
{
    char src[PATH_MAX], dst[PATH_MAX], *text = NULL;
    size_t len = 0;
    assert_int_equal(fs_path(src, sizeof(src), "%s/%s", AIRLOCK_ESCAPE_GUEST_DIR, name), 0);
    assert_int_equal(fs_read_file(src, SCRIPT_MAX_BYTES, &text, &len, NULL, 0), 0);
    snprintf(dst, sizeof(dst), ESCAPE_GUEST_SCRIPT_DIR "/%s", name);
    char *details = NULL;
    grpc_status_code st = itest_write_file(&itest_vh, id, (const uint8_t *)dst, strlen(dst),
                                           (const uint8_t *)text, len, &details);
    free(text);
    if (st != GRPC_STATUS_OK)
        fail_msg("WriteFile %s into %s: %s", dst, id, details ? details : "");
    free(details);
}

/* Every .py of tests/escape/guest (not python's caches). */
static void put_scripts(const char *id)
{
    DIR *d = opendir(AIRLOCK_ESCAPE_GUEST_DIR);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (e->d_type == DT_REG && n > 3 && strcmp(e->d_name + n - 3, ".py") == 0)
            put_script(id, e->d_name);
    }
    closedir(d);
}

static pid_t qemu_pid_of(const char *id)
{
    Airlock__Vmhost__V1__Sandbox *sb = itest_assert_get(&itest_vh, id);
    pid_t pid = sb->qemu_pid;
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    return pid;
}

/* Creates sandbox id (req may be NULL) with the scripts into out. */
static void sandbox_make(struct escape_sandbox *out, const char *id,
                         const Airlock__Vmhost__V1__CreateSandboxRequest *req)
{
    Airlock__Vmhost__V1__CreateSandboxRequest defaults =
        AIRLOCK__VMHOST__V1__CREATE_SANDBOX_REQUEST__INIT;
    Airlock__Vmhost__V1__CreateSandboxRequest r = req ? *req : defaults;
    r.id = (char *)id;
    grpc_status_code st;
    char *details = NULL;
    escape_note_id(id);
    out->id = itest_create_sandbox_with(&itest_vh, &r, &st, &details);
    if (!out->id) {
        itest_vmhost_print_log_tail(&itest_vh);
        fail_msg("CreateSandbox %s: %s: %s", id, rpc_status_name(st), details ? details : "");
    }
    free(details);
    out->qemu = qemu_pid_of(id);
    assert_true(out->qemu > 1);
    put_scripts(id);
}

/* A failed assertion on the way fails the group's setup (cmocka catches
 * it in fixtures too): a node that cannot start its sandboxes runs no
 * attempt. */
int escape_guest_start(const char *const extra_args[], bool shared)
{
    char base[16], count[16];
    snprintf(base, sizeof(base), "%u", ESCAPE_GUEST_UID_BASE);
    snprintf(count, sizeof(count), "%u", ESCAPE_GUEST_UID_COUNT);
    const char *args[32] = { "--jail-uid-base", base, "--jail-uid-count", count };
    size_t n = 4;
    for (size_t i = 0; extra_args && extra_args[i] && n < 31; i++)
        args[n++] = extra_args[i];
    args[n] = NULL;
    if (itest_vmhost_start(&itest_vh, args) < 0)
        return -1;
    sandbox_make(&escape_witness, WITNESS_ID, NULL);
    if (shared)
        sandbox_make(&escape_shared, SHARED_ID, NULL);
    return 0;
}

int escape_guest_group_setup(void **state)
{
    (void)state;
    return escape_guest_start(NULL, true);
}

static void sandbox_drop(struct escape_sandbox *sb)
{
    if (sb->id && itest_vh.ch)
        itest_delete_sandbox(&itest_vh, sb->id);
    free(sb->id);
    sb->id = NULL;
}

int escape_guest_group_teardown(void **state)
{
    (void)state;
    sandbox_drop(&escape_target);
    sandbox_drop(&escape_shared);
    sandbox_drop(&escape_witness);
    free(node_before);
    free(kept_before);
    node_before = kept_before = NULL;
    while (n_ids)
        free(ids[--n_ids]);
    return itest_vmhost_stop(&itest_vh);
}

int escape_attempt_setup(void **state)
{
    (void)state;
    free(node_before);
    node_before = node_state();
    return 0;
}

/* Deletes sb; false (printing why) when it left anything. */
static bool sandbox_deleted(struct escape_sandbox *sb)
{
    if (!sb->id)
        return true;
    grpc_status_code st = itest_delete_sandbox(&itest_vh, sb->id);
    bool dir = itest_sandbox_path_exists(&itest_vh, sb->id, "");
    bool netns = itest_netns_exists(sb->id);
    bool qemu = kill(sb->qemu, 0) == 0;
    bool clean = st == GRPC_STATUS_OK && !dir && !netns && !qemu;
    if (!clean) {
        fprintf(stderr, "escape: delete %s: %s; directory %s, netns %s, QEMU %s\n", sb->id,
                rpc_status_name(st), dir ? "left" : "gone", netns ? "left" : "gone",
                qemu ? "left" : "gone");
        itest_vmhost_print_log_tail(&itest_vh);
    }
    free(sb->id);
    sb->id = NULL;
    return clean;
}

int escape_attempt_teardown(void **state)
{
    (void)state;
    bool clean = sandbox_deleted(&escape_target);
    char *after = node_state();
    bool same = node_before && escape_node_same(node_before, after);
    free(after);
    return clean && same ? 0 : -1;
}

void escape_target_create(const char *name,
                          const Airlock__Vmhost__V1__CreateSandboxRequest *req)
{
    char id[64];
    snprintf(id, sizeof(id), "esc-%s", name);
    assert_null(escape_target.id);
    sandbox_make(&escape_target, id, req);
}

void escape_kept_create(struct escape_sandbox *sb, const char *name)
{
    char id[64];
    snprintf(id, sizeof(id), "esc-%s", name);
    assert_null(sb->id);
    free(kept_before);
    kept_before = node_state();
    sandbox_make(sb, id, NULL);
    free(node_before);
    node_before = node_state();
}

void escape_kept_drop(struct escape_sandbox *sb)
{
    assert_true(sandbox_deleted(sb));
    char *after = node_state();
    bool same = kept_before && escape_node_same(kept_before, after);
    free(node_before);
    node_before = after;
    free(kept_before);
    kept_before = NULL;
    assert_true(same);
}

int escape_sh(const struct escape_sandbox *sb, const char *script, char *out, size_t outlen)
{
    return itest_assert_sh_code(&itest_vh, sb->id, script, out, outlen);
}

void escape_sh_ok(const struct escape_sandbox *sb, const char *script, char *out, size_t outlen)
{
    assert_int_equal(escape_sh(sb, script, out, outlen), 0);
}

void escape_sh_detached(const struct escape_sandbox *sb, const char *script)
{
    /* "$0": the script is an argument, not text spliced into a command. */
    const char *argv[] = { "sh", "-c", "setsid -f sh -c \"$0\" </dev/null >/dev/ttyS0 2>&1",
                           script, NULL };
    struct itest_exec_result r;
    itest_exec(&itest_vh, sb->id, argv, NULL, &r);
    if (r.status != GRPC_STATUS_OK || r.exit_code != 0)
        fail_msg("start of `%s` in %s: %s %s", script, sb->id, rpc_status_name(r.status),
                 r.details ? r.details : (char *)r.err);
    itest_exec_result_free(&r);
}

/* The sandbox's state and, in error, its reason (malloc'd, or NULL). */
static int sandbox_state(const struct escape_sandbox *sb, char **error)
{
    Airlock__Vmhost__V1__Sandbox *s = itest_assert_get(&itest_vh, sb->id);
    int state = s->state;
    if (error)
        *error = s->error && s->error[0] ? strdup(s->error) : NULL;
    protobuf_c_message_free_unpacked(&s->base, NULL);
    return state;
}

static bool in_error(const struct escape_sandbox *sb)
{
    return sandbox_state(sb, NULL) == AIRLOCK__VMHOST__V1__SANDBOX_STATE__SANDBOX_STATE_ERROR;
}

bool escape_wait_ended(const struct escape_sandbox *sb, int timeout_ms)
{
    int64_t deadline = clock_monotonic_ms() + timeout_ms;
    while (!in_error(sb)) {
        if (clock_monotonic_ms() > deadline)
            return false;
        usleep(POLL_MS * 1000);
    }
    return true;
}

static bool console_has(const struct escape_sandbox *sb, const char *marker)
{
    char path[PATH_MAX], *text = NULL;
    size_t len = 0;
    escape_sandbox_path(sb, "console.log", path, sizeof(path));
    if (fs_read_file(path, 64u << 20, &text, &len, NULL, 0) < 0)
        return false;
    bool found = memmem(text, len, marker, strlen(marker)) != NULL; /* the guest writes NULs too */
    free(text);
    return found;
}

bool escape_console_wait(const struct escape_sandbox *sb, const char *marker, int timeout_ms)
{
    int64_t deadline = clock_monotonic_ms() + timeout_ms;
    for (;;) {
        if (console_has(sb, marker))
            return true;
        /* An ended sandbox's console was drained into the file: one more
         * look, then no more waiting. */
        if (in_error(sb) || clock_monotonic_ms() > deadline)
            return console_has(sb, marker);
        usleep(POLL_MS * 1000);
    }
}

bool escape_answers(const struct escape_sandbox *sb, int deadline_ms)
{
    const char *argv[] = { "echo", "answers", NULL };
    const struct itest_exec_options o = { .deadline_ms = deadline_ms };
    struct itest_exec_result r;
    itest_exec(&itest_vh, sb->id, argv, &o, &r);
    bool ok = r.status == GRPC_STATUS_OK && r.exited && r.exit_code == 0 &&
              strcmp((char *)r.out, "answers\n") == 0;
    itest_exec_result_free(&r);
    return ok;
}

const char *escape_outcome_name(enum escape_outcome o)
{
    return o == ESCAPE_ANSWERS ? "answers" : o == ESCAPE_SILENT ? "silent" : "ended";
}

/* vmhost alive and answering; the witness answering with its own QEMU. */
static void assert_node_unharmed(void)
{
    assert_int_equal(kill(itest_vh.pid, 0), 0);
    Airlock__Vmhost__V1__ListSandboxesResponse *list = itest_list_sandboxes(&itest_vh);
    assert_non_null(list);
    protobuf_c_message_free_unpacked(&list->base, NULL);
    if (!escape_answers(&escape_witness, ITEST_CALL_TIMEOUT_MS)) {
        itest_vmhost_print_log_tail(&itest_vh);
        fail_msg("the witness sandbox does not answer exec");
    }
    assert_int_equal(qemu_pid_of(escape_witness.id), escape_witness.qemu);
}

enum escape_outcome escape_assert_contained(const struct escape_sandbox *sb, int settle_ms,
                                            int answer_ms, char *reason, size_t reasonlen)
{
    enum escape_outcome o;
    char *error = NULL;
    if (escape_wait_ended(sb, settle_ms)) {
        /* Its QEMU may live on: a guest cut off for lying keeps it. */
        sandbox_state(sb, &error);
        if (!error)
            fail_msg("sandbox %s is in error without a reason", sb->id);
        o = ESCAPE_ENDED;
    } else {
        if (kill(sb->qemu, 0) < 0)
            fail_msg("sandbox %s is not in error, but its QEMU %d is gone", sb->id,
                     (int)sb->qemu);
        o = escape_answers(sb, answer_ms) ? ESCAPE_ANSWERS : ESCAPE_SILENT;
    }
    size_t first_line = error ? strcspn(error, "\n") : 0;
    fprintf(stderr, "escape: %s: %s%s%.*s\n", sb->id, escape_outcome_name(o),
            error ? ": " : "", (int)first_line, error ? error : "");
    if (reason && reasonlen)
        snprintf(reason, reasonlen, "%.*s", (int)first_line, error ? error : "");
    free(error);
    assert_node_unharmed();
    return o;
}

void escape_assert_answers(const struct escape_sandbox *sb, int settle_ms)
{
    assert_int_equal(escape_assert_contained(sb, settle_ms, ESCAPE_ANSWER_MS, NULL, 0),
                     ESCAPE_ANSWERS);
}
