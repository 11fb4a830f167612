/* vmhost's sandbox states (vmhost/sb_state.h), without QEMU: the table
 * allows every move the lifecycle makes — including the ways back of a
 * failed suspend, resume or record write, and adoption settling from
 * creating — and nothing else: no skipping suspending, no leaving
 * deleted, no resuming what is not suspended. Names round-trip for the
 * states records hold, and only for those. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sb_state.h"

struct move {
    enum sb_state from, to;
};

/* Every move vmhost makes (the sites: sandbox.c, sandbox_pause.c,
 * sandbox_build.c, sandbox_delete.c, sandbox_vm.c, sandbox_suspend.c,
 * checkpoint.c, checkpoint_restore.c, sandbox_migrate.c,
 * sandbox_adopt.c). */
static const struct move made[] = {
    { SB_NONE, SB_CREATING },
    { SB_CREATING, SB_RUNNING },     { SB_CREATING, SB_ERROR },
    { SB_CREATING, SB_PAUSED },      { SB_CREATING, SB_SUSPENDED }, /* adoption */
    { SB_RUNNING, SB_PAUSED },       { SB_PAUSED, SB_RUNNING },
    { SB_RUNNING, SB_SUSPENDING },   { SB_PAUSED, SB_SUSPENDING },
    { SB_SUSPENDING, SB_SUSPENDED }, { SB_SUSPENDING, SB_RUNNING },
    { SB_SUSPENDING, SB_PAUSED },    { SB_SUSPENDED, SB_SUSPENDING },
    { SB_SUSPENDED, SB_RESUMING },   { SB_RESUMING, SB_RUNNING },
    { SB_RESUMING, SB_SUSPENDED },   { SB_ERROR, SB_SUSPENDED },
    { SB_RUNNING, SB_CHECKPOINTING }, { SB_CHECKPOINTING, SB_RUNNING },
    { SB_RUNNING, SB_RESTORING },    { SB_PAUSED, SB_RESTORING },
    { SB_ERROR, SB_RESTORING },      { SB_RESTORING, SB_RUNNING },
    { SB_RESTORING, SB_ERROR },      { SB_RUNNING, SB_ERROR },
    { SB_PAUSED, SB_ERROR },         { SB_SUSPENDING, SB_ERROR },
    { SB_RESUMING, SB_ERROR },       { SB_CHECKPOINTING, SB_ERROR },
    { SB_RUNNING, SB_DELETING },     { SB_ERROR, SB_DELETING },
    { SB_SUSPENDED, SB_DELETING },   { SB_CREATING, SB_DELETING },
    { SB_RUNNING, SB_MIGRATING },    { SB_MIGRATING, SB_RUNNING },
    { SB_MIGRATING, SB_DELETING },   { SB_MIGRATING, SB_ERROR },
    { SB_DELETING, SB_DELETED },
};

static const struct move refused[] = {
    { SB_NONE, SB_RUNNING },           /* nothing runs before it is created */
    { SB_RUNNING, SB_SUSPENDED },      /* a suspend always passes suspending */
    { SB_PAUSED, SB_SUSPENDED },
    { SB_SUSPENDED, SB_RUNNING },      /* a resume always passes resuming */
    { SB_SUSPENDED, SB_PAUSED },
    { SB_PAUSED, SB_CHECKPOINTING },   /* only a running sandbox is checkpointed */
    { SB_PAUSED, SB_RESUMING },        /* resuming is for suspended ones */
    { SB_SUSPENDED, SB_ERROR },        /* no QEMU to die */
    { SB_ERROR, SB_RUNNING },          /* only a restore brings it back */
    { SB_DELETED, SB_RUNNING },        /* deleted is the end */
    { SB_DELETED, SB_DELETING },
    { SB_DELETING, SB_RUNNING },
    { SB_DELETING, SB_ERROR },
    { SB_RUNNING, SB_CREATING },
    { SB_RUNNING, SB_NONE },
    { SB_PAUSED, SB_MIGRATING },       /* only a running guest migrates live */
    { SB_MIGRATING, SB_PAUSED },
    { SB_MIGRATING, SB_SUSPENDING },
};

static void test_every_move_made_is_allowed(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(made) / sizeof(*made); i++)
        if (!sb_state_allows(made[i].from, made[i].to))
            fail_msg("%s -> %s refused", sb_state_name(made[i].from), sb_state_name(made[i].to));
}

static void test_other_moves_are_refused(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(refused) / sizeof(*refused); i++)
        if (sb_state_allows(refused[i].from, refused[i].to))
            fail_msg("%s -> %s allowed", sb_state_name(refused[i].from),
                     sb_state_name(refused[i].to));
    /* Out of range either way. */
    assert_false(sb_state_allows((enum sb_state)SB_STATE_COUNT, SB_RUNNING));
    assert_false(sb_state_allows(SB_RUNNING, (enum sb_state)-1));
}

static void test_staying_is_allowed(void **state)
{
    (void)state;
    for (int s = 0; s < SB_STATE_COUNT; s++)
        assert_true(sb_state_allows((enum sb_state)s, (enum sb_state)s));
}

/* Every state but deleted can be torn down; deleted goes nowhere. */
static void test_deleting_from_anywhere_deleted_is_the_end(void **state)
{
    (void)state;
    for (int s = SB_CREATING; s < SB_DELETING; s++)
        assert_true(sb_state_allows((enum sb_state)s, SB_DELETING));
    for (int s = 0; s < SB_STATE_COUNT; s++)
        if (s != SB_DELETED)
            assert_false(sb_state_allows(SB_DELETED, (enum sb_state)s));
}

static void test_names_and_classes(void **state)
{
    (void)state;
    assert_string_equal(sb_state_name(SB_CHECKPOINTING), "checkpointing");
    assert_string_equal(sb_state_name(SB_NONE), "none");
    assert_string_equal(sb_state_name((enum sb_state)99), "none");
    for (int s = 0; s < SB_STATE_COUNT; s++) {
        enum sb_state st = (enum sb_state)s;
        /* Records hold stable states: those names come back, no other. */
        assert_int_equal(sb_state_from_name(sb_state_name(st)), sb_state_stable(st) ? st : SB_NONE);
        /* An operation owns a busy sandbox; none is both. */
        assert_false(sb_state_busy(st) && sb_state_stable(st));
    }
    assert_int_equal(sb_state_from_name(NULL), SB_NONE);
    assert_int_equal(sb_state_from_name("Running"), SB_NONE);
    assert_true(sb_state_busy(SB_SUSPENDING) && sb_state_busy(SB_CREATING));
    assert_false(sb_state_busy(SB_PAUSED));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_move_made_is_allowed),
        cmocka_unit_test(test_other_moves_are_refused),
        cmocka_unit_test(test_staying_is_allowed),
        cmocka_unit_test(test_deleting_from_anywhere_deleted_is_the_end),
        cmocka_unit_test(test_names_and_classes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
