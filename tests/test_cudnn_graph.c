/* common/conv_cudnn_graph: cuDNN's graph API as a reference. The host logic
 * (precision classes from numerical notes, the knob sets, the budget, the
 * tag) and what it says without a device run anywhere; the GPU suite is
 * gpu_reference, NVIDIA's closed code, kept out of the sanitizer runs
 * (cmake/ConvProject.cmake). */
#include <stdlib.h>
#include <string.h>

#include "conv_cuda.h"
#include "conv_cudnn.h"
#include "conv_cudnn_graph.h"
#include "conv_tensor.h"
#include "conv_test_support.h"

Test(cpu_cudnn_graph, classes_follow_the_numerical_notes_as_frameworks_read_them)
{
    conv_class cls = CONV_CLASS_COUNT;
    cr_assert(conv_cudnn_graph_class_of(0, 0, &cls) && cls == CONV_CLASS_FP32);
    cr_assert(conv_cudnn_graph_class_of(CONV_NOTE_FFT | CONV_NOTE_NONDETERMINISTIC, 0, &cls) &&
                  cls == CONV_CLASS_FP32,
              "FFT and nondeterminism keep float's arithmetic");
    cr_assert(conv_cudnn_graph_class_of(CONV_NOTE_WINOGRAD, 0, &cls) && cls == CONV_CLASS_FP32);
    cr_assert(conv_cudnn_graph_class_of(CONV_NOTE_TENSOR_CORE, 0, &cls) && cls == CONV_CLASS_TF32,
              "tensor cores on FP32 data are TF32");
    cr_assert(
        !conv_cudnn_graph_class_of(CONV_NOTE_TENSOR_CORE | CONV_NOTE_DOWN_CONVERT_INPUTS, 0, &cls),
        "FP32 inputs converted to half precision belong to no class");
    cr_assert(!conv_cudnn_graph_class_of(CONV_NOTE_DOWN_CONVERT_INPUTS, 0, &cls));
    cr_assert(!conv_cudnn_graph_class_of(CONV_NOTE_REDUCED_PRECISION_REDUCTION, 0, &cls));
    cr_assert(conv_cudnn_graph_class_of(CONV_NOTE_TENSOR_CORE, 1, &cls) && cls == CONV_CLASS_FP16);
    cr_assert(!conv_cudnn_graph_class_of(
                  CONV_NOTE_TENSOR_CORE | CONV_NOTE_REDUCED_PRECISION_REDUCTION, 1, &cls),
              "half sums are below the FP16 class, whose sums are FP32");
}

Test(cpu_cudnn_graph, a_tf32_search_also_times_strict_fp32_engines_but_not_the_reverse)
{
    cr_assert(conv_class_allows(CONV_CLASS_FP32, CONV_CLASS_FP32));
    cr_assert(!conv_class_allows(CONV_CLASS_FP32, CONV_CLASS_TF32));
    cr_assert(conv_class_allows(CONV_CLASS_TF32, CONV_CLASS_TF32));
    cr_assert(conv_class_allows(CONV_CLASS_TF32, CONV_CLASS_FP32));
    cr_assert(!conv_class_allows(CONV_CLASS_FP16, CONV_CLASS_TF32));
    cr_assert(!conv_class_allows(CONV_CLASS_TF32, CONV_CLASS_FP16));
}

/* Every choice once, in odometer order (the last knob fastest). */
Test(cpu_cudnn_graph, knob_sets_visit_every_choice_once_in_odometer_order)
{
    const conv_cudnn_knob knobs[3] = {{2, 0, 2, 1}, {14, 1, 7, 3}, {5, -1, -1, 1}};
    int64_t v[3], prev[3];
    conv_cudnn_knobs_first(knobs, 3, v);
    cr_assert(v[0] == 0 && v[1] == 1 && v[2] == -1);
    int sets = 1;
    memcpy(prev, v, sizeof v);
    while (conv_cudnn_knobs_next(knobs, 3, v)) {
        ++sets;
        cr_assert(v[0] >= 0 && v[0] <= 2 && (v[1] == 1 || v[1] == 4 || v[1] == 7) && v[2] == -1,
                  "set %d: %lld %lld %lld", sets, (long long)v[0], (long long)v[1],
                  (long long)v[2]);
        cr_assert(v[0] > prev[0] || (v[0] == prev[0] && v[1] > prev[1]), "not in order");
        memcpy(prev, v, sizeof v);
    }
    cr_assert_eq(sets, 3 * 3 * 1, "3 values of the first knob, 3 of the second, 1 of the third");
    cr_assert(v[0] == 0 && v[1] == 1 && v[2] == -1, "after the last set it starts over");
}

