/* kb_integrate.c -- integrals of a speed along a segment (adaptive
 * Gauss-Legendre) and their inversion (safeguarded Newton).  Shared by
 * rotation angles and, through the same interface, arc lengths. */
#include "kb_integrate.h"

/* 10-point Gauss-Legendre on [-1, 1]: the positive nodes and their weights. */
static const double GL_X[5] = {0.14887433898163122, 0.4333953941292472, 0.6794095682990244,
                               0.8650633666889845, 0.9739065285171717};
static const double GL_W[5] = {0.2955242247147528, 0.2692667193099965, 0.219086362515982,
                               0.1494513491505804, 0.06667134430868814};

#define KB_MAX_DEPTH 48

static double gl10(const kb_speed *sp, double a, double b)
{
    const double mid = 0.5 * (a + b), half = 0.5 * (b - a);
    double sum = 0.0;
    for (int i = 0; i < 5; i++)
        sum += GL_W[i] * (sp->fn(sp->ctx, sp->track, sp->seg, mid - half * GL_X[i]) +
                          sp->fn(sp->ctx, sp->track, sp->seg, mid + half * GL_X[i]));
    return half * sum;
}

/*
 * Bisects until the two halves agree with the whole to `tol` (the
 * estimate |left + right - whole| bounds the error of the coarse rule,
 * so the accepted finer sum is far better).  Speeds with kinks (where
 * they touch zero) are refined only around the kink.
 */
static double integrate_smooth(const kb_speed *sp, double a, double b, double tol)
{
    struct { double a, b, whole; int depth; } stack[KB_MAX_DEPTH + 2];
    int top = 0;
    double total = 0.0;
    if (!(b > a))
        return 0.0;
    stack[0].a = a;
    stack[0].b = b;
    stack[0].whole = gl10(sp, a, b);
    stack[0].depth = 0;
    while (top >= 0) {
        const double lo = stack[top].a, hi = stack[top].b, whole = stack[top].whole;
        const int depth = stack[top].depth;
        const double mid = 0.5 * (lo + hi);
        const double left = gl10(sp, lo, mid), right = gl10(sp, mid, hi);
        top--;
        /* at least four panels, so no feature hides between the first nodes */
        if ((depth >= 2 && fabs(left + right - whole) <= tol) || depth >= KB_MAX_DEPTH ||
            !(mid > lo) || !(hi > mid)) {
            total += left + right;
            continue;
        }
        /* depth-first: the stack never holds more than one entry per level */
        top++;
        stack[top].a = mid;
        stack[top].b = hi;
        stack[top].whole = right;
        stack[top].depth = depth + 1;
        top++;
        stack[top].a = lo;
        stack[top].b = mid;
        stack[top].whole = left;
        stack[top].depth = depth + 1;
    }
    return total;
}

void kb_speed_set_ease(kb_speed *sp, const double *ease)
{
    sp->breaks[0] = sp->breaks[1] = -1.0;
    if (!ease)
        return;
    double a = ease[0], b = ease[1];
    if (a + b > 1.0) {
        a /= a + b;
        b = 1.0 - a;
    }
    sp->breaks[0] = a;
    sp->breaks[1] = 1.0 - b;
}

double kb_integrate(const kb_speed *sp, double a, double b, double tol)
{
    double total = 0.0, lo = a;
    for (int i = 0; i < 2; i++) {
        const double cut = sp->breaks[i];
        if (cut > lo && cut < b && cut > 0.0 && cut < 1.0) {
            total += integrate_smooth(sp, lo, cut, tol);
            lo = cut;
        }
    }
    return total + integrate_smooth(sp, lo, b, tol);
}

double kb_segment_total(const kb_speed *sp)
{
    /* tolerance relative to the segment's own size, found coarsely first */
    const double coarse = gl10(sp, 0.0, 1.0);
    return kb_integrate(sp, 0.0, 1.0, KB_INTEGRAL_RTOL * fabs(coarse) + 1e-300);
}

double kb_segment_partial(const kb_speed *sp, double u, double seg_total)
{
    if (u <= 0.0)
        return 0.0;
    if (u >= 1.0)
        return seg_total;
    return kb_integrate(sp, 0.0, u, KB_INTEGRAL_RTOL * seg_total + 1e-300);
}

/*
 * u in [0, 1] with integral_0^u speed = target, 0 <= target <= seg_total.
 * Newton on F(u) - target with F advanced incrementally, falling back to
 * bisection of the bracket whenever a step leaves it or the speed is zero,
 * so it cannot diverge.  Exact at both ends.
 */
double kb_segment_inverse(const kb_speed *sp, double target, double seg_total)
{
    if (target <= 0.0 || seg_total <= 0.0)
        return 0.0;
    if (target >= seg_total)
        return 1.0;
    const double tol = KB_INTEGRAL_RTOL * seg_total + 1e-300;
    double lo = 0.0, hi = 1.0, u = target / seg_total;
    double F = kb_integrate(sp, 0.0, u, tol);
    for (int iter = 0; iter < 200; iter++) {
        const double g = F - target;
        if (fabs(g) <= tol)
            break;
        if (g < 0.0)
            lo = u;
        else
            hi = u;
        if (!(hi - lo > 4e-16 * (1.0 + fabs(u))))
            break;
        const double f = sp->fn(sp->ctx, sp->track, sp->seg, u);
        double next = f > 0.0 ? u - g / f : 0.5 * (lo + hi);
        if (!(next > lo && next < hi))
            next = 0.5 * (lo + hi);
        F += next > u ? kb_integrate(sp, u, next, tol) : -kb_integrate(sp, next, u, tol);
        u = next;
    }
    return u;
}

ptrdiff_t kb_table_segment(const double *cum, ptrdiff_t n_seg, double s)
{
    /* the first segment whose end reaches s, so zero-length segments are
     * skipped over and the answer is monotone in s */
    ptrdiff_t lo = 0, hi = n_seg - 1;
    while (lo < hi) {
        ptrdiff_t mid = lo + (hi - lo) / 2;
        if (cum[mid + 1] >= s)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}
