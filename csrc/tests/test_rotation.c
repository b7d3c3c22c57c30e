/* test_rotation.c -- quaternion helpers, squad splines and their angles
 * through the C API. */
#include "rotation/kb_cumulative.h"
#include "quat/kb_quat.h"
#include "rotation/kb_squad.h"
#include "kb_test.h"
#include "kbspline/kbspline.h"

/* log and exp invert each other, near the identity too. */
KB_TEST(test_quat_log_exp_near_identity)
{
    const double angles[4] = {1e-300, 1e-12, 1e-4, 3.0};
    for (int i = 0; i < 4; i++) {
        double v[3] = {angles[i] * 0.6, 0.0, angles[i] * 0.8}, q[4], back[3];
        kb_qexp(v, q);
        KB_ASSERT_NEAR(kb_qdot(q, q), 1.0, 1e-15);
        kb_qlog(q, back);
        for (int j = 0; j < 3; j++)
            KB_ASSERT_NEAR(back[j], v[j], 1e-15 * (1.0 + angles[i]));
    }
}

/* Control points c = (q0, a, b, q1) and logs lg whose angles scale with
 * `scale`, b negated if sign < 0 (the same rotation). */
static void squad_segment(double scale, int sign, double c[16], double lg[6])
{
    const double a = scale, L0[3] = {0.3 * a, -0.5 * a, 0.8 * a};
    double exp_l[4], r[4];
    const double q0[4] = {0.5, 0.5, -0.5, 0.5};
    for (int j = 0; j < 4; j++)
        c[j] = q0[j];
    kb_qexp(L0, exp_l);
    kb_qmul(q0, exp_l, c + 12);            /* q1 = q0 exp(L0) */
    const double La[3] = {0.1 * a, 0.2 * a, -0.1 * a}, Lab[3] = {-0.2 * a, 0, a};
    kb_qexp(La, exp_l);
    kb_qmul(q0, exp_l, c + 4);             /* a near q0 */
    kb_qexp(Lab, exp_l);
    kb_qmul(c + 4, exp_l, c + 8);          /* b = a exp(Lab) */
    for (int j = 0; j < 4; j++)
        c[8 + j] *= sign;
    kb_qmul_conj_left(c + 4, c + 8, r);
    for (int j = 0; j < 3; j++)
        lg[j] = L0[j];
    kb_qlog(r, lg + 3);
}

/* The vector jets (squad_jet, lane 0 of kb_v4_squad_jet) equal the scalar ones
 * (the C library's functions, kb_quat.h's jets), through both branches of
 * the log and exp jets: tiny and large angles. */
KB_TEST(test_squad_jet_equals_scalar_jets)
{
    const double scales[6] = {0.0, 1e-12, 1e-5, 0.05, 0.3, 1.4};
    for (int i = 0; i < 6; i++)
        for (int sign = -1; sign <= 1; sign += 2) {
            double c[16], lg[6];
            squad_segment(scales[i], sign, c, lg);
            for (double e = 0.0; e <= 1.0; e += 0.0625) {
                double got[3][4], want[3][4];
                squad_jet(c, lg, e, got);
                squad_jet_scalar(c, lg, e, want);
                for (int k = 0; k < 3; k++)
                    for (int j = 0; j < 4; j++)
                        KB_ASSERT_NEAR(got[k][j], want[k][j], 1e-14 * (1.0 + fabs(want[k][j])));
            }
        }
}

/* squad_value's closed forms equal squad composed of slerps (log, then
 * exp), from tiny to large angles and with p = q and p = -q in the outer
 * slerp. */