Test(cpu_cudnn_graph, a_knob_without_a_stride_steps_by_one_and_no_knobs_is_one_set)
{
    const conv_cudnn_knob k = {24, 3, 6, 0};
    int64_t v;
    conv_cudnn_knobs_first(&k, 1, &v);
    int sets = 1;
    while (conv_cudnn_knobs_next(&k, 1, &v))
        ++sets;
    cr_assert_eq(sets, 4, "3, 4, 5, 6");
    cr_assert(!conv_cudnn_knobs_next(NULL, 0, NULL), "an engine without knobs has its defaults");
}

Test(cpu_cudnn_graph, the_search_goes_on_past_its_budget_only_until_one_plan_is_timed)
{
    cr_assert(conv_cudnn_graph_keep_searching(0.0, 5.0, 0));
    cr_assert(conv_cudnn_graph_keep_searching(4.9, 5.0, 3));
    cr_assert(!conv_cudnn_graph_keep_searching(5.0, 5.0, 3), "the budget is spent");
    cr_assert(conv_cudnn_graph_keep_searching(60.0, 5.0, 0), "nothing timed yet: go on");
    conv_cudnn_graph_opts o = conv_cudnn_graph_opts_default();
    cr_assert(o.budget_s == CONV_CUDNN_GRAPH_BUDGET_MS / 1000.0 && o.repeat >= 1 && o.warmup >= 0);
    cr_assert_eq(o.workspace_cap, (size_t)CONV_CUDNN_GRAPH_WORKSPACE_MB << 20);
}

/* The runners-up, fastest first: where each time goes in a list of at most
 * 3, a tie behind the time found first, nothing for a full list's slowest. */
Test(cpu_cudnn_graph, runners_up_are_ranked_fastest_first_and_the_slowest_drop_out)
{
    const double ms[3] = {1.0, 2.0, 3.0};
    cr_assert_eq(conv_cudnn_graph_rank_slot(ms, 0, 3, 5.0), 0, "the first goes first");
    cr_assert_eq(conv_cudnn_graph_rank_slot(ms, 3, 3, 0.5), 0);
    cr_assert_eq(conv_cudnn_graph_rank_slot(ms, 3, 3, 1.5), 1);
    cr_assert_eq(conv_cudnn_graph_rank_slot(ms, 3, 3, 2.0), 2, "a tie goes behind");
    cr_assert_eq(conv_cudnn_graph_rank_slot(ms, 3, 3, 3.0), -1, "full, and no faster");
    cr_assert_eq(conv_cudnn_graph_rank_slot(ms, 3, 3, 9.0), -1);
    cr_assert_eq(conv_cudnn_graph_rank_slot(ms, 2, 3, 9.0), 2, "room left: at the end");
    cr_assert_eq(conv_cudnn_graph_rank_slot(ms, 0, 0, 1.0), -1, "no room at all");
}

Test(cpu_cudnn_graph, the_tag_names_the_engine_and_its_knobs_and_fits_its_buffer)
{
    char tag[64];
    conv_cudnn_graph_tag(28, NULL, NULL, 0, tag, sizeof tag);
    cr_assert_str_eq(tag, "engine 28, default knobs");
    const int64_t types[2] = {2, 14}, values[2] = {3, 4};
    conv_cudnn_graph_tag(0, types, values, 2, tag, sizeof tag);
    cr_assert_str_eq(tag, "engine 0, knobs 2=3 14=4");
    char small[12];
    conv_cudnn_graph_tag(1234, types, values, 2, small, sizeof small);
    cr_assert_eq(strlen(small), sizeof small - 1, "cut to the buffer: '%s'", small);
}

