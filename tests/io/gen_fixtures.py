#!/usr/bin/env python3
"""Writes the RecordIO / ImageRecordIter fixtures under tests/io/data/ from the real MXNet 1.9.1,
and checks that MXNet reads what weft writes.

Run by hand, with weft built (the tests only read the files it writes; they never need MXNet):

    cmake --build --preset default --target weft-im2rec
    MXNET_SUBGRAPH_BACKEND=NONE /work/mxvenv/bin/python tests/io/gen_fixtures.py [--build build/default]

Steps (all deterministic):
 1. Source images: 16 small RGB pictures (gradients, shapes, a little noise; sizes 32..100) and a
    few PNG variants (gray, RGBA, 16-bit, palette), written as PNG files by this script (zlib),
    in three class folders under a temporary directory.
 2. weft-im2rec packs them: jpg.rec/.idx (JPEG q90 re-encoded), png.rec/.idx (--pass-through:
    the PNG files as they are), gray.rec/.idx (gray JPEGs, --color 0).
 3. MXNet's MXIndexedRecordIO reads every record of weft's files and writes them again; the
    script checks that MXNet's .rec and .idx are byte-identical to weft's, and keeps one copy:
    each is both a weft-written file (read by MXNet's ImageRecordIter in step 5) and an
    MXNet-written one (read by weft's tests). multilabel.rec/.idx: MXNet-written, the jpg records
    with two labels each (flag 2).
 4. MXNet writes mxnet_records.rec/.idx: generic records (empty, the magic number at aligned and
    unaligned offsets, a 70 kB record with many parts); records.bin holds the expected bytes
    (u32 length + bytes per record, written by plain Python).
 5. MXNet's ImageRecordIter runs every configuration of CONFIGS; iter_<name>.params holds its
    batches ("data:<epoch>:<batch>", "label:...", "index:..." as float32, "pad:..."), and
    iters.json the parameters and batch counts.
"""
import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
import zlib

import numpy as np

os.environ.setdefault("MXNET_SUBGRAPH_BACKEND", "NONE")
import mxnet as mx  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "data")
ROOT = os.path.dirname(os.path.dirname(HERE))
MAGIC = struct.pack("<I", 0xCED7230A)


# ---- PNG writing (no imaging library in the venv) ---------------------------------------------

