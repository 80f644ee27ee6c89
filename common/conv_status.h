/* Status codes and one-line error messages, shared by every function of the
 * project that can fail. Functions return a conv_status and, when given a
 * conv_msg, write one line that names the problem (a parameter, a CUDA call).
 * Nothing in common/ or in a step's library calls exit(). */
#ifndef CONV_STATUS_H
#define CONV_STATUS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    CONV_OK = 0,
    CONV_ERR_INVALID,     /* a parameter is out of range or inconsistent */
    CONV_ERR_UNSUPPORTED, /* valid, but this kernel or path does not handle it */
    CONV_ERR_NO_DEVICE,   /* no usable CUDA device (or no driver) */
    CONV_ERR_OUT_OF_MEMORY,
    CONV_ERR_CUDA,        /* any other CUDA, cuBLAS or cuDNN failure */
    CONV_ERR_UNAVAILABLE, /* a library was not found at build time */
    CONV_HELP_SHOWN       /* not an error: --help was printed */
} conv_status;

#define CONV_MSG_LEN 320

/* One line of text describing the last failure. */
typedef struct {
    char text[CONV_MSG_LEN];
} conv_msg;

/* Formats the message into msg (when msg is not NULL) and returns status, so
 * that a failing function can write: return conv_fail(msg, CONV_ERR_INVALID, ...); */
conv_status conv_fail(conv_msg *msg, conv_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* The argument check most functions start with: CONV_ERR_INVALID and
 * "invalid pointer: <name> is NULL" for the first of the three pointers that
 * is NULL (a_name names a, ...); CONV_OK when none is. */
conv_status conv_check_pointers(const void *a, const char *a_name, const void *b,
                                const char *b_name, const void *c, const char *c_name,
                                conv_msg *msg);

/* Clears a message (an empty string means "no error"). */
void conv_msg_clear(conv_msg *msg);

/* A short name for a status, e.g. "invalid parameter". */
const char *conv_status_name(conv_status status);

#ifdef __cplusplus
}
#endif

#endif /* CONV_STATUS_H */
