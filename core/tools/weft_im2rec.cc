// weft-im2rec — packs images into image RecordIO files, as MXNet's tools/im2rec.py, with its
// options and outputs (readable by MXNet's ImageRecordIter and weft's).
//
//   weft-im2rec --list --recursive data/train images/     # images/<class>/*.jpg -> data/train.lst
//   weft-im2rec --resize 256 --quality 90 data/train images/   # data/train.lst -> .rec + .idx
//
// List mode (--list): walks `root` (with --recursive, one label per directory in sorted walk
// order, as im2rec.py; else the files of root with label 0), keeps files with an --exts extension,
// shuffles (unless --no-shuffle; weft's generator with seed 100, not Python's), splits by
// --train-ratio/--test-ratio and --chunks and writes prefix[_train|_val|_test][_i].lst: lines
// "<index>\t<label>\t<relative path>" (labels printed as %f).
// Pack mode: for prefix.lst (or every .lst in the directory `prefix`), reads each image under
// root, optionally crops the centre square (--center-crop) and resizes the shorter edge
// (--resize, bilinear), encodes it (--encoding .jpg|.png, --quality) and writes prefix.rec and
// prefix.idx in list order, key = index, IRHeader(0, label, index, 0) (several labels, or
// --pack-label: flag = label count). --pass-through stores the files' bytes unchanged.
// Unreadable images are reported and skipped, as im2rec.py does. Output files appear atomically.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include "weft/image.h"
#include "weft/recordio.h"

namespace fs = std::filesystem;

namespace {

struct Args {
  std::string prefix, root;
  bool list = false, recursive = false, shuffle = true, pass_through = false, center_crop = false, pack_label = false;
  std::vector<std::string> exts{".jpeg", ".jpg", ".png"};
  int chunks = 1, resize = 0, quality = 95, num_thread = 1, color = 1;
  double train_ratio = 1.0, test_ratio = 0.0;
  std::string encoding = ".jpg";
};

struct Item {
  uint64_t index = 0;
  std::string path;
  std::vector<float> labels;
};

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// im2rec.py's list_image: os.walk order with sorted directories and files.
std::vector<Item> ListImages(const Args& a) {
  std::vector<Item> items;
  std::map<std::string, int> category;
  auto wanted = [&](const fs::path& p) {
    return std::find(a.exts.begin(), a.exts.end(), Lower(p.extension().string())) != a.exts.end();
  };
  auto sorted_entries = [](const fs::path& dir) {
    std::vector<fs::directory_entry> e(fs::directory_iterator(dir, fs::directory_options::follow_directory_symlink),
                                       fs::directory_iterator());
    std::sort(e.begin(), e.end(),
              [](const auto& x, const auto& y) { return x.path().filename() < y.path().filename(); });
    return e;
  };
  std::function<void(const fs::path&)> walk = [&](const fs::path& dir) {
    const auto entries = sorted_entries(dir);
    for (const auto& e : entries) {
      if (!e.is_regular_file() || !wanted(e.path())) continue;
      const std::string d = dir.string();
      if (!category.count(d)) category.emplace(d, static_cast<int>(category.size()));
      items.push_back({items.size(), fs::relative(e.path(), a.root).string(), {static_cast<float>(category[d])}});
    }
    if (a.recursive)
      for (const auto& e : entries)
        if (e.is_directory()) walk(e.path());
  };
  walk(a.root);
  return items;
}

void WriteList(const std::string& path, const std::vector<Item>& items) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write '" + path + "'");
  for (const auto& it : items) {
    out << it.index << '\t';
    for (float l : it.labels) out << fmt::format("{:f}\t", l);
    out << it.path << '\n';
  }
  if (!out.flush()) throw std::runtime_error("cannot write '" + path + "'");
  std::printf("wrote %s (%zu images)\n", path.c_str(), items.size());
}