KB_TEST(test_squad_value_equals_composed_slerps)
{
    const double scales[5] = {0.0, 1e-12, 1e-5, 0.3, 1.4};
    for (int i = 0; i < 5; i++)
        for (int sign = -1; sign <= 1; sign += 2) {
            double c[16], lg[6];
            squad_segment(scales[i], sign, c, lg);
            for (double e = 0.0; e <= 1.0; e += 0.125) {
                double got[4], p[4], q[4], want[4];
                squad_value(c, lg, e, got);
                kb_qslerp_log(e, c, lg, p);
                kb_qslerp_log(e, c + 4, lg + 3, q);
                double pq[4], m[3];
                kb_qmul_conj_left(p, q, pq);
                kb_qlog(pq, m);
                kb_qslerp_log(2.0 * e * (1.0 - e), p, m, want);
                for (int j = 0; j < 4; j++)
                    KB_ASSERT_NEAR(got[j], want[j], 4e-16);
            }
        }
}

/* Eight lanes (kb_v8, AVX-512's width where the processor has it) give the
 * values and angular rates four lanes give, bit for bit, with different
 * segments, signs and parameters in every lane, the outer slerp's p = q
 * case among them. */
KB_TEST(test_squad_value_eight_lanes_equal_four)
{
#if defined(KB_HAVE_VMATH)
    const double scales[5] = {0.0, 1e-12, 1e-5, 0.3, 1.4};
    double rec[10][16];  /* q0, a, then the logs from KB_SQUAD_LOGS */
    for (int i = 0; i < 10; i++) {
        double c[16], lg[6];
        squad_segment(scales[i % 5], i < 5 ? 1 : -1, c, lg);
        for (int j = 0; j < 8; j++)
            rec[i][j] = c[j];
        for (int j = 0; j < 6; j++)
            rec[i][KB_SQUAD_LOGS + j] = lg[j];
    }
    for (int trial = 0; trial < 200; trial++) {
        ptrdiff_t seg[8];
        kb_v8 cv8[8], lv8[KB_SEGMENT_VECTORS], e8, out8[4];
        for (int l = 0; l < 8; l++) {
            seg[l] = (trial * 7 + l * 3) % 10;
            e8[l] = ((trial * 13 + l * 5) % 17) / 16.0;
        }
        const int n = 1 + trial % 8;
        for (int l = n; l < 8; l++) {  /* flush_group's padding */
            seg[l] = seg[0];
            e8[l] = e8[0];
        }
        const int nu = trial % 3, body = trial % 2;  /* values, velocity, acceleration */
        const kb_v8 s1 = kb_v8_splat(1.5 + 0.25 * (trial % 5)), s2 = kb_v8_splat(0.5);
        kb_v8_load_segments(rec[0], 16, KB_SQUAD_LOGS, seg, n == 1, cv8, lv8);
        if (nu == 0)
            kb_v8_squad_value(cv8, lv8, &e8, out8);
        else
            kb_v8_squad_rates(cv8, lv8, &e8, s1, s2, nu, body, out8);
        for (int half = 0; half < 2; half++) {
            kb_v4 cv4[8], lv4[KB_SEGMENT_VECTORS], e4, out4[4];
            ptrdiff_t seg4[4];
            for (int l = 0; l < 4; l++) {
                const int src = 4 * half + l < n ? 4 * half + l : 0;
                seg4[l] = seg[src];
                e4[l] = e8[src];
            }
            kb_v4_load_segments(rec[0], 16, KB_SQUAD_LOGS, seg4, 0, cv4, lv4);
            if (nu == 0)
                kb_v4_squad_value(cv4, lv4, &e4, out4);
            else
                kb_v4_squad_rates(cv4, lv4, &e4, kb_v4_splat(s1[0]), kb_v4_splat(s2[0]), nu,
                                  body, out4);
            for (int l = 0; l < 4 && 4 * half + l < n; l++)
                for (int j = 0; j < (nu == 0 ? 4 : 3); j++)
                    KB_ASSERT(out8[j][4 * half + l] == out4[j][l]);
        }
    }
#endif
}

