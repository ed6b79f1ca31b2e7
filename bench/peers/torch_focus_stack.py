# SPDX-License-Identifier: MIT
"""focus_stack peer: exactly morphseq's LoG_focus_stacker steps in PyTorch on the same GPU and inputs.

morphseq (nlammers371/morphseq, src/build/export_utils.py) casts the (N, Z, Y, X) stack to float32, folds
N*Z into the batch, runs F.conv2d with the Gaussian and then with the Laplacian (padding="same", a zero pad
at each stage), takes abs, max over Z (the first index on ties) and gathers the winning voxel. The kernels
are cv2.GaussianBlur and cv2.Laplacian(CV_32F) of a delta; here they come from the tap table of
docs/focus_stack.md, "Taps" (checked against cv2 when it is installed). PyTorch's default TF32 setting for
cuDNN convolutions is kept, as morphseq runs it, and reported: with TF32 the outputs may differ from the
exact reference near ties, and bench/merge.py marks such a peer as not matching, never hides it.

Timings, as morphseq's own harness does: kernel-only on a device-resident float32 stack, and end to end
(pinned float32 host stack uploaded, the steps, idx and ff downloaded). Outputs: idx (uint8) and ff (uint16).
"""
import sys

import numpy as np

import peer_util

# docs/focus_stack.md, "Taps": blur taps g (scale S = sum(g)^2), Laplacian = s (x) d2 + d2 (x) s.
TAPS = {
    3: ([1, 2, 1], [1, 2, 1], [1, -2, 1]),
    5: ([1, 4, 6, 4, 1], [1, 4, 6, 4, 1], [1, 0, -2, 0, 1]),
    7: ([2, 7, 14, 18, 14, 7, 2], [1, 6, 15, 20, 15, 6, 1], [1, 2, -1, -4, -1, 2, 1]),
}


def kernels(ksize):
    g, s, d2 = (np.array(t, dtype=np.float64) for t in TAPS[ksize])
    gauss = np.outer(g, g) / g.sum() ** 2
    lap = np.outer(s, d2) + np.outer(d2, s)
    try:
        import cv2
    except ImportError:
        return gauss.astype(np.float32), lap.astype(np.float32)
    # morphseq's _get_kernels: a delta in a (2k+1)^2 image, filtered, cropped to k x k.
    ind = ksize // 2 + 1
    delta = np.zeros((2 * ksize + 1, 2 * ksize + 1), np.float32)
    delta[ksize, ksize] = 1.0
    cv_gauss = cv2.GaussianBlur(delta, (ksize, ksize), 0)[ind:-ind, ind:-ind]
    cv_lap = cv2.Laplacian(delta, cv2.CV_32F, ksize=ksize)[ind:-ind, ind:-ind]
    if not (np.allclose(cv_gauss, gauss, atol=1e-7) and np.array_equal(cv_lap, lap.astype(np.float32))):
        sys.exit(f"torch_focus_stack: the ksize {ksize} taps differ from cv2's")
    return cv_gauss, cv_lap


def morphseq_steps(torch, data, gauss, lap):
    """LoG_focus_stacker on a float32 (N, Z, Y, X) device tensor: returns (idx, ff)."""
    import torch.nn.functional as F

    n, z, y, x = data.shape
    flat = data.reshape(n * z, y, x).unsqueeze(1)
    blurred = F.conv2d(flat, gauss, padding="same")
    log_rsp = F.conv2d(blurred, lap, padding="same").squeeze(1)
    abs_log = log_rsp.abs().reshape(n, z, y, x)
    _, idx = abs_log.max(dim=1)
    ff = data.gather(1, idx.unsqueeze(1)).squeeze(1)
    return idx, ff


def run_case(torch, timer, case, out_dir):
    params = case["params"]
    if params["measure"] != "log_abs" or params["border"] != "zero" or params["window"] not in (0, 1):
        return {"case": case["case"], "rows": [], "outputs": {},
                "error": "morphseq has only LoG with a zero border and no window"}
    stack = peer_util.load_input(case, "in")
    gauss_np, lap_np = kernels(int(params["ksize"]))
    gauss = torch.from_numpy(gauss_np).reshape(1, 1, *gauss_np.shape).cuda()
    lap = torch.from_numpy(lap_np).reshape(1, 1, *lap_np.shape).cuda()
    host = torch.from_numpy(stack.astype(np.float32)).pin_memory()
    data = host.cuda()

    def end_to_end():
        idx, ff = morphseq_steps(torch, host.cuda(non_blocking=True), gauss, lap)
        return idx.cpu(), ff.cpu()

    kernel_ms, (idx, ff) = timer.time(lambda: morphseq_steps(torch, data, gauss, lap))
    e2e_ms, _ = timer.time(end_to_end)
    outputs = peer_util.save_outputs(out_dir, case, {
        "idx": idx.cpu().numpy().astype(np.uint8),
        "ff": ff.cpu().numpy().astype(np.uint16),
    })
    print(f"torch_focus_stack {case['case']}: kernel-only {kernel_ms['median']:.3f} ms, "
          f"end to end {e2e_ms['median']:.3f} ms (medians of {timer.reps})")
    return {
        "case": case["case"],
        "rows": [
            {"variant": "kernel-only (device-resident float32)", "time_ms": kernel_ms,
             "compare_with": "gpu_kernel_ms"},
            {"variant": "end to end (pinned float32 upload, idx and ff download)", "time_ms": e2e_ms,
             "compare_with": "gpu_end_to_end_ms"},
        ],
        "outputs": outputs,
        "error": None,
    }


def main():
    args = peer_util.parse_args(__doc__.splitlines()[0])
    import torch

    if not torch.cuda.is_available():
        sys.exit("torch_focus_stack: PyTorch sees no CUDA device")
    timer = peer_util.CudaTimer(torch, args.reps, args.warmup)
    cases = [run_case(torch, timer, case, args.out) for case in peer_util.load_cases(args.inputs, "focus_stack")]
    peer_util.write_result(args.out, "torch_focus_stack", "focus_stack",
                           "PyTorch, morphseq's LoG_focus_stacker steps (float32 conv2d twice, abs, max, gather)",
                           peer_util.environment(torch), args, cases)


if __name__ == "__main__":
    main()
