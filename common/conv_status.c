#include "conv_status.h"

#include <stdarg.h>
#include <stdio.h>

conv_status conv_fail(conv_msg *msg, conv_status status, const char *fmt, ...)
{
    if (msg != NULL) {
        va_list args;
        va_start(args, fmt);
        vsnprintf(msg->text, sizeof msg->text, fmt, args);
        va_end(args);
    }
    return status;
}

conv_status conv_check_pointers(const void *a, const char *a_name, const void *b,
                                const char *b_name, const void *c, const char *c_name,
                                conv_msg *msg)
{
    const char *null = a == NULL ? a_name : b == NULL ? b_name : c == NULL ? c_name : NULL;
    if (null != NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid pointer: %s is NULL", null);
    return CONV_OK;
}

void conv_msg_clear(conv_msg *msg)
{
    if (msg != NULL)
        msg->text[0] = '\0';
}

const char *conv_status_name(conv_status status)
{
    switch (status) {
    case CONV_OK: return "ok";
    case CONV_ERR_INVALID: return "invalid parameter";
    case CONV_ERR_UNSUPPORTED: return "unsupported";
    case CONV_ERR_NO_DEVICE: return "no CUDA device";
    case CONV_ERR_OUT_OF_MEMORY: return "out of memory";
    case CONV_ERR_CUDA: return "CUDA error";
    case CONV_ERR_UNAVAILABLE: return "unavailable";
    case CONV_HELP_SHOWN: return "help shown";
    }
    return "unknown status";
}
