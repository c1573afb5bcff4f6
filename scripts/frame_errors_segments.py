#!/usr/bin/env python3
"""Per-segment summary of `kestrel play ... --compare SCENE --frame-errors CSV` (docs/reduced.md,
sixth round). Usage: scripts/frame_errors_segments.py FRAMES.csv [MAX_SHIFT_FRAMES]

Per impulse of the sequence, % of the segment's motion (sqrt of sums of squares over its frames):
playback, projection, library (eq. 9 distance of the full simulation's state to the library),
played (the same of the played state), step (the flow's one-frame error on the full
simulation), walk (sqrt of the running sum of the one-frame errors², as if each persisted undamped
and independent); shift: the time shift of the full simulation's coordinates (frames, within
+-MAX_SHIFT, default 12) that minimises the reduced error sum|q - c(t + shift)|² of the segment, and
that error; amp: |q| / |c| over the segment; hops: frames whose followed IRF differs from the
previous frame's."""
import csv
import math
import sys


def main():
    path = sys.argv[1]
    max_shift = int(sys.argv[2]) if len(sys.argv) > 2 else 12
    rows = list(csv.DictReader(open(path)))
    if not rows:
        sys.exit(f"{path}: no frames")
    rank = sum(1 for k in rows[0] if k.startswith("qdot"))
    num = lambda r, k: float(r[k]) if r[k] else 0.0
    vec = lambda r, name: [float(r[f"{name}{k}"]) for k in range(1, rank + 1)]
    q = [vec(r, "q") for r in rows]
    c = [vec(r, "c") for r in rows]
    d2 = lambda a, b: sum((x - y) ** 2 for x, y in zip(a, b))
    n2 = lambda a: sum(x * x for x in a)
    segments = {}
    for i, r in enumerate(rows):
        segments.setdefault(r["segment"], []).append(i)
    print(f"{path}: {len(rows)} frames, rank {rank}")
    print("seg entry    t_s frames playback projection library played  step  walk shift shifted   amp hops")
    walk = 0.0
    total = [0.0] * 6
    for seg, idx in segments.items():
        sums = [sum(num(rows[i], k) for i in idx) for k in
                ("norm_m2", "error_m2", "projection_m2", "library_m2", "flow_step_m2",
                 "played_library_m2")]
        total = [a + b for a, b in zip(total, sums)]
        walk_sq = 0.0
        for i in idx:
            walk += num(rows[i], "flow_step_m2")
            walk_sq += walk
        norm = sums[0]
        pct = lambda x: 100 * math.sqrt(x / norm) if norm > 0 else 0.0
        best = (sum(d2(q[i], c[i]) for i in idx), 0)
        for shift in range(-max_shift, max_shift + 1):
            if idx[0] + shift < 0 or idx[-1] + shift >= len(rows):
                continue
            e = sum(d2(q[i], c[i + shift]) for i in idx)
            if e < best[0]:
                best = (e, shift)
        amp = math.sqrt(sum(n2(q[i]) for i in idx) / max(1e-300, sum(n2(c[i]) for i in idx)))
        hops = sum(1 for i in idx[1:] if rows[i]["followed_irf"] != rows[i - 1]["followed_irf"])
        r0 = rows[idx[0]]
        print(f"{seg:>3} {r0['entry']:<6} {float(r0['t_s']):6.2f} {len(idx):6d} {pct(sums[1]):8.1f}"
              f" {pct(sums[2]):10.1f} {pct(sums[3]):7.1f} {pct(sums[5]):6.1f} {pct(sums[4]):5.2f}"
              f" {pct(walk_sq):5.1f}"
              f" {best[1]:+5d} {pct(best[0]):7.1f} {amp:5.3f} {hops:4d}")
    norm = total[0]
    pct = lambda x: 100 * math.sqrt(x / norm) if norm > 0 else 0.0
    print(f"all {'':>20} {pct(total[1]):8.1f} {pct(total[2]):10.1f} {pct(total[3]):7.1f}"
          f" {pct(total[5]):6.1f} {pct(total[4]):5.2f}")


if __name__ == "__main__":
    main()