/* Two keys about z: natural ends give slerp, at constant angular speed. */
KB_TEST(test_rotation_two_keys_is_slerp)
{
    const double theta = 2.5, times[2] = {1.0, 3.0}, zero[2] = {0, 0};
    const double q[8] = {1, 0, 0, 0, cos(theta / 2), 0, 0, sin(theta / 2)};
    double tin[6], tout[6], seg[16], ctrl[16], out[4], w[3], a[3], total;
    unsigned char kind[1];
    kb_table table;
    kb_rot_keys k = {1, 2, {times, 0}, q, {zero, 0}, {zero, 0}, {zero, 0}, {zero, 0},
                     {zero, 0}, {NULL, 0}, {NULL, 0}, KB_TIMING_KB, KB_ENDS_NATURAL, NULL, NULL, NULL};
    kb_error err;
    KB_ASSERT(kb_rot_build(&k, tin, tout, seg, ctrl, kind, NULL, &err) == KB_OK);
    /* slerp's control points: a = q0, b = q1 */
    for (int j = 0; j < 16; j++)
        KB_ASSERT_NEAR(ctrl[j], q[j < 8 ? j % 4 : 4 + j % 4], 1e-15);
    kb_rot_curve c = {1, 1, times, 0, seg, NULL, KB_EXTRAP_CLAMP, kind};
    const double t = 1.5;
    KB_ASSERT(kb_rot_eval(&c, 0, 0, 1, &t, 1, 0, 0, 1, out, NULL, &err) == KB_OK);
    KB_ASSERT_NEAR(out[0], cos(theta / 8), 1e-15);
    KB_ASSERT_NEAR(out[3], sin(theta / 8), 1e-15);
    KB_ASSERT(kb_rot_eval(&c, 1, 0, 1, &t, 1, 0, 0, 1, w, NULL, &err) == KB_OK);
    KB_ASSERT_NEAR(w[2], theta / 2.0, 1e-14);
    KB_ASSERT(kb_rot_eval(&c, 2, 1, 1, &t, 1, 0, 0, 1, a, NULL, &err) == KB_OK);
    KB_ASSERT_NEAR(a[2], 0.0, 1e-13);
    KB_ASSERT(kb_rot_angle_table(&c, &table, &err) == KB_OK);
    const double end = 3.0, half = 0.5 * theta;
    double t_half;
    KB_ASSERT(kb_rot_angle(&c, &table, &end, 1, 0, 0, 1, &total, &err) == KB_OK);
    KB_ASSERT(kb_rot_time_at_angle(&c, &table, &half, 1, 0, 0, 1, &t_half, &err) == KB_OK);
    kb_table_free(&table);
    KB_ASSERT_NEAR(total, theta, 1e-13);
    KB_ASSERT_NEAR(t_half, 2.0, 1e-12);
}

/* Keys are normalised and sign-aligned; zero-norm keys are refused. */
KB_TEST(test_rotation_keys_normalised_and_checked)
{
    const double times[3] = {0, 1, 2}, zero[3] = {0, 0, 0};
    double q[12] = {2, 0, 0, 0, -0.9, -0.1, 0, 0, 0.8, 0, 0.2, 0};
    double tin[9], tout[9], seg[32], out[4];
    unsigned char kind[2];
    kb_rot_keys k = {1, 3, {times, 0}, q, {zero, 0}, {zero, 0}, {zero, 0}, {zero, 0},
                     {zero, 0}, {NULL, 0}, {NULL, 0}, KB_TIMING_KB, KB_ENDS_NATURAL, NULL, NULL, NULL};
    kb_error err;
    KB_ASSERT(kb_rot_build(&k, tin, tout, seg, NULL, kind, NULL, &err) == KB_OK);
    kb_rot_curve c = {1, 2, times, 0, seg, NULL, KB_EXTRAP_CLAMP, kind};
    const double t = 1.0;
    KB_ASSERT(kb_rot_eval(&c, 0, 0, 1, &t, 1, 0, 0, 1, out, NULL, &err) == KB_OK);
    const double n = sqrt(0.82);
    KB_ASSERT_NEAR(out[0], 0.9 / n, 1e-15);  /* the second key, flipped to +w */
    KB_ASSERT_NEAR(out[1], 0.1 / n, 1e-15);
    q[4] = q[5] = 0.0;
    KB_ASSERT(kb_rot_build(&k, tin, tout, seg, NULL, kind, NULL, &err) == KB_EZERONORM);
    KB_ASSERT(err.arg == KB_ARG_QUATERNIONS && err.index == 1);
}

