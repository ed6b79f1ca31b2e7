/* SPDX-License-Identifier: MIT
 * ex2d_patch: K6, Q_b = C_bb^(-1/2) by cyclic Jacobi. A part of ex2d_patch.cu, which #includes it
 * after the shared enums and helpers: not a header of its own, and not compiled alone.
 */

/* t = tan(phi) of the rotation that zeroes a_pq (Rutishauser): the smaller root, so |phi| <= pi/4. Past
 * |theta| = 1e150, theta^2 would overflow; t = 1/(2 theta) is then exact to rounding. */
static __device__ __forceinline__ double rotation_tangent(double app, double aqq, double apq)
{
    const double theta = (aqq - app) / (2.0 * apq);
    if (fabs(theta) > 1e150) return 0.5 / theta;
    return copysign(1.0, theta) / (fabs(theta) + sqrt(1.0 + theta * theta));
}

__global__ void __launch_bounds__(JACOBI_THREADS)
    ex2d_jacobi_kernel(ex2d_params p, const ex2d_patch_desc *patches, int patch_first, ex2d_workspace ws,
                       ex2d_patch_info *info, gw_witness *witness)
{
    extern __shared__ double s_dynamic[]; /* A then V, m x m each, row-major */
    __shared__ double s_cos[JACOBI_MAX_PAIRS], s_sin[JACOBI_MAX_PAIRS], s_tan[JACOBI_MAX_PAIRS];
    __shared__ double s_app[JACOBI_MAX_PAIRS], s_aqq[JACOBI_MAX_PAIRS], s_apq[JACOBI_MAX_PAIRS];
    __shared__ int s_p[JACOBI_MAX_PAIRS], s_q[JACOBI_MAX_PAIRS]; /* s_p = -1: the pair does not rotate */
    __shared__ double s_scale[EX2D_MAX_M];                         /* u^(-1/2) */
    __shared__ double s_umax;

    __shared__ int s_run;

    const unsigned long long t_start = gw_witness_clock(witness);
    unsigned long long blocks_done = 0;
    const int slot = (int)blockIdx.x / p.max_ncore, c = (int)blockIdx.x % p.max_ncore;
    const int patch = patch_first + slot;
    if (threadIdx.x == 0) {
        /* NOT_POSDEF, not "!= OK": a block of the same patch that finished first may already have set
         * NOT_CONVERGED, and reading that would make this block's work depend on the schedule. Read
         * atomically, by one thread: that sibling block may be writing the word (atomicMax below) right now. */
        s_run = !check_failed(ws.check) && c < patches[patch].ncore &&
                atomicAdd((int *)&info[patch].status, 0) != EX2D_PATCH_NOT_POSDEF;
    }
    __syncthreads();
    if (s_run) {
        const int tid = (int)threadIdx.x, m = p.m;
        const double tol = p.jacobi_tol;
        double *A = s_dynamic, *V = s_dynamic + m * m;
        const size_t block_at = (size_t)slot * ws.blk_stride + (size_t)c * (size_t)(m * m);
        for (int e = tid; e < m * m; e += JACOBI_THREADS) {
            A[e] = ws.cblk[block_at + e];
            V[e] = (e / m == e % m) ? 1.0 : 0.0;
        }
        __syncthreads();

        /* Circle ordering on M = m rounded up to even players: player M-1 stays, the others turn. In step r
         * pair 0 is (M-1, r) and pair k is ((r+k) mod (M-1), (r-k) mod (M-1)); over the M-1 steps of a sweep
         * every pair meets once. Player m (odd m only) is a bye. */
        const int M = m + (m & 1), npair = M / 2;
        int sweeps = 0, converged = 0;
        while (!converged && sweeps < p.jacobi_max_sweeps) {
            sweeps++;
            for (int step = 0; step < M - 1; step++) {
                if (tid < npair) {
                    const int u = tid == 0 ? M - 1 : (step + tid) % (M - 1);
                    const int v = tid == 0 ? step : (step - tid + M - 1) % (M - 1);
                    const int pi = min(u, v), qi = max(u, v);
                    int rotate = 0;
                    if (qi < m) {
                        const double apq = A[pi * m + qi], app = A[pi * m + pi], aqq = A[qi * m + qi];
                        if (fabs(apq) > tol * sqrt(app * aqq)) {
                            const double t = rotation_tangent(app, aqq, apq);
                            const double cs = rsqrt(1.0 + t * t); /* within 1 ulp */
                            s_cos[tid] = cs, s_sin[tid] = t * cs, s_tan[tid] = t;
                            s_app[tid] = app, s_aqq[tid] = aqq, s_apq[tid] = apq;
                            rotate = 1;
                        }
                    }
                    s_p[tid] = rotate ? pi : -1;
                    s_q[tid] = qi;
                }
                __syncthreads();
                /* rows p and q of A (each element has one owner: the pairs are disjoint) */
                for (int e = tid; e < npair * m; e += JACOBI_THREADS) {
                    const int k = e / m, j = e - k * m, pi = s_p[k];
                    if (pi < 0) continue;
                    const int qi = s_q[k];
                    const double cs = s_cos[k], sn = s_sin[k], ap = A[pi * m + j], aq = A[qi * m + j];
                    A[pi * m + j] = cs * ap - sn * aq;
                    A[qi * m + j] = sn * ap + cs * aq;
                }
                __syncthreads();
                /* columns p and q of A and V */
                for (int e = tid; e < npair * m; e += JACOBI_THREADS) {
                    const int k = e / m, i = e - k * m, pi = s_p[k];
                    if (pi < 0) continue;
                    const int qi = s_q[k];
                    const double cs = s_cos[k], sn = s_sin[k];
                    const double ap = A[i * m + pi], aq = A[i * m + qi], vp = V[i * m + pi], vq = V[i * m + qi];
                    A[i * m + pi] = cs * ap - sn * aq;
                    A[i * m + qi] = sn * ap + cs * aq;
                    V[i * m + pi] = cs * vp - sn * vq;
                    V[i * m + qi] = sn * vp + cs * vq;
                }
                __syncthreads();
                /* each rotated 2 x 2 block, exactly: the pivot becomes 0 (not rounding noise) */
                if (tid < npair && s_p[tid] >= 0) {
                    const int pi = s_p[tid], qi = s_q[tid];
                    const double t = s_tan[tid], apq = s_apq[tid];
                    A[pi * m + pi] = s_app[tid] - t * apq;
                    A[qi * m + qi] = s_aqq[tid] + t * apq;
                    A[pi * m + qi] = 0.0;
                    A[qi * m + pi] = 0.0;
                }
                __syncthreads();
            }
            /* converged when every pair passes; written as a negation so that NaN never passes */
            int unconverged = 0;
            for (int e = tid; e < m * m; e += JACOBI_THREADS) {
                const int i = e / m, j = e - i * m;
                if (i < j && !(fabs(A[e]) <= tol * sqrt(A[i * m + i] * A[j * m + j]))) unconverged = 1;
            }
            converged = !__syncthreads_or(unconverged);
        }

        if (tid == 0) {
            double umax = A[0];
            for (int i = 1; i < m; i++) umax = fmax(umax, A[i * m + i]);
            s_umax = umax;
        }
        __syncthreads();
        /* clip as gpu_specter's clipped_eigh: u < 1e-14 max(u) is raised to 1e-14 max(u) */
        const double floor_u = 1e-14 * s_umax;
        const int low = tid < m && A[tid * m + tid] < floor_u;
        if (tid < m) s_scale[tid] = 1.0 / sqrt(low ? floor_u : A[tid * m + tid]);
        const int clipped = __syncthreads_count(low); /* also the barrier that publishes s_scale */

        /* Q = V diag(u^-1/2) V^T, upper triangle mirrored so that Q is exactly symmetric */
        double *q = ws.qblk + block_at;
        for (int e = tid; e < m * m; e += JACOBI_THREADS) {
            const int i = e / m, j = e - i * m;
            if (i > j) continue;
            double sum = 0.0;
            for (int k = 0; k < m; k++) sum = fma(V[i * m + k] * s_scale[k], V[j * m + k], sum);
            q[i * m + j] = sum;
            q[j * m + i] = sum;
        }
        if (tid == 0) {
            ex2d_patch_info *inf = &info[patch];
            if (clipped) atomicAdd((int *)&inf->clipped, clipped);
            atomicMax((int *)&inf->sweeps_max, sweeps);
            int seen = atomicAdd((int *)&inf->sweeps_min, 0);
            while (seen == 0 || sweeps < seen) { /* 0: no block of this patch has reported yet */
                const int before = atomicCAS((int *)&inf->sweeps_min, seen, sweeps);
                if (before == seen) break;
                seen = before;
            }
            if (!converged) atomicMax((int *)&inf->status, EX2D_PATCH_NOT_CONVERGED);
        }
        blocks_done = 1;
    }
    gw_witness_block_done(witness, blocks_done, t_start);
}
