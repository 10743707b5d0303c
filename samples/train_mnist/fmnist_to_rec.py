#!/usr/bin/env python3
"""Fashion-MNIST as an image dataset: writes every image as a PNG file in a folder per class,
then packs the folders with weft-im2rec, MXNet's two im2rec.py steps:

    weft-im2rec --list --recursive --no-shuffle OUT/train OUT/png/train   # -> OUT/train.lst
    weft-im2rec --encoding .png --color 0 OUT/train OUT/png/train         # -> OUT/train.rec, .idx

(and the same for test). train_mnist then trains from the .rec files:

    samples/train_mnist/fmnist_to_rec.py build/default /tmp/fmnist-rec
    build/default/bin/train_mnist --network lenet --train-rec /tmp/fmnist-rec/train --val-rec /tmp/fmnist-rec/test

Usage: fmnist_to_rec.py BUILD_DIR OUT [--data-dir /usr/share/datasets/fashion-mnist] [--keep-png]
Plain Python (gzip, zlib): no imaging library needed. Class folders are named 0..9, so
weft-im2rec's labels (one per folder, in sorted order) are the Fashion-MNIST labels.
"""
import argparse
import gzip
import os
import shutil
import struct
import subprocess
import zlib


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return dims, data[4 + 4 * ndim:]


def gray_png(pixels, h, w):
    raw = b"".join(b"\x00" + pixels[y * w:(y + 1) * w] for y in range(h))

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("out")
    ap.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--keep-png", action="store_true", help="keep OUT/png after packing")
    a = ap.parse_args()
    im2rec = os.path.join(a.build, "bin", "weft-im2rec")
    for split, stem in (("train", "train"), ("test", "t10k")):
        (n, h, w), images = read_idx(os.path.join(a.data_dir, stem + "-images-idx3-ubyte.gz"))
        _, labels = read_idx(os.path.join(a.data_dir, stem + "-labels-idx1-ubyte.gz"))
        root = os.path.join(a.out, "png", split)
        shutil.rmtree(root, ignore_errors=True)
        for c in range(10):
            os.makedirs(os.path.join(root, str(c)))
        for i in range(n):
            with open(os.path.join(root, str(labels[i]), "%05d.png" % i), "wb") as f:
                f.write(gray_png(images[i * h * w:(i + 1) * h * w], h, w))
        prefix = os.path.join(a.out, split)
        subprocess.run([im2rec, "--list", "--recursive", "--no-shuffle", prefix, root], check=True)
        subprocess.run([im2rec, "--encoding", ".png", "--color", "0", "--num-thread", "2", prefix, root], check=True)
    if not a.keep_png:
        shutil.rmtree(os.path.join(a.out, "png"))


if __name__ == "__main__":
    main()
