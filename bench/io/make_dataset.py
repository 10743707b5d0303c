#!/usr/bin/env python3
"""Makes the image-loading benchmark's data set: N synthetic 256x256 RGB pictures (smooth
gradients and waves, random shapes, texture noise: JPEG sizes like photographs' at quality 90)
packed by weft-im2rec into OUT/bench.rec + .idx (JPEG, quality 90), and the very same JPEG bytes
as files OUT/jpeg/<class>/<name>.jpg for PyTorch's ImageFolder.

Usage: make_dataset.py BUILD_DIR OUT [--count 10240] [--classes 10]
Needs numpy (Debian python3-numpy). Deterministic (seeded); re-running overwrites OUT.
"""
import argparse
import os
import shutil
import struct
import subprocess
import sys
import zlib

import numpy as np

SIZE = 256


def png(img):
    h, w, _ = img.shape
    raw = b"".join(b"\x00" + img[y].tobytes() for y in range(h))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(raw, 1)) + chunk(b"IEND", b""))


def picture(rng):
    y, x = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32) / SIZE
    img = np.zeros((SIZE, SIZE, 3), np.float32)
    for c in range(3):
        for _ in range(3):
            fx, fy, ph = rng.uniform(0.5, 6), rng.uniform(0.5, 6), rng.uniform(0, 6.3)
            img[..., c] += rng.uniform(20, 50) * np.sin(2 * np.pi * (fx * x + fy * y) + ph)
        img[..., c] += rng.uniform(60, 190)
    for _ in range(rng.randint(3, 9)):  # shapes with sharp edges
        cy, cx, ry, rx = rng.uniform(0, 1, 4) * [1, 1, 0.3, 0.3]
        mask = ((y - cy) / (ry + 0.02)) ** 2 + ((x - cx) / (rx + 0.02)) ** 2 < 1
        img[mask] = rng.uniform(0, 255, 3)
    noise = rng.normal(0, 10, (SIZE // 2, SIZE // 2, 3)).repeat(2, 0).repeat(2, 1)  # texture
    img += noise + rng.normal(0, 3, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("out")
    ap.add_argument("--count", type=int, default=10240)
    ap.add_argument("--classes", type=int, default=10)
    a = ap.parse_args()
    im2rec = os.path.join(a.build, "bin", "weft-im2rec")
    src = os.path.join(a.out, "png")
    shutil.rmtree(a.out, ignore_errors=True)
    rng = np.random.RandomState(2026)
    for i in range(a.count):
        d = os.path.join(src, "c%02d" % (i % a.classes))
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "img%05d.png" % i), "wb") as f:
            f.write(png(picture(rng)))
    prefix = os.path.join(a.out, "bench")
    subprocess.run([im2rec, "--list", "--recursive", prefix, src], check=True)
    subprocess.run([im2rec, "--quality", "90", "--num-thread", "2", prefix, src], check=True)
    # The JPEG payloads as files, for PyTorch: the same bytes the .rec holds.
    with open(prefix + ".lst") as f:
        paths = {int(line.split("\t")[0]): line.rstrip("\n").split("\t")[-1] for line in f if line.strip()}
    total = 0
    with open(prefix + ".idx") as idx, open(prefix + ".rec", "rb") as rec:
        for line in idx:
            key, offset = map(int, line.split())
            rec.seek(offset)
            magic, lrec = struct.unpack("<II", rec.read(8))
            if magic != 0xCED7230A or lrec >> 29 != 0:
                sys.exit("record %d: not a single-part record (this script reads only those)" % key)
            payload = rec.read(lrec & ((1 << 29) - 1))
            flag = struct.unpack("<I", payload[:4])[0]
            jpeg = payload[24 + 4 * flag:]
            out = os.path.join(a.out, "jpeg", os.path.splitext(paths[key])[0] + ".jpg")
            os.makedirs(os.path.dirname(out), exist_ok=True)
            with open(out, "wb") as f:
                f.write(jpeg)
            total += len(jpeg)
    shutil.rmtree(src)
    print("%d JPEG images of %dx%d, %.1f kB each on average: %s.rec, %s/jpeg/" %
          (a.count, SIZE, SIZE, total / a.count / 1024, prefix, a.out))


if __name__ == "__main__":
    main()
