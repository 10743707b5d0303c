// image_iter_bench — images/s of weft's ImageRecordIter: ImageNet-style training input (random
// 224x224 crop, random mirror, mean/std normalisation, float32, batch 64) from a .rec file.
// Prints one line: "images/s <value>" (after --warmup batches, over --batches batches).
//
//   image_iter_bench --rec bench.rec --threads 2 --batches 150
//   image_iter_bench --rec fmnist/train.rec --mnist --channels 1 --crop 28 --batch-size 100 --batches 600
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>

#include "weft/image_iter.h"

int main(int argc, char** argv) {
  CLI::App app{"images/s of weft's ImageRecordIter"};
  weft::ImageRecordIterOptions o;
  int batches = 150, warmup = 10;
  app.add_option("--rec", o.path_imgrec, "the .rec file")->required();
  app.add_option("--threads", o.preprocess_threads, "preprocess_threads");
  app.add_option("--batch-size", o.batch_size, "images per batch")->default_val(64);
  app.add_option("--batches", batches, "batches timed");
  app.add_option("--warmup", warmup, "batches before the timing starts");
  app.add_option("--prefetch", o.prefetch_buffer, "prefetch_buffer");
  int crop = 224, channels = 3;
  bool mnist = false;
  app.add_option("--crop", crop, "output height and width");
  app.add_option("--channels", channels, "output channels (1: gray)");
  app.add_flag("--mnist", mnist,
               "train_mnist's input instead: no crop, mirror or mean/std, pixels scaled to [0, 1], shuffled");
  app.add_flag("--decode-on-engine", o.decode_on_engine, "decode each batch as an engine operation");
  CLI11_PARSE(app, argc, argv);
  o.data_shape = weft::Shape(channels, crop, crop);
  if (mnist) {
    o.scale = 1.0f / 255;
    o.shuffle = true;
  } else {
    o.rand_crop = o.rand_mirror = true;
    o.mean_r = 123.68f, o.mean_g = 116.28f, o.mean_b = 103.53f;
    o.std_r = 58.395f, o.std_g = 57.12f, o.std_b = 57.375f;
  }
  try {
    weft::ImageRecordIter it(o);
    using Clock = std::chrono::steady_clock;
    auto next = [&] {
      if (!it.Next()) {  // a new epoch when the file is used up
        it.BeforeFirst();
        if (!it.Next()) throw std::runtime_error("no batch");
      }
      it.GetData().WaitToRead();
    };
    for (int i = 0; i < warmup; ++i) next();
    const auto t0 = Clock::now();
    for (int i = 0; i < batches; ++i) next();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    std::printf("images/s %.1f\n", batches * o.batch_size / s);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "image_iter_bench: %s\n", e.what());
    return 1;
  }
}
