/* conv2d_auto's rows (common/conv_rows.h): "auto FP32" (key "auto"), "auto
 * TF32" (key "auto-tf32") and "auto FP16" (key "auto-fp16"; an FP16 kernel
 * is skipped with the reason where x or w holds values FP16 cannot, and
 * converts its inputs inside its timing), the launcher as a user calls it, its
 * workspace allocated around the measurement, verified within the bound of
 * the kernel it chose; after a verified run the verdict names that kernel
 * and the branch of the rule. For a backward problem (p->pass) the rows run
 * that pass (conv_row_grad), verified within the chosen step 10 kernel's
 * bound. */
#ifndef AUTO_ROWS_H
#define AUTO_ROWS_H

#include "conv_auto.h"
#include "conv_rows.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AUTO_ROW_COUNT 3

/* Writes the three rows for p->pass (p NULL: the forward pass; select is
 * unused); returns how many were written. */
int conv_auto_rows(const conv_params *p, const char *select, conv_row *rows, int max_rows);

/* The choice a row ran with after its setup (NULL for a row that is not one
 * of these, or before its setup). */
const conv_auto_choice *conv_auto_row_choice(const conv_row *row);

#ifdef __cplusplus
}
#endif

#endif /* AUTO_ROWS_H */