Test(cpu_cudnn_graph, the_notes_read_as_words_and_fit_their_buffer)
{
    char text[64];
    conv_cudnn_graph_notes_text(0, text, sizeof text);
    cr_assert_str_eq(text, "none");
    conv_cudnn_graph_notes_text(CONV_NOTE_TENSOR_CORE | CONV_NOTE_WINOGRAD, text, sizeof text);
    cr_assert_str_eq(text, "tensor core, winograd");
    char small[8];
    conv_cudnn_graph_notes_text(CONV_NOTE_DOWN_CONVERT_INPUTS | CONV_NOTE_FFT, small, sizeof small);
    cr_assert_eq(strlen(small), sizeof small - 1, "cut to the buffer: '%s'", small);
}

Test(cpu_cudnn_graph, bad_requests_are_refused_in_one_line_before_any_cuda_call)
{
    conv_test_hide_gpus(); /* a refusal must not depend on a device */
    conv_cudnn_graph_plan *plan = (conv_cudnn_graph_plan *)&plan; /* not NULL */
    conv_msg msg = {{0}};
    conv_cudnn_graph_opts o = conv_cudnn_graph_opts_default();
    conv_params p = conv_shape(1, 2, 9, 9, 2, 3, 3, 1, 1, 1);
    if (!conv_cudnn_compiled()) {
        cr_assert_eq(conv_cudnn_graph_plan_create(&plan, &p, CONV_CLASS_FP32, &o, NULL, NULL, NULL,
                                                  NULL, &msg),
                     CONV_ERR_UNAVAILABLE);
        cr_assert_null(plan);
        return;
    }
    conv_params bad = p;
    bad.r = 0;
    cr_assert_eq(conv_cudnn_graph_plan_create(&plan, &bad, CONV_CLASS_FP32, &o, NULL, NULL, NULL,
                                              NULL, &msg),
                 CONV_ERR_INVALID, "%s", msg.text);
    cr_assert_null(plan);
    cr_assert(strchr(msg.text, '\n') == NULL, "%s", msg.text);
    conv_msg bad_params = msg; /* the half plan refuses the same problem the same way */
    cr_assert_eq(conv_cudnn_graph_plan_create_half(&plan, &bad, &o, NULL, NULL, NULL, NULL, &msg),
                 CONV_ERR_INVALID);
    cr_assert_str_eq(msg.text, bad_params.text);
    cr_assert_null(plan);
    cr_assert_eq(
        conv_cudnn_graph_plan_create(&plan, &p, CONV_CLASS_FP16, &o, NULL, NULL, NULL, NULL, &msg),
        CONV_ERR_UNSUPPORTED);
    CONV_ASSERT_ONE_LINE(msg.text, "FP32 and TF32 classes");
    conv_cudnn_graph_opts none = o;
    none.budget_s = 0.0;
    cr_assert_eq(conv_cudnn_graph_plan_create(&plan, &p, CONV_CLASS_FP32, &none, NULL, NULL, NULL,
                                              NULL, &msg),
                 CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "budget");
    conv_status st =
        conv_cudnn_graph_plan_create(&plan, &p, CONV_CLASS_TF32, &o, NULL, NULL, NULL, NULL, &msg);
    cr_assert_null(plan);
    if (st == CONV_ERR_UNAVAILABLE) { /* built with cuDNN 8 */
        CONV_ASSERT_ONE_LINE(msg.text, "cuDNN 9");
        return;
    }
    cr_assert_eq(st, CONV_ERR_NO_DEVICE, "status %s: %s", conv_status_name(st), msg.text);
    cr_assert(strncmp(msg.text, "no CUDA device", 14) == 0, "%s", msg.text);
}

/* The descriptors need no device: every usual shape in both layouts is
 * described, and what cuDNN refuses comes back as one line naming the call. */