def png_bytes(pixels, bit_depth=8, palette=None):
    """pixels: (h, w) gray, (h, w, 3) RGB, (h, w, 4) RGBA; palette: (n, 3) with index pixels."""
    h, w = pixels.shape[:2]
    if palette is not None:
        color_type, channels = 3, 1
    else:
        channels = 1 if pixels.ndim == 2 else pixels.shape[2]
        color_type = {1: 0, 3: 2, 4: 6}[channels]
    dtype = ">u2" if bit_depth == 16 else "u1"
    rows = np.frombuffer(pixels.reshape(h, w * channels).astype(dtype).tobytes(), np.uint8).reshape(h, -1)
    # Filter "Sub" (type 1) on every row: each byte minus the byte one pixel to its left.
    bpp = channels * bit_depth // 8
    sub = rows.astype(np.int16)
    sub[:, bpp:] -= rows[:, :-bpp].astype(np.int16)
    raw = b"".join(b"\x01" + (sub[y] & 0xFF).astype(np.uint8).tobytes() for y in range(h))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    out = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, bit_depth, color_type, 0, 0, 0))
    if palette is not None:
        out += chunk(b"PLTE", palette.astype("u1").tobytes())
    return out + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def picture(rng, h, w):
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    img = np.empty((h, w, 3), np.float32)
    img[..., 0] = 255 * x / max(w - 1, 1)
    img[..., 1] = 255 * y / max(h - 1, 1)
    img[..., 2] = 128 + 100 * np.sin((x + 2 * y) / (3 + rng.randint(5)))
    cy, cx, r = rng.randint(h), rng.randint(w), 4 + rng.randint(min(h, w) // 3)
    img[(y - cy) ** 2 + (x - cx) ** 2 < r * r] = rng.randint(0, 256, 3)
    img += rng.randint(-2, 3, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def make_images(folder):
    rng = np.random.RandomState(20261203)
    sizes = [(32, 32), (40, 48), (48, 40), (64, 64), (33, 35), (72, 60), (37, 50), (56, 72),
             (60, 72), (32, 45), (45, 32), (60, 61), (35, 35), (66, 48), (48, 66), (50, 50)]
    for i, (h, w) in enumerate(sizes):
        cls = os.path.join(folder, "class%d" % (i % 3))
        os.makedirs(cls, exist_ok=True)
        img = picture(rng, h, w)
        if i == 3:
            data = png_bytes(img[..., 0])  # gray PNG
        elif i == 5:
            data = png_bytes(np.dstack([img, rng.randint(0, 256, (h, w))]))  # RGBA
        elif i == 7:
            data = png_bytes(np.clip(img.astype(np.int64) * 257 + rng.randint(0, 200, img.shape), 0, 65535), bit_depth=16)
        elif i == 9:
            pal = rng.randint(0, 256, (16, 3))
            data = png_bytes(rng.randint(0, 16, (h, w)), palette=pal)
        else:
            data = png_bytes(img)
        with open(os.path.join(cls, "img%02d.png" % i), "wb") as f:
            f.write(data)


# ---- records -----------------------------------------------------------------------------------

def generic_records():
    rng = np.random.RandomState(7)
    recs = [b"", b"a", b"abc", b"abcd", MAGIC, b"xy" + MAGIC + b"z", MAGIC + b"q" + MAGIC,
            b"1234" + MAGIC + MAGIC + b"5678" + MAGIC, bytes(range(256))]
    big = bytearray(rng.randint(0, 256, 20000).astype(np.uint8).tobytes())
    for off in (0, 4096, 4100, 12000, 19996):
        big[off:off + 4] = MAGIC
    recs.append(bytes(big))
    recs.append(b"\x00" * 13)
    return recs


def write_records_bin(path, recs):
    with open(path, "wb") as f:
        for r in recs:
            f.write(struct.pack("<I", len(r)) + r)


def read_all(idx, rec):
    r = mx.recordio.MXIndexedRecordIO(idx, rec, "r")
    out = [(k, r.read_idx(k)) for k in r.keys]
    r.close()
    return out


def rewrite(idx, rec, items, relabel=None):
    w = mx.recordio.MXIndexedRecordIO(idx, rec, "w")
    for k, s in items:
        if relabel:
            header, img = mx.recordio.unpack(s)
            s = mx.recordio.pack(relabel(header), img)
        w.write_idx(k, s)
    w.close()


# ---- ImageRecordIter configurations ------------------------------------------------------------

COMMON = dict(preprocess_threads=1, verbose=False)
CONFIGS = {
    # exact: uint8, no resize, centre crop (JPEG: libjpeg-turbo islow + fancy upsampling; PNG)
    "jpg_u8": dict(path_imgrec="jpg.rec", data_shape=(3, 30, 28), batch_size=4, dtype="uint8"),
    "png_u8": dict(path_imgrec="png.rec", data_shape=(3, 28, 30), batch_size=4, dtype="uint8"),
    "gray_u8": dict(path_imgrec="jpg.rec", data_shape=(1, 32, 32), batch_size=8, dtype="uint8"),
    "png_gray_u8": dict(path_imgrec="png.rec", data_shape=(1, 32, 32), batch_size=8, dtype="uint8"),
    "grayjpg_rgb_u8": dict(path_imgrec="gray.rec", data_shape=(3, 24, 24), batch_size=8, dtype="uint8"),
    # float32 normalisation and mirror; 5 per batch: the 4th batch wraps (pad 4), 2 epochs
    "jpg_f32": dict(path_imgrec="jpg.rec", data_shape=(3, 12, 12), batch_size=5, mean_r=123.68,
                    mean_g=116.28, mean_b=103.53, std_r=58.4, std_g=57.1, std_b=57.4, scale=0.5, mirror=True,
                    epochs=2),
    "round0_f32": dict(path_imgrec="png.rec", data_shape=(3, 12, 12), batch_size=5, round_batch=False,
                       mean_r=10, scale=1.0 / 255),
    # resize: bilinear and area (the tests state the tolerance)
    "resize_u8": dict(path_imgrec="jpg.rec", data_shape=(3, 28, 28), batch_size=8, dtype="uint8", resize=40),
    "resize_area_u8": dict(path_imgrec="png.rec", data_shape=(3, 24, 24), batch_size=8, dtype="uint8",
                           resize=26, inter_method=3),
    # order only (labels): partitions, multi-label. MXNet 1.9.1's ImageRecordIter leaves the batch
    # index at zeros, so the order is read from the second label of multilabel.rec (image id / 2).
    # Not here: shuffle with an index. MXNet 1.9.1 repeats and skips records within an epoch then
    # (measured with seed 3, 16 records, batches of 4: ids 13, 4, 14, 0 came twice in the first
    # epoch and 2, 6, 7, 15 never), so there is no order to reproduce.
    "multilabel": dict(path_imgrec="multilabel.rec", data_shape=(3, 8, 8), batch_size=4, label_width=2,
                       labels_only=True),
}
for p in range(3):
    CONFIGS["part%d" % p] = dict(path_imgrec="multilabel.rec", data_shape=(3, 8, 8), batch_size=2, num_parts=3,
                                 part_index=p, label_width=2, round_batch=False, labels_only=True)
    CONFIGS["idxpart%d" % p] = dict(path_imgrec="multilabel.rec", path_imgidx="multilabel.idx",
                                    data_shape=(3, 8, 8), batch_size=2, num_parts=3, part_index=p, label_width=2,
                                    round_batch=False, labels_only=True)


def run_config(name, cfg):
    cfg = dict(cfg)
    epochs = cfg.pop("epochs", 1)
    labels_only = cfg.pop("labels_only", False)
    params = dict(COMMON, **cfg)
    kw = dict(params)
    for k in ("path_imgrec", "path_imgidx"):
        if k in kw:
            kw[k] = os.path.join(OUT, kw[k])
    it = mx.io.ImageRecordIter(**kw)
    arrays, counts = {}, []
    for e in range(epochs):
        if e > 0:
            it.reset()
        n = 0
        for b in it:
            key = "%d:%d" % (e, n)
            # Copies at once: MXNet recycles a batch's memory for later batches once prefetch_buffer
            # more were taken (with prefetch_buffer=1 the arrays of a batch change under the caller).
            if not labels_only and e == 0:
                arrays["data:" + key] = b.data[0].copy()
            arrays["label:" + key] = b.label[0].copy()
            arrays["index:" + key] = mx.nd.array(b.index.astype(np.float32))
            arrays["pad:" + key] = mx.nd.array([b.pad])
            n += 1
        counts.append(n)
    mx.nd.save(os.path.join(OUT, "iter_%s.params" % name), arrays)
    return {"params": params, "epochs": epochs, "batches": counts, "labels_only": labels_only}


def im2rec(build, *args):
    exe = os.path.join(build, "bin", "weft-im2rec")
    subprocess.run([exe, *args], check=True, stdout=subprocess.DEVNULL)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "default"))
    args = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        images = os.path.join(tmp, "images")
        make_images(images)
        lst = os.path.join(tmp, "all")
        im2rec(args.build, "--list", "--recursive", "--no-shuffle", lst, images)
        # weft-im2rec packs (weft-written files); MXNet reads every record back and writes them
        # again with its own MXIndexedRecordIO: the bytes must be identical, so one copy of each
        # file stands for both writers.
        for name, extra in (("jpg", ["--quality", "90"]), ("png", ["--pass-through"]),
                            ("gray", ["--color", "0", "--quality", "85"])):
            prefix = os.path.join(tmp, name)
            with open(lst + ".lst") as src, open(prefix + ".lst", "w") as dst:
                dst.write(src.read())
            im2rec(args.build, *extra, prefix, images)
            items = read_all(prefix + ".idx", prefix + ".rec")
            rewrite(os.path.join(OUT, name + ".idx"), os.path.join(OUT, name + ".rec"), items)
            for ext in (".rec", ".idx"):
                with open(prefix + ext, "rb") as a, open(os.path.join(OUT, name + ext), "rb") as b:
                    assert a.read() == b.read(), "MXNet's rewrite of weft's %s%s differs" % (name, ext)
        items = read_all(os.path.join(OUT, "jpg.idx"), os.path.join(OUT, "jpg.rec"))
        rewrite(os.path.join(OUT, "multilabel.idx"), os.path.join(OUT, "multilabel.rec"), items,
                relabel=lambda h: h._replace(label=np.array([h.label, h.id * 0.5], np.float32)))
    recs = generic_records()
    w = mx.recordio.MXIndexedRecordIO(os.path.join(OUT, "mxnet_records.idx"), os.path.join(OUT, "mxnet_records.rec"),
                                      "w")
    for i, r in enumerate(recs):
        w.write_idx(i, r)
    w.close()
    write_records_bin(os.path.join(OUT, "records.bin"), recs)
    r = mx.recordio.MXRecordIO(os.path.join(OUT, "mxnet_records.rec"), "r")
    assert [r.read() for _ in recs] == recs and r.read() is None
    summary = {name: run_config(name, cfg) for name, cfg in sorted(CONFIGS.items())}
    with open(os.path.join(OUT, "iters.json"), "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
    total = sum(os.path.getsize(os.path.join(OUT, f)) for f in os.listdir(OUT))
    print("wrote %d files, %d bytes, to %s" % (len(os.listdir(OUT)), total, OUT))


if __name__ == "__main__":
    sys.exit(main())