/* Arc length: an ease curve x = 3u^2 - 2u^3 (zero speed at both ends) has
 * length 1 and is symmetric; the inverse is exact at 0, 1/2 and 1. */
KB_TEST(test_length_of_a_stop_and_go_segment)
{
    const double times[2] = {0.0, 2.0}, x[2] = {0.0, 1.0}, zero[2] = {0, 0};
    double tin[2], tout[2], coef[4];
    kb_tcb_keys k = {1, 2, 1, {times, 0}, x, {zero, 0}, {zero, 0}, {zero, 0}, {zero, 0},
                     {zero, 0}, {NULL, 0}, {NULL, 0}, KB_TIMING_KB, KB_ENDS_CLAMPED, NULL, NULL};
    kb_error err;
    KB_ASSERT(kb_tcb_build(&k, tin, tout, coef, NULL, &err) == KB_OK);
    kb_curve c = {1, 1, 1, times, 0, coef, NULL, KB_EXTRAP_CLAMP};
    kb_table table;
    KB_ASSERT(kb_pos_length_table(&c, &table, &err) == KB_OK);
    const double t[3] = {0.0, 1.0, 2.0}, s[3] = {0.0, 0.5, 1.0};
    double len[3], at[3];
    KB_ASSERT(kb_pos_length(&c, &table, t, 3, 0, 0, 1, len, &err) == KB_OK);
    KB_ASSERT(kb_pos_time_at_length(&c, &table, s, 3, 0, 0, 1, at, &err) == KB_OK);
    kb_table_free(&table);
    for (int i = 0; i < 3; i++) {
        KB_ASSERT_NEAR(len[i], s[i], 1e-14);
        KB_ASSERT_NEAR(at[i], t[i], 1e-12);
    }
}

/* A two-key segment clamped to a fast spin at both ends brings squad's
 * inner curves near antipodal: it becomes the cumulative cubic, which starts
 * and ends on the keys at the clamped angular velocities and stays within
 * the speed bound; with a slow spin the same keys stay squad. */