Test(cpu_cudnn_graph, descriptors_of_every_usual_shape_finalize_and_a_refusal_is_one_line)
{
    conv_msg msg = {{0}};
    conv_params shapes[CONV_USUAL_SHAPES];
    size_t n = conv_usual_shapes(shapes);
    if (!conv_cudnn_compiled()) {
        cr_assert_eq(conv_cudnn_graph_describe(&shapes[0], &msg), CONV_ERR_UNAVAILABLE);
        return;
    }
    for (size_t i = 0; i < n; ++i)
        for (int layout = 0; layout < 2; ++layout) {
            shapes[i].layout = layout ? CONV_LAYOUT_NHWC : CONV_LAYOUT_NCHW;
            conv_status st = conv_cudnn_graph_describe(&shapes[i], &msg);
            if (st == CONV_ERR_UNAVAILABLE) { /* cuDNN 8 */
                CONV_ASSERT_ONE_LINE(msg.text, "cuDNN 9");
                return;
            }
            CONV_ASSERT_OK(st, msg);
        }
    conv_params bad = shapes[1];
    bad.stride_h = 0; /* past conv_params_validate: cuDNN's own check */
    cr_assert_eq(conv_cudnn_graph_describe(&bad, &msg), CONV_ERR_CUDA);
    CONV_ASSERT_ONE_LINE(msg.text, "cudnnBackend");
}

/* The backward operations likewise: BACKWARD_DATA (dx from dy and w) and
 * BACKWARD_FILTER (dw from x and dy) finalize on every usual shape in both
 * layouts, the forward one through the pass-generic call too; a pass out of
 * range is refused in one line. */
Test(cpu_cudnn_graph, descriptors_of_every_pass_finalize_and_a_bad_pass_is_refused)
{
    conv_msg msg = {{0}};
    conv_params shapes[CONV_USUAL_SHAPES + 2];
    size_t n = conv_usual_shapes(shapes);
    shapes[n++] = conv_shape(2, 5, 9, 11, 3, 2, 4, 0, 3, 1); /* even filter, stride 3 */
    shapes[n++] = conv_shape(1, 2, 10, 9, 3, 3, 3, 0, 2, 1); /* rows no output reaches */
    if (!conv_cudnn_compiled()) {
        cr_assert_eq(conv_cudnn_graph_describe_pass(&shapes[0], CONV_PASS_DGRAD, &msg),
                     CONV_ERR_UNAVAILABLE);
        return;
    }
    for (int pass = 0; pass < CONV_PASS_COUNT; ++pass)
        for (size_t i = 0; i < n; ++i)
            for (int layout = 0; layout < 2; ++layout) {
                shapes[i].layout = layout ? CONV_LAYOUT_NHWC : CONV_LAYOUT_NCHW;
                conv_status st = conv_cudnn_graph_describe_pass(&shapes[i], (conv_pass)pass, &msg);
                if (st == CONV_ERR_UNAVAILABLE) { /* cuDNN 8 */
                    CONV_ASSERT_ONE_LINE(msg.text, "cuDNN 9");
                    return;
                }
                cr_assert_eq(st, CONV_OK, "%s on %s: %s", conv_pass_name((conv_pass)pass),
                             conv_shape_name(&shapes[i]), msg.text);
            }
    for (int pass = 1; pass < CONV_PASS_COUNT; ++pass) {
        conv_params bad = shapes[1];
        bad.stride_h = 0; /* past conv_params_validate: cuDNN's own check */
        cr_assert_eq(conv_cudnn_graph_describe_pass(&bad, (conv_pass)pass, &msg), CONV_ERR_CUDA);
        CONV_ASSERT_ONE_LINE(msg.text, "cudnnBackend");
    }
    cr_assert_eq(conv_cudnn_graph_describe_pass(&shapes[0], CONV_PASS_COUNT, &msg),
                 CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "pass must be forward, dgrad or wgrad");
}

/* Plans of the backward passes: a pass out of range is refused before any
 * CUDA call; without a device, every pass is an error and no plan. */
