#!/usr/bin/env python3
"""The image loaders weft's ImageRecordIter is compared with, on the same data and the same
work: random 224x224 crop, random mirror, mean/std normalisation to float32, batches of 64.

  peer_loaders.py mxnet   REC  --threads T   MXNet's ImageRecordIter (run it with MXNet's python)
  peer_loaders.py pytorch JPEG_DIR --threads T   torch DataLoader over ImageFolder (torchvision:
                                                  RandomCrop, RandomHorizontalFlip, ToTensor,
                                                  Normalize), T worker processes, 1 thread each

Prints "images/s <value>" (after --warmup batches, over --batches batches; the file is read again
from its start when it runs out).
"""
import argparse
import os
import sys
import time

MEAN = (123.68, 116.28, 103.53)
STD = (58.395, 57.12, 57.375)


def timed(batches_iter, batches, warmup, batch_size, wait):
    for _ in range(warmup):
        wait(next(batches_iter))
    t0 = time.perf_counter()
    for _ in range(batches):
        wait(next(batches_iter))
    return batches * batch_size / (time.perf_counter() - t0)


def mxnet_loader(a):
    import mxnet as mx

    it = mx.io.ImageRecordIter(path_imgrec=a.data, data_shape=(3, 224, 224), batch_size=a.batch_size,
                               rand_crop=True, rand_mirror=True, mean_r=MEAN[0], mean_g=MEAN[1], mean_b=MEAN[2],
                               std_r=STD[0], std_g=STD[1], std_b=STD[2], preprocess_threads=a.threads,
                               prefetch_buffer=4, verbose=False)

    def forever():
        while True:
            for b in it:
                yield b
            it.reset()

    return timed(forever(), a.batches, a.warmup, a.batch_size, lambda b: b.data[0].wait_to_read())


def worker_init(_):
    import torch

    torch.set_num_threads(1)


def pytorch_loader(a):
    import torch
    import torchvision
    from torchvision import transforms as T

    torch.set_num_threads(1)
    tf = T.Compose([T.RandomCrop(224), T.RandomHorizontalFlip(), T.ToTensor(),
                    T.Normalize([m / 255 for m in MEAN], [s / 255 for s in STD])])
    ds = torchvision.datasets.ImageFolder(a.data, transform=tf)
    dl = torch.utils.data.DataLoader(ds, batch_size=a.batch_size, shuffle=False, num_workers=a.threads,
                                     worker_init_fn=worker_init, persistent_workers=True, prefetch_factor=4)

    def forever():
        while True:
            for b in dl:
                yield b

    return timed(forever(), a.batches, a.warmup, a.batch_size, lambda b: None)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("which", choices=["mxnet", "pytorch"])
    ap.add_argument("data")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--batches", type=int, default=150)
    ap.add_argument("--warmup", type=int, default=10)
    a = ap.parse_args()
    rate = mxnet_loader(a) if a.which == "mxnet" else pytorch_loader(a)
    print("images/s %.1f" % rate)
    sys.stdout.flush()
    os._exit(0)  # MXNet's and the DataLoader's threads and processes need not be joined


if __name__ == "__main__":
    main()
