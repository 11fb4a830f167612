/* The host side of the escape suite's guest half: attempts run as root
 * inside real sandboxes of a real vmhost (itest.h), and every pass
 * criterion is checked on the host. A program starts one vmhost on a jail
 * uid range of the suite's own and a witness sandbox, which must still
 * answer exec after every attempt; attempts that may wreck their guest get
 * a target sandbox of their own, the others share one. Around each attempt
 * the node's state (escape_node.h) is taken and compared: whatever the
 * attempt did, the node must be as it was once its target is deleted. */
#ifndef AIRLOCK_ESCAPE_GUEST_H
#define AIRLOCK_ESCAPE_GUEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/stat.h>
#include <sys/types.h>

#include "itest.h"

/* A range no other test uses (test_vmhost_jail: 900100000, the jail
 * programs of this suite: 9002xxxxx): the cgroup leaves and uid claims an
 * attempt could leave are this suite's alone. */
#define ESCAPE_GUEST_UID_BASE 900500000u
#define ESCAPE_GUEST_UID_COUNT 16u

/* The guest-side scripts (tests/escape/guest/) go to /root in every
 * sandbox the suite makes. */
#define ESCAPE_GUEST_SCRIPT_DIR "/root"

/* How long an attempt's sandbox gets to end after the attempt (a crash of
 * its QEMU shows within it), and to answer an exec when it still can
 * (under TCG on two shared cores). */
#define ESCAPE_SETTLE_MS 2000
#define ESCAPE_ANSWER_MS 5000

struct escape_sandbox {
    char *id;
    pid_t qemu;             /* as it was made */
};

/* The program's sandboxes: the witness (never attacked), the one the
 * program's non-destructive attempts share (id NULL when it has none),
 * and the current attempt's own target (id NULL when it made none). */
extern struct escape_sandbox escape_witness, escape_shared, escape_target;

/* Starts the program's vmhost (extra arguments NULL-terminated, may be
 * NULL) on the suite's uid range, the witness and, when shared, the
 * shared sandbox. 0, or -1 after printing why. */
int escape_guest_start(const char *const extra_args[], bool shared);
/* cmocka group fixtures: the start without extra arguments, with a
 * shared sandbox; the stop (every sandbox deleted, then vmhost, which
 * must leave nothing: itest_vmhost_stop). */
int escape_guest_group_setup(void **state);
int escape_guest_group_teardown(void **state);

/* cmocka per-test fixtures of every attempt: the setup takes the node's
 * state; the teardown deletes the attempt's target (which must leave no
 * directory or namespace) and fails unless the node's state is the one
 * taken before. */
int escape_attempt_setup(void **state);
int escape_attempt_teardown(void **state);
#define ESCAPE_ATTEMPT(fn) cmocka_unit_test_setup_teardown(fn, escape_attempt_setup, \
                                                           escape_attempt_teardown)

/* A new sandbox for the current attempt (escape_target), id "esc-<name>",
 * with the scripts; req (may be NULL: defaults) sizes it. */
void escape_target_create(const char *name,
                          const Airlock__Vmhost__V1__CreateSandboxRequest *req);

/* A sandbox that several attempts use in turn (a cold boot each would
 * cost seconds): made by the first of them, id "esc-<name>", with the
 * scripts. The node's state is taken again with it in place; dropping it
 * deletes it, which must leave the node as it was before it was made. */
void escape_kept_create(struct escape_sandbox *sb, const char *name);
void escape_kept_drop(struct escape_sandbox *sb);

/* A sandbox the program made by other means (a fork): its namespace
 * belongs to the node's state the attempts compare. */
void escape_note_id(const char *id);

/* sh -c script in sb, which must run; its exit code, stdout into out
 * (may be NULL). */
int escape_sh(const struct escape_sandbox *sb, const char *script, char *out, size_t outlen);
/* escape_sh that must exit 0. */
void escape_sh_ok(const struct escape_sandbox *sb, const char *script, char *out, size_t outlen);
/* Starts script in sb detached from the exec (its own session, output to
 * the serial console): for attempts that cut the guest's own channel. */
void escape_sh_detached(const struct escape_sandbox *sb, const char *script);
/* Whether sb's console.log shows marker within timeout_ms (false at once
 * when the sandbox ended first). */
bool escape_console_wait(const struct escape_sandbox *sb, const char *marker, int timeout_ms);
/* Whether sb answers `echo` within deadline_ms. */
bool escape_answers(const struct escape_sandbox *sb, int deadline_ms);

/* What an attempt left of its sandbox. */
enum escape_outcome {
    ESCAPE_ANSWERS, /* running, answers exec */
    ESCAPE_SILENT,  /* running, QEMU alive, the guest answers no more */
    ESCAPE_ENDED,   /* in error, with a reason (QEMU gone, or cut off) */
};
const char *escape_outcome_name(enum escape_outcome o);

/* Waits up to settle_ms for sb to end, then asks whether it answers
 * within answer_ms. It must be contained: QEMU alive unless the sandbox is
 * in error, and an error has a reason; vmhost alive and answering; the witness
 * answering exec with the QEMU it had. Prints the outcome, and puts an
 * end's reason (its first line) into reason (may be NULL). */
enum escape_outcome escape_assert_contained(const struct escape_sandbox *sb, int settle_ms,
                                            int answer_ms, char *reason, size_t reasonlen);

/* escape_assert_contained, and sb must still answer. */
void escape_assert_answers(const struct escape_sandbox *sb, int settle_ms);

/* Polls GetSandbox until sb is in error (true) or timeout_ms passed. */
bool escape_wait_ended(const struct escape_sandbox *sb, int timeout_ms);

/* <data dir>/store/sandboxes/<sb>/<name>. */
void escape_sandbox_path(const struct escape_sandbox *sb, const char *name, char *out,
                         size_t outlen);
/* The host's stat of sb's disk file. */
void escape_disk_stat(const struct escape_sandbox *sb, struct stat *st);

#endif
