"""Tall-skinny SVD: which route is fastest for the shapes scikit-learn factorises.

    python3 benchmarks/probes/svd_probe.py [--reps 15] [--shapes 200000x32,1024x1024]  (GPU machine)

scikit-learn's PCA(svd_solver='full'), Ridge(solver='svd') and LinearDiscriminantAnalysis each
take `svd(X, full_matrices=False)` of a tall matrix. For each shape and dtype this prints the
median wall-clock ms (a device sync after each call) of:

* arrayx `linalg.svd` through each cuSOLVER driver (gesvd; gesvdj, which it takes for
  `JACOBI_SVD_MIN_K <= k <= JACOBI_SVD_MAX_K`), `svd` as shipped, and `svdvals` (gesvd);
* arrayx's QR route composed from the namespace: `Q, R = qr(X)`, `svd(R)`, `Q @ U_R`;
* PyTorch `torch.linalg.svd` with each cuSOLVER driver it exposes (gesvd, gesvdj, gesvda; its
  default is gesvdj), and the same QR route;
* CuPy `cupy.linalg.svd` (gesvd);

and each route's reconstruction error ||U S Vh - X|| / ||X||, so a fast route that loses
accuracy shows.
"""

from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.dirname(HERE))

from harness import Harness  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--shapes",
                    default="200000x32,20000x64,4096x256,1000x16,64x64,512x512,1024x1024")
    ap.add_argument("--dtypes", default="float64,float32")
    ap.add_argument("--device", default="cuda:0")
    args = ap.parse_args()

    import numpy as np

    import arrayx as xp
    from arrayx.cuda.engine import runtime
    from arrayx.cuda.kernels import linalg as cuda_linalg
    default_k_range = cuda_linalg.JACOBI_SVD_MIN_K, cuda_linalg.JACOBI_SVD_MAX_K
    try:
        import torch
    except ImportError:
        torch = None
    try:
        import cupy
    except ImportError:
        cupy = None

    for shape_s in args.shapes.split(","):
        m, n = map(int, shape_s.split("x"))
        for dt in args.dtypes.split(","):
            host = np.random.default_rng(0).standard_normal((m, n)).astype(dt)
            norm = float(np.linalg.norm(host))
            label = f"{m} x {n} {dt}"

            def report(route, fn, sync, recon):
                try:
                    t = Harness.wall_time(fn, sync, warmup=1, reps=args.reps, budget_s=1.5)
                    med, lo, hi = t["median"], t["min"], t["max"]
                    err = recon(fn()) / norm if recon else float("nan")
                except Exception as e:  # a driver a build lacks, or a failure to report
                    print(f"{label:24} {route:34} failed: {type(e).__name__}: {e}", flush=True)
                    return
                print(f"{label:24} {route:34} {med:9.3f} ms  [{lo:.3f}-{hi:.3f}]  err {err:.1e}",
                      flush=True)

            a = xp.asarray(host, device=args.device)

            def ax_sync():
                if a.device.kind == "cuda":
                    runtime.synchronize()

            def ax_err(usv):
                u, s, vh = usv
                d = (u * s[None, :]) @ vh - a
                return float(xp.linalg.vector_norm(d))

            def ax_qr_route():
                q, r = xp.linalg.qr(a)
                ur, s, vh = xp.linalg.svd(r, full_matrices=False)
                return q @ ur, s, vh

            for driver, k_range in (("gesvd", (1, 0)), ("gesvdj", (1, 1 << 30))):
                cuda_linalg.JACOBI_SVD_MIN_K, cuda_linalg.JACOBI_SVD_MAX_K = k_range
                report(f"arrayx svd {driver}", lambda: xp.linalg.svd(a, full_matrices=False),
                       ax_sync, ax_err)
            cuda_linalg.JACOBI_SVD_MIN_K, cuda_linalg.JACOBI_SVD_MAX_K = default_k_range
            report("arrayx svdvals", lambda: xp.linalg.svdvals(a), ax_sync, None)
            report("arrayx svd as shipped", lambda: xp.linalg.svd(a, full_matrices=False),
                   ax_sync, ax_err)
            report("arrayx qr route", ax_qr_route, ax_sync, ax_err)
            report("arrayx qr alone", lambda: xp.linalg.qr(a), ax_sync, None)
            report("arrayx X.T @ X", lambda: a.mT @ a, ax_sync, None)

            if torch is not None:
                t = torch.as_tensor(host, device="cuda")
                tsync = torch.cuda.synchronize

                def t_err(usv):
                    u, s, vh = usv
                    return float(torch.linalg.norm((u * s[None, :]) @ vh - t))

                for driver in (None, "gesvd", "gesvdj", "gesvda"):
                    report(f"torch svd driver={driver or 'default'}",
                           lambda d=driver: torch.linalg.svd(t, full_matrices=False, driver=d),
                           tsync, t_err)

                def t_qr_route():
                    q, r = torch.linalg.qr(t)
                    ur, s, vh = torch.linalg.svd(r, full_matrices=False)
                    return q @ ur, s, vh

                report("torch qr route", t_qr_route, tsync, t_err)
                report("torch qr alone", lambda: torch.linalg.qr(t), tsync, None)
            if cupy is not None:
                c = cupy.asarray(host)
                csync = cupy.cuda.Device().synchronize

                def c_err(usv):
                    u, s, vh = usv
                    return float(cupy.linalg.norm((u * s[None, :]) @ vh - c))

                report("cupy svd", lambda: cupy.linalg.svd(c, full_matrices=False), csync, c_err)


if __name__ == "__main__":
    main()