Test(cpu_cudnn_graph, backward_plans_refuse_a_bad_pass_and_need_a_device)
{
    conv_test_hide_gpus();
    conv_cudnn_graph_plan *plan = (conv_cudnn_graph_plan *)&plan; /* not NULL */
    conv_msg msg = {{0}};
    conv_cudnn_graph_opts o = conv_cudnn_graph_opts_default();
    conv_params p = conv_shape(2, 3, 9, 8, 4, 3, 3, 1, 2, 1);
    conv_status st = conv_cudnn_graph_plan_create_pass(&plan, &p, CONV_PASS_COUNT, CONV_CLASS_FP32,
                                                       &o, NULL, NULL, NULL, NULL, &msg);
    cr_assert_null(plan);
    if (!conv_cudnn_compiled()) {
        cr_assert_eq(st, CONV_ERR_UNAVAILABLE);
        return;
    }
    if (st == CONV_ERR_UNAVAILABLE) { /* built with cuDNN 8 */
        CONV_ASSERT_ONE_LINE(msg.text, "cuDNN 9");
        return;
    }
    cr_assert_eq(st, CONV_ERR_INVALID, "status %s: %s", conv_status_name(st), msg.text);
    CONV_ASSERT_ONE_LINE(msg.text, "pass must be forward, dgrad or wgrad");
    for (int pass = 0; pass < CONV_PASS_COUNT; ++pass) {
        plan = (conv_cudnn_graph_plan *)&plan;
        st = conv_cudnn_graph_plan_create_pass(&plan, &p, (conv_pass)pass, CONV_CLASS_TF32, &o,
                                               NULL, NULL, NULL, NULL, &msg);
        cr_assert_null(plan);
        cr_assert_eq(st, CONV_ERR_NO_DEVICE, "%s: status %s: %s", conv_pass_name((conv_pass)pass),
                     conv_status_name(st), msg.text);
    }
}

Test(cpu_cudnn_graph, an_empty_plan_is_handled_without_cuda)
{
    conv_msg msg = {{0}};
    cr_assert_neq(conv_cudnn_graph_forward(NULL, NULL, NULL, NULL, &msg), CONV_OK);
    cr_assert(msg.text[0] != '\0');
    cr_assert_not_null(conv_cudnn_graph_engine(NULL));
    cr_assert_eq(conv_cudnn_graph_workspace_bytes(NULL), 0);
    cr_assert_eq(conv_cudnn_graph_notes(NULL), 0);
    cr_assert_eq(conv_cudnn_graph_search_stats(NULL).timed, 0);
    cr_assert_eq(conv_cudnn_graph_pass(NULL), CONV_PASS_FORWARD);
    msg.text[0] = '\0';
    cr_assert_neq(conv_cudnn_graph_run(NULL, NULL, NULL, NULL, NULL, &msg), CONV_OK);
    cr_assert(msg.text[0] != '\0');
    msg.text[0] = '\0';
    cr_assert_neq(conv_cudnn_graph_finish(NULL, NULL, NULL, &msg), CONV_OK);
    cr_assert(msg.text[0] != '\0');
    msg.text[0] = '\0';
    cr_assert_neq(conv_cudnn_graph_plan_next(NULL, &msg), CONV_OK);
    cr_assert(msg.text[0] != '\0' && strchr(msg.text, '\n') == NULL, "%s", msg.text);
    cr_assert_str_eq(conv_cudnn_graph_left_out(NULL), "");
    conv_cudnn_graph_plan_destroy(NULL);
}

/* ---------------------------------------------------------------- GPU */

/* A short search, so that the suite stays quick. */
static conv_cudnn_graph_opts quick(void)
{
    conv_cudnn_graph_opts o = conv_cudnn_graph_opts_default();
    o.budget_s = 1.0;
    o.repeat = 2;
    return o;
}

/* The graph reference of class cls on p, checked against the double
 * reference within the bound its engine's notes imply; returns the notes. */
static unsigned check_graph(conv_params p, conv_class cls, const conv_cudnn_graph_opts *o)
{
    conv_gpu_problem pb = conv_test_device_problem(p, 21);
    conv_gpu_result res;
    char engine[96];
    conv_msg msg = {{0}};
    conv_status st =
        conv_gpu_problem_measure_cudnn_graph(&pb, cls, o, 1, 2, &res, engine, sizeof engine, &msg);
    unsigned notes = 0;
    if (st == CONV_ERR_UNSUPPORTED) {
        CONV_ASSERT_ONE_LINE(msg.text, "no ");
        cr_log_info("cuDNN graph %s on %s: %s", conv_class_name(cls), conv_shape_name(&p),
                    msg.text);
        notes = ~0u;
    } else {
        CONV_ASSERT_OK(st, msg);
        cr_assert(res.passed, "cuDNN graph %s (%s) on %s: %s", conv_class_name(cls), engine,
                  conv_shape_name(&p), res.verdict);
        cr_assert_eq(res.canary_bad, 0);
        cr_assert(strncmp(engine, "engine ", 7) == 0, "the row names its engine: '%s'", engine);
        cr_log_info("cuDNN graph %s on %s: %s; %s", conv_class_name(cls), conv_shape_name(&p),
                    engine, res.verdict);
    }
    conv_gpu_problem_destroy(&pb);
    return notes;
}