// im2rec.py's make_list: shuffle, then chunks, each split into train / test / val.
void MakeLists(const Args& a) {
  std::vector<Item> items = ListImages(a);
  if (a.shuffle) std::shuffle(items.begin(), items.end(), std::mt19937(100));
  const size_t chunk = (items.size() + static_cast<size_t>(a.chunks) - 1) / static_cast<size_t>(a.chunks);
  for (int i = 0; i < a.chunks; ++i) {
    const size_t b = std::min(items.size(), chunk * static_cast<size_t>(i));
    const size_t e = std::min(items.size(), b + chunk);
    std::vector<Item> part(items.begin() + static_cast<std::ptrdiff_t>(b),
                           items.begin() + static_cast<std::ptrdiff_t>(e));
    const std::string name = a.chunks > 1 ? fmt::format("{}_{}", a.prefix, i) : a.prefix;
    const auto sep_test = static_cast<size_t>(static_cast<double>(part.size()) * a.test_ratio);
    const auto sep = static_cast<size_t>(static_cast<double>(part.size()) * a.train_ratio);
    if (a.train_ratio == 1.0) {
      WriteList(name + ".lst", part);
      continue;
    }
    if (a.test_ratio > 0)
      WriteList(name + "_test.lst", {part.begin(), part.begin() + static_cast<std::ptrdiff_t>(sep_test)});
    if (a.train_ratio + a.test_ratio < 1.0)
      WriteList(name + "_val.lst",
                {part.begin() + static_cast<std::ptrdiff_t>(std::min(part.size(), sep_test + sep)), part.end()});
    WriteList(name + "_train.lst", {part.begin() + static_cast<std::ptrdiff_t>(sep_test),
                                    part.begin() + static_cast<std::ptrdiff_t>(std::min(part.size(), sep_test + sep))});
  }
}

std::vector<Item> ReadList(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open the list file '" + path + "'");
  std::vector<Item> items;
  std::string line;
  for (size_t n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, '\t');) f.push_back(x);
    if (f.size() < 3)
      throw std::runtime_error(fmt::format("'{}' line {}: expected '<index>\\t<label>...\\t<path>'", path, n));
    Item it;
    try {
      it.index = std::stoull(f[0]);
      for (size_t i = 1; i + 1 < f.size(); ++i) it.labels.push_back(std::stof(f[i]));
    } catch (const std::exception&) {
      throw std::runtime_error(fmt::format("'{}' line {}: the index and labels must be numbers", path, n));
    }
    it.path = f.back();
    if (!it.path.empty() && it.path.back() == '\r') it.path.pop_back();
    items.push_back(std::move(it));
  }
  return items;
}

std::vector<uint8_t> ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read '" + p.string() + "'");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// im2rec.py's image_encode: the record of one list item.
std::string Encode(const Args& a, const Item& it) {
  std::vector<uint8_t> bytes = ReadFile(fs::path(a.root) / it.path);
  if (!a.pass_through) {
    weft::Image im = weft::DecodeImage(bytes, a.color == 1 ? 3 : (a.color == 0 ? 1 : 0));
    if (a.center_crop && im.height != im.width) {
      const int side = std::min(im.height, im.width);
      weft::Image sq{side, side, im.channels, std::vector<uint8_t>(static_cast<size_t>(side * side * im.channels))};
      const int y0 = (im.height - side) / 2, x0 = (im.width - side) / 2;
      for (int y = 0; y < side; ++y) std::copy_n(im.row(y + y0) + x0 * im.channels, side * im.channels, sq.row(y));
      im = std::move(sq);
    }
    if (a.resize > 0) {
      const bool tall = im.height > im.width;
      const int w = tall ? a.resize : im.width * a.resize / im.height;
      const int h = tall ? im.height * a.resize / im.width : a.resize;
      im = weft::ResizeImage(im, w, h, weft::Interpolation::kLinear);
    }
    bytes = a.encoding == ".png" ? weft::EncodePng(im, a.quality) : weft::EncodeJpeg(im, std::clamp(a.quality, 1, 100));
  }
  weft::ImageRecordHeader h;
  h.id = it.index;
  if (it.labels.size() > 1 || a.pack_label) {
    h.labels = it.labels;
  } else {
    h.label = it.labels.empty() ? 0.f : it.labels[0];
  }
  return weft::PackImageRecord(h, bytes);
}