KB_TEST(test_rotation_ill_conditioned_segment_is_cumulative)
{
    const double times[2] = {0.0, 2.0}, zero[2] = {0, 0};
    const double q[8] = {1, 0, 0, 0, cos(0.6), sin(0.6), 0, 0};
    const double spins[2][3] = {{0.0, 0.2, 0.0}, {0.0, 4.0, 0.0}};
    const unsigned char want[2] = {KB_SEG_SQUAD, KB_SEG_CUMULATIVE};
    for (int c_ = 0; c_ < 2; c_++) {
        const double w0[3] = {spins[c_][0], spins[c_][1], spins[c_][2]};
        const double *w1 = w0;
        double tin[6], tout[6], seg[16], ctrl[16], v[4], w[3];
        unsigned char kind[1];
        kb_rot_keys k = {1, 2, {times, 0}, q, {zero, 0}, {zero, 0}, {zero, 0}, {zero, 0},
                         {zero, 0}, {w0, 0}, {w1, 0}, KB_TIMING_KB, KB_ENDS_CLAMPED, NULL, NULL, NULL};
        kb_error err;
        KB_ASSERT(kb_rot_build(&k, tin, tout, seg, ctrl, kind, NULL, &err) == KB_OK);
        KB_ASSERT(kind[0] == want[c_]);
        kb_rot_curve c = {1, 1, times, 0, seg, NULL, KB_EXTRAP_CLAMP, kind};
        const double ends[2] = {0.0, 2.0}, *wend[2] = {w0, w1};
        for (int e = 0; e < 2; e++) {
            KB_ASSERT(kb_rot_eval(&c, 0, 0, 1, ends + e, 1, 0, 0, 1, v, NULL, &err) == KB_OK);
            for (int j = 0; j < 4; j++)
                KB_ASSERT_NEAR(v[j], q[4 * e + j], 1e-14);
            KB_ASSERT(kb_rot_eval(&c, 1, 0, 1, ends + e, 1, 0, 0, 1, w, NULL, &err) == KB_OK);
            for (int j = 0; j < 3; j++)
                KB_ASSERT_NEAR(w[j], wend[e][j], 1e-12);
        }
        /* 2 max(|w(0)|, |w(2)|) + 2 pi / 2 */
        const double bound = 2.0 * sqrt(w0[0] * w0[0] + w0[1] * w0[1] + w0[2] * w0[2]) +
                             3.14159265358979;
        for (double t = 0.0; t <= 2.0; t += 1.0 / 1024) {
            KB_ASSERT(kb_rot_eval(&c, 1, 0, 1, &t, 1, 0, 0, 1, w, NULL, &err) == KB_OK);
            KB_ASSERT(sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]) <= bound);
        }
    }
}

/* Multi-turn keys: three segments of 5 pi about z each (chords given, never
 * reduced) turn at a constant 5 pi per unit time, and sweep 15 pi. */
KB_TEST(test_rotation_multi_turn_chords_keep_every_turn)
{
    const double pi = 3.14159265358979323846, times[4] = {0, 1, 2, 3}, zero[4] = {0};
    const double L[9] = {0, 0, 2.5 * pi, 0, 0, 2.5 * pi, 0, 0, 2.5 * pi};
    double q[16], tin[12], tout[12], seg[48], ctrl[48], w[3], total;
    unsigned char kind[3];
    for (int i = 0; i < 4; i++) {   /* q_n = exp(n L) */
        q[4 * i] = cos(2.5 * pi * i);
        q[4 * i + 1] = q[4 * i + 2] = 0.0;
        q[4 * i + 3] = sin(2.5 * pi * i);
    }
    kb_rot_keys k = {1, 4, {times, 0}, q, {zero, 0}, {zero, 0}, {zero, 0}, {zero, 0},
                     {zero, 0}, {NULL, 0}, {NULL, 0}, KB_TIMING_KB, KB_ENDS_NATURAL, L, NULL, NULL};
    kb_error err;
    kb_table table;
    KB_ASSERT(kb_rot_build(&k, tin, tout, seg, ctrl, kind, NULL, &err) == KB_OK);
    KB_ASSERT(kind[0] == KB_SEG_CUMULATIVE && kind[1] == KB_SEG_CUMULATIVE);
    kb_rot_curve c = {1, 3, times, 0, seg, NULL, KB_EXTRAP_CLAMP, kind};
    for (double t = 0.0; t <= 3.0; t += 0.125) {
        KB_ASSERT(kb_rot_eval(&c, 1, 0, 1, &t, 1, 0, 0, 1, w, NULL, &err) == KB_OK);
        KB_ASSERT_NEAR(w[2], 5.0 * pi, 1e-12);
        KB_ASSERT_NEAR(w[0] * w[0] + w[1] * w[1], 0.0, 1e-24);
    }
    const double end = 3.0;
    KB_ASSERT(kb_rot_angle_table(&c, &table, &err) == KB_OK);
    KB_ASSERT(kb_rot_angle(&c, &table, &end, 1, 0, 0, 1, &total, &err) == KB_OK);
    kb_table_free(&table);
    KB_ASSERT_NEAR(total, 15.0 * pi, 1e-11);
}