Test(gpu_reference, cudnn_graph_fp32_matches_the_double_reference_in_both_layouts)
{
    CONV_TEST_REQUIRE_CUDNN();
    conv_params shapes[] = {
        conv_shape(1, 6, 96, 64, 6, 6, 6, 0, 1, 1), conv_shape(2, 3, 29, 31, 5, 3, 3, 1, 1, 1),
        conv_shape(1, 2, 31, 29, 3, 5, 5, 2, 2, 1), conv_shape(3, 4, 23, 17, 2, 3, 3, 2, 1, 2),
        conv_shape(1, 1, 1, 1, 1, 1, 1, 0, 1, 1),   conv_shape(2, 64, 14, 14, 64, 1, 1, 0, 2, 1),
    };
    conv_cudnn_graph_opts o = quick();
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i)
        for (int layout = 0; layout < 2; ++layout) {
            shapes[i].layout = layout ? CONV_LAYOUT_NHWC : CONV_LAYOUT_NCHW;
            unsigned notes = check_graph(shapes[i], CONV_CLASS_FP32, &o);
            cr_assert(notes != ~0u, "cuDNN has no strict FP32 engine for %s",
                      conv_shape_name(&shapes[i]));
            cr_assert(!(notes & (CONV_NOTE_TENSOR_CORE | CONV_NOTE_DOWN_CONVERT_INPUTS)),
                      "a strict FP32 search kept an engine with notes %#x", notes);
        }
}

/* TF32 allowed: within the TF32 bound (its engine may also be a strict FP32
 * one, which is then faster), never an engine that converts to half. */
Test(gpu_reference, cudnn_graph_tf32_is_within_its_bound_and_never_down_converts)
{
    CONV_TEST_REQUIRE_CUDNN();
    conv_cudnn_graph_opts o = quick();
    for (int layout = 0; layout < 2; ++layout) {
        conv_params p = conv_shape(2, 32, 20, 22, 64, 3, 3, 1, 1, 1);
        p.layout = layout ? CONV_LAYOUT_NHWC : CONV_LAYOUT_NCHW;
        unsigned notes = check_graph(p, CONV_CLASS_TF32, &o);
        cr_assert(notes != ~0u, "no TF32-allowed engine at all for %s", conv_shape_name(&p));
        cr_assert(!(notes & CONV_NOTE_DOWN_CONVERT_INPUTS), "notes %#x", notes);
    }
}

/* The limits hold: a workspace cap of 0 keeps only engines without one, and
 * a budget too short for a second candidate still gives one plan. */
Test(gpu_reference, cudnn_graph_keeps_to_its_workspace_cap_and_its_budget)
{
    CONV_TEST_REQUIRE_CUDNN();
    conv_params p = conv_shape(2, 16, 24, 24, 32, 3, 3, 1, 1, 1);
    conv_gpu_problem pb = conv_test_device_problem(p, 5);
    conv_msg msg = {{0}};
    conv_cudnn_graph_opts o = quick();
    o.workspace_cap = 0;
    conv_cudnn_graph_plan *plan = NULL;
    conv_status st = conv_cudnn_graph_plan_create(&plan, &p, CONV_CLASS_FP32, &o, pb.d_x, pb.d_w,
                                                  pb.d_y, pb.stream, &msg);
    if (st == CONV_OK) {
        cr_assert_eq(conv_cudnn_graph_workspace_bytes(plan), 0, "%s",
                     conv_cudnn_graph_engine(plan));
        conv_cudnn_graph_plan_destroy(plan);
    } else {
        cr_assert_eq(st, CONV_ERR_UNSUPPORTED, "%s", msg.text);
        CONV_ASSERT_ONE_LINE(msg.text, "workspace cap");
    }
    o = quick();
    o.budget_s = 1e-9;
    CONV_ASSERT_OK(conv_cudnn_graph_plan_create(&plan, &p, CONV_CLASS_FP32, &o, pb.d_x, pb.d_w,
                                                pb.d_y, pb.stream, &msg),
                   msg);
    conv_cudnn_graph_stats s = conv_cudnn_graph_search_stats(plan);
    cr_assert_eq(s.timed, 1, "one plan timed, then the budget stops the search (%d timed)",
                 s.timed);
    cr_assert(s.cut_by_budget || s.candidates == s.timed + s.other_class + s.unsupported,
              "the search ended by its budget");
    conv_cudnn_graph_plan_destroy(plan);
    conv_gpu_problem_destroy(&pb);
}

