/* common/conv_status: status codes, their names, and the one-line message
 * every failing function writes. */
#include <string.h>

#include "conv_status.h"
#include "conv_test_support.h"

Test(status, fail_formats_the_message_and_returns_the_status)
{
    conv_msg msg = {{0}};
    conv_status st = conv_fail(&msg, CONV_ERR_UNSUPPORTED, "stride %d needs %s", 2, "step 04");
    cr_assert_eq(st, CONV_ERR_UNSUPPORTED);
    cr_assert_str_eq(msg.text, "stride 2 needs step 04");
    cr_assert_eq(conv_fail(NULL, CONV_ERR_CUDA, "no message wanted"), CONV_ERR_CUDA);
}

Test(status, a_long_message_is_cut_to_the_buffer_not_past_it)
{
    conv_msg msg;
    memset(&msg, 'x', sizeof msg);
    char long_text[2 * CONV_MSG_LEN];
    memset(long_text, 'a', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = '\0';
    conv_fail(&msg, CONV_ERR_INVALID, "%s", long_text);
    cr_assert_eq(strlen(msg.text), CONV_MSG_LEN - 1);
}

Test(status, clear_empties_the_message)
{
    conv_msg msg = {{0}};
    conv_fail(&msg, CONV_ERR_INVALID, "bad");
    conv_msg_clear(&msg);
    cr_assert_str_empty(msg.text);
    conv_msg_clear(NULL);
}

Test(status, every_status_has_its_own_name)
{
    const conv_status all[] = {CONV_OK,
                               CONV_ERR_INVALID,
                               CONV_ERR_UNSUPPORTED,
                               CONV_ERR_NO_DEVICE,
                               CONV_ERR_OUT_OF_MEMORY,
                               CONV_ERR_CUDA,
                               CONV_ERR_UNAVAILABLE,
                               CONV_HELP_SHOWN};
    const size_t n = sizeof all / sizeof all[0];
    for (size_t i = 0; i < n; ++i) {
        const char *name = conv_status_name(all[i]);
        cr_assert(name != NULL && name[0] != '\0', "status %zu has no name", i);
        cr_assert_str_neq(name, "unknown status", "status %zu", i);
        for (size_t j = 0; j < i; ++j)
            cr_assert_str_neq(name, conv_status_name(all[j]), "statuses %zu and %zu", j, i);
    }
    cr_assert_str_eq(conv_status_name(CONV_ERR_NO_DEVICE), "no CUDA device");
    cr_assert_str_eq(conv_status_name((conv_status)99), "unknown status");
}