// Encodes on num_thread threads and writes in list order (im2rec.py's read/write workers).
void Pack(const Args& a, const std::string& lst) {
  const std::string base = lst.substr(0, lst.size() - 4);
  const std::vector<Item> items = ReadList(lst);
  weft::IndexedRecordIOWriter out(base + ".idx", base + ".rec");
  std::mutex mu;
  std::condition_variable cv;
  std::map<size_t, std::string> done;  // encoded records waiting for their turn ("" = skipped)
  std::atomic<size_t> next{0};
  const size_t window = static_cast<size_t>(a.num_thread) * 8;
  size_t written = 0, skipped = 0;
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < items.size();) {
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return i < written + window; });  // bounded memory
      }
      std::string rec;
      try {
        rec = Encode(a, items[i]);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "weft-im2rec: skipping %s: %s\n", items[i].path.c_str(), e.what());
      }
      std::lock_guard<std::mutex> lock(mu);
      done.emplace(i, std::move(rec));
      cv.notify_all();
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < a.num_thread; ++t) threads.emplace_back(worker);
  {
    std::unique_lock<std::mutex> lock(mu);
    while (written < items.size()) {
      cv.wait(lock, [&] { return done.count(written) != 0; });
      std::string rec = std::move(done[written]);
      done.erase(written);
      if (rec.empty()) {
        ++skipped;
      } else {
        out.Write(items[written].index, rec);
      }
      ++written;
      cv.notify_all();
      if (written % 1000 == 0) std::printf("%zu/%zu\n", written, items.size());
    }
  }
  for (auto& t : threads) t.join();
  out.Close();
  std::printf("wrote %s.rec and %s.idx: %zu images%s\n", base.c_str(), base.c_str(), items.size() - skipped,
              skipped ? fmt::format(" ({} skipped)", skipped).c_str() : "");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Pack images into MXNet image RecordIO files (.lst -> .rec + .idx), as MXNet's im2rec.py"};
  Args a;
  app.add_option("prefix", a.prefix, "prefix of the .lst/.rec/.idx files, or a directory of .lst files")->required();
  app.add_option("root", a.root, "the folder the image paths are relative to")
      ->required()
      ->check(CLI::ExistingDirectory);
  app.add_flag("--list", a.list, "make the .lst file(s) instead of packing");
  app.add_option("--exts", a.exts, "image extensions to list")->delimiter(',');
  app.add_option("--chunks", a.chunks, "number of list chunks")->check(CLI::Range(1, 1 << 20));
  app.add_option("--train-ratio", a.train_ratio, "share of the images in the training list")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--test-ratio", a.test_ratio, "share of the images in the test list")->check(CLI::Range(0.0, 1.0));
  app.add_flag("--recursive", a.recursive, "one label per sub-folder (class folders)");
  app.add_flag("--shuffle,!--no-shuffle", a.shuffle, "shuffle the list (default on)");
  app.add_flag("--pass-through", a.pass_through, "store the image files unchanged");
  app.add_option("--resize", a.resize, "resize the shorter edge to this (0: keep)")->check(CLI::Range(0, 1 << 16));
  app.add_flag("--center-crop", a.center_crop, "crop the centre square before resizing");
  app.add_option("--quality", a.quality, "JPEG quality 1-100, or PNG compression 0-9 (larger values: 9)")
      ->check(CLI::Range(0, 100));
  app.add_option("--num-thread", a.num_thread, "encoding threads")->check(CLI::Range(1, 256));
  app.add_option("--color", a.color, "1: colour, 0: gray, -1: as stored (alpha dropped)")->check(CLI::Range(-1, 1));
  app.add_option("--encoding", a.encoding, "encoding of the packed images")->check(CLI::IsMember({".jpg", ".png"}));
  app.add_flag("--pack-label", a.pack_label, "store labels as arrays (flag = label count) even when single");
  CLI11_PARSE(app, argc, argv);
  for (auto& e : a.exts) e = Lower(e.front() == '.' ? e : "." + e);
  try {
    if (a.list) {
      MakeLists(a);
      return 0;
    }
    std::vector<std::string> lists;
    if (fs::is_directory(a.prefix)) {
      for (const auto& e : fs::directory_iterator(a.prefix))
        if (e.path().extension() == ".lst") lists.push_back(e.path().string());
      std::sort(lists.begin(), lists.end());
    } else {
      lists.push_back(a.prefix + ".lst");
    }
    if (lists.empty() || !fs::exists(lists.front()))
      throw std::runtime_error("no list file '" + (lists.empty() ? a.prefix + "/*.lst" : lists.front()) +
                               "'; make one with --list first");
    for (const auto& l : lists) Pack(a, l);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weft-im2rec: %s\n", e.what());
    return 1;
  }
}