/* The search keeps its runners-up: conv_cudnn_graph_plan_next takes another
 * engine each time, which runs and is right, and the one before joins the
 * engines left out; after the last, one line and the last engine stays. As
 * many engines as were timed, up to 1 + CONV_CUDNN_GRAPH_RUNNERS_UP. */
Test(gpu_reference, the_next_engine_is_another_one_and_right)
{
    CONV_TEST_REQUIRE_CUDNN();
    conv_params p = conv_shape(2, 16, 24, 24, 32, 3, 3, 1, 1, 1);
    conv_gpu_problem pb = conv_test_device_problem(p, 9);
    const size_t ny = conv_output_elems(&p);
    float *y = malloc(ny * sizeof(float));
    cr_assert_not_null(y);
    conv_msg msg = {{0}};
    conv_cudnn_graph_opts o = quick();
    conv_cudnn_graph_plan *plan = NULL;
    CONV_ASSERT_OK(conv_cudnn_graph_plan_create(&plan, &p, CONV_CLASS_FP32, &o, pb.d_x, pb.d_w,
                                                pb.d_y, pb.stream, &msg),
                   msg);
    cr_assert_str_eq(conv_cudnn_graph_left_out(plan), "");
    const int timed = conv_cudnn_graph_search_stats(plan).timed;
    int engines = 1;
    char last[96];
    for (;;) {
        CONV_ASSERT_OK(conv_device_poison(pb.d_y, ny, &msg), msg);
        CONV_ASSERT_OK(conv_cudnn_graph_run(plan, pb.d_x, pb.d_w, pb.d_y, pb.stream, &msg), msg);
        cr_assert_eq(cudaStreamSynchronize(pb.stream), cudaSuccess);
        CONV_ASSERT_OK(conv_device_download(y, pb.d_y, ny, &msg), msg);
        conv_verify_report rep = conv_verify_full(
            &p, pb.h_x, pb.h_w, y, conv_verify_bound(conv_cudnn_graph_bound_factor(plan, &p)));
        CONV_ASSERT_REPORT(rep, conv_cudnn_graph_engine(plan), &p);
        conv_test_assert_canary(pb.d_y, ny, "%s", conv_cudnn_graph_engine(plan));
        snprintf(last, sizeof last, "%s", conv_cudnn_graph_engine(plan));
        if (conv_cudnn_graph_plan_next(plan, &msg) != CONV_OK)
            break;
        ++engines;
        cr_assert_str_neq(conv_cudnn_graph_engine(plan), last);
        cr_assert(strstr(conv_cudnn_graph_left_out(plan), last) != NULL, "%s",
                  conv_cudnn_graph_left_out(plan));
    }
    CONV_ASSERT_ONE_LINE(msg.text, "no other engine");
    cr_assert_str_eq(conv_cudnn_graph_engine(plan), last, "the last engine stays");
    const int kept = 1 + CONV_CUDNN_GRAPH_RUNNERS_UP;
    cr_assert_eq(engines, timed < kept ? timed : kept, "%d engines of %d timed", engines, timed);
    conv_cudnn_graph_plan_destroy(plan);
    conv_gpu_problem_destroy(&pb);
    free(y);
}

