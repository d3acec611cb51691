/*
 * stats.c - is a change in per-call self time beyond noise?
 *
 * Method: a two-sided Mann-Whitney U (Wilcoxon rank-sum) test computed
 * directly on the two binned histograms of per-call self time. All calls in
 * one bucket share that bucket's value, so each bucket is one group of ties:
 * its calls get the average of the ranks they span, and the variance uses the
 * usual tie correction
 *     var(U) = n1*n2/12 * ((N+1) - sum(t^3 - t) / (N*(N-1))).
 * z = (U_b - n1*n2/2 -/+ 0.5) / sqrt(var(U)) (continuity correction), and
 * p = erfc(|z| / sqrt 2). Bucket values are converted to ns with each run's
 * ns_per_tick (and corrected for the overhead as the report corrects them:
 * call_fix) so runs with different clock calibrations still compare.
 *
 * With millions of calls even a trivial shift gets a tiny p, so a change is
 * called significant only when also the medians moved by at least
 * PDB_MIN_SHIFT (2%) in the same direction as the test: p < PDB_ALPHA (0.001)
 * and |median_b - median_a| / median_a >= 2%.
 */
#include "piano_db.h"
#include "hist.h"
#include <math.h>

static double bin_ns(const hbin *h, double nspt, call_fix fix)
{
    return call_fix_ns((double)piano_hist_value(h->b) * nspt, fix);
}

static double median_ns(const hbin *h, size_t n, double total, double nspt, call_fix fix)
{
    double rank = ceil(0.5 * total), seen = 0;
    if (rank < 1)
        rank = 1;
    for (size_t i = 0; i < n; i++) {
        seen += (double)h[i].c;
        if (seen >= rank)
            return bin_ns(&h[i], nspt, fix);
    }
    return 0;
}

sig_result sig_mann_whitney(const hbin *a, size_t na, double nspt_a, call_fix fix_a,
                            const hbin *b, size_t nb, double nspt_b, call_fix fix_b)
{
    sig_result r = {1.0, 0, 0, 0, 0, 0, 0};
    double n1 = 0, n2 = 0;
    for (size_t i = 0; i < na; i++)
        n1 += (double)a[i].c;
    for (size_t i = 0; i < nb; i++)
        n2 += (double)b[i].c;
    if (n1 <= 0 || n2 <= 0)
        return r;
    r.valid = 1;
    r.median_a_ns = median_ns(a, na, n1, nspt_a, fix_a);
    r.median_b_ns = median_ns(b, nb, n2, nspt_b, fix_b);
    if (r.median_a_ns > 0)
        r.shift = (r.median_b_ns - r.median_a_ns) / r.median_a_ns;
    else if (r.median_b_ns > 0)
        r.shift = 1.0; /* from nothing to something */

    /* Walk both histograms in ascending value; equal values are one tie group. */
    double ranked = 0, rank_sum_b = 0, ties = 0;
    size_t i = 0, j = 0;
    while (i < na || j < nb) {
        double va = i < na ? bin_ns(&a[i], nspt_a, fix_a) : INFINITY;
        double vb = j < nb ? bin_ns(&b[j], nspt_b, fix_b) : INFINITY;
        double v = va < vb ? va : vb;
        double ca = 0, cb = 0;
        while (i < na && bin_ns(&a[i], nspt_a, fix_a) == v)
            ca += (double)a[i++].c;
        while (j < nb && bin_ns(&b[j], nspt_b, fix_b) == v)
            cb += (double)b[j++].c;
        double t = ca + cb;
        rank_sum_b += cb * (ranked + (t + 1) / 2);
        ranked += t;
        ties += t * t * t - t;
    }
    double N = n1 + n2;
    double u_b = rank_sum_b - n2 * (n2 + 1) / 2;
    double mean = n1 * n2 / 2;
    double var = n1 * n2 / 12 * ((N + 1) - (N > 1 ? ties / (N * (N - 1)) : 0));
    if (!(var > 0))
        return r; /* every call in one bucket on both sides: nothing to rank */
    double d = u_b - mean;
    d = d > 0.5 ? d - 0.5 : d < -0.5 ? d + 0.5 : 0;
    r.z = d / sqrt(var);
    r.p_value = erfc(fabs(r.z) / sqrt(2.0));
    r.significant = r.p_value < PDB_ALPHA && fabs(r.shift) >= PDB_MIN_SHIFT &&
                    ((r.shift > 0) == (r.z > 0));
    return r;
}