/* The log has a line for every candidate the search counted and a time for
 * every one it timed, and the plan kept (on a problem where later candidates
 * need larger workspaces) still runs right after the search. */
Test(gpu_reference, the_search_log_accounts_for_every_candidate)
{
    CONV_TEST_REQUIRE_CUDNN();
    conv_params p = conv_shape_nhwc(2, 32, 30, 26, 48, 5, 5, 2, 1, 1);
    conv_gpu_problem pb = conv_test_device_problem(p, 13);
    conv_cudnn_graph_opts o = quick();
    o.budget_s = 3.0;
    o.log = tmpfile();
    o.label = "log test";
    cr_assert_not_null(o.log);
    conv_cudnn_graph_log_header(o.log);
    conv_gpu_result res;
    char engine[96];
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_gpu_problem_measure_cudnn_graph(&pb, CONV_CLASS_TF32, &o, 1, 2, &res,
                                                        engine, sizeof engine, &msg),
                   msg);
    cr_assert(res.passed, "%s: %s", engine, res.verdict);
    int timed = 0, counted = 0;
    cr_assert_eq(
        sscanf(strstr(res.verdict, "search: "), "search: %d timed of %d", &timed, &counted), 2,
        "%s", res.verdict);
    rewind(o.log);
    char line[512];
    int lines = 0, timed_lines = 0, kept = 0;
    cr_assert_not_null(fgets(line, sizeof line, o.log));
    cr_assert(strncmp(line, "problem,pass,class,source,engine,", 33) == 0, "header '%s'", line);
    while (fgets(line, sizeof line, o.log) != NULL) {
        cr_assert(strncmp(line, "\"log test\",forward,TF32,", 24) == 0, "line '%s'", line);
        ++lines;
        timed_lines += strstr(line, ",timed,") != NULL;
        char quoted[110];
        snprintf(quoted, sizeof quoted, "\"%s\"", engine);
        kept += strstr(line, quoted) != NULL && strstr(line, ",timed,") != NULL;
    }
    fclose(o.log);
    cr_assert_eq(lines, counted, "a log line per candidate counted (%d lines)", lines);
    cr_assert_eq(timed_lines, timed, "a time per candidate timed (%d lines)", timed_lines);
    cr_assert_eq(kept, 1, "the kept engine '%s' is among the timed lines once", engine);
    conv_gpu_problem_destroy(&pb);
}

/* The row through the rows' policy: its label names the engine, its class
 * is the one asked for. */
Test(gpu_reference, the_cudnn_graph_rows_name_their_engine)
{
    CONV_TEST_REQUIRE_CUDNN();
    conv_params p = conv_shape(1, 8, 17, 19, 8, 3, 3, 1, 1, 1);
    conv_gpu_problem pb = conv_test_device_problem(p, 9);
    conv_row rows[2] = {conv_row_cudnn_graph(CONV_CLASS_FP32),
                        conv_row_cudnn_graph(CONV_CLASS_TF32)};
    cr_assert(rows[1].cls == CONV_CLASS_TF32 && conv_row_is_cudnn(&rows[0]));
    conv_run_opts o = {1, 2, 0, 1, 0.0, quick()};
    double ref_ms[CONV_MAX_REFS];
    cr_assert_eq(conv_rows_check(rows, 2, &p, NULL, 0), 0, "cuDNN rows are no program's own");
    cr_assert(rows[0].state == CONV_ROW_PENDING && rows[1].state == CONV_ROW_PENDING);
    cr_assert_eq(conv_rows_run(&pb, rows, 2, &o, ref_ms), 0);
    for (int i = 0; i < 2; ++i) {
        if (rows[i].state == CONV_ROW_SKIPPED) { /* TF32 below compute capability 8.0 */
            cr_assert_eq(i, 1, "%s", rows[i].why);
            continue;
        }
        cr_assert_eq(rows[i].state, CONV_ROW_OK, "%s: %s", rows[i].name, rows[i].why);
        cr_assert(strstr(rows[i].label, "(engine ") != NULL, "label '%s'", rows[i].label);
        cr_assert(strstr(rows[i].res.verdict, "search:") != NULL, "%s", rows[i].res.verdict);
    }
    conv_gpu_problem_destroy(&pb);
}
