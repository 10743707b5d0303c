// The iterator registry (weft/io.h): each iterator's parameters as MXNet 1.9.1 lists them (names,
// order, type descriptions and defaults, from MXDataIterGetIterInfo), and how to build it.
#include <algorithm>
#include <functional>

#include "io/iter_params.h"
#include "weft/csv_iter.h"
#include "weft/image_iter.h"
#include "weft/io.h"
#include "weft/libsvm_iter.h"
#include "weft/prefetching_iter.h"

namespace weft {
namespace {

using io_detail::ParamSpec;
using io_detail::ParamUse;
using io_detail::ParamValues;

struct Entry {
  std::string name, description;
  std::vector<ParamSpec> params;
  std::function<std::unique_ptr<DataIter>(const ParamValues&)> create;
};

ParamSpec P(std::string name, std::string type, std::optional<std::string> def, std::string doc,
            ParamUse use = ParamUse::kUsed) {
  return {std::move(name), std::move(type), std::move(def), std::move(doc), use};
}

constexpr auto kIgnored = ParamUse::kIgnored;
constexpr auto kDefaultOnly = ParamUse::kDefaultOnly;

// Parameters shared by the iterators MXNet wraps in its PrefetcherIter.
void AddPrefetchParams(std::vector<ParamSpec>& p, const char* dtypes) {
  p.push_back(P("prefetch_buffer", "long (non-negative), optional, default=4", "4", "batches made ahead"));
  p.push_back(P("ctx", "{'cpu', 'gpu'},optional, default='gpu'", "gpu",
                "MXNet: the device the loader is tuned for; batches are on the cpu either way", kIgnored));
  p.push_back(P("dtype", fmt::format("{},optional, default='None'", dtypes), "None", "element type of the data"));
}

std::vector<ParamSpec> ImageRecordParams(bool uint8_only) {
  std::vector<ParamSpec> p = {
      P("path_imglist", "string, optional, default=''", "", "image list (.lst): labels by image id"),
      P("path_imgrec", "string, optional, default=''", "", "the image RecordIO file (.rec)"),
      P("path_imgidx", "string, optional, default=''", "", "its index (.idx): partitions by record count"),
      P("aug_seq", "string, optional, default='aug_default'", "aug_default", "augmenters; only aug_default",
        kDefaultOnly),
      P("label_width", "int, optional, default='1'", "1", "labels per image"),
      P("data_shape", "Shape(tuple), required", std::nullopt, "(channels, height, width) of an output image"),
      P("preprocess_threads", "int, optional, default='4'", "4", "decoding threads (at most the cores)"),
      P("verbose", "boolean, optional, default=1", "1", "log the file and record count"),
      P("num_parts", "int, optional, default='1'", "1", "parts the file is split into"),
      P("part_index", "int, optional, default='0'", "0", "the part this iterator reads"),
      P("device_id", "int, optional, default='0'", "0", "MXNet: pinned-memory device; unused", kIgnored),
      P("shuffle_chunk_size", "long (non-negative), optional, default=0", "0", "MXNet's chunk shuffling; off only",
        kDefaultOnly),
      P("shuffle_chunk_seed", "int, optional, default='0'", "0", "seed of the chunk shuffling; unused", kIgnored),
      P("seed_aug", "int or None, optional, default='None'", "None", "seed of the augmentation draws"),
      P("shuffle", "boolean, optional, default=0", "0", "a new record order every epoch"),
      P("seed", "int, optional, default='0'", "0", "seed of the order (and of the draws without seed_aug)"),
      P("batch_size", "int (non-negative), required", std::nullopt, "images per batch"),
      P("round_batch", "boolean, optional, default=1", "1", "complete the last batch from the next epoch"),
  };
  AddPrefetchParams(p, uint8_only ? "{None, 'uint8'}" : "{None, 'float32', 'uint8'}");
  const std::vector<ParamSpec> aug = {
      P("resize", "int, optional, default='-1'", "-1", "shorter edge resized to this first"),
      P("rand_crop", "boolean, optional, default=0", "0", "crop at a random place (else centred)"),
      P("random_resized_crop", "boolean, optional, default=0", "0", "not implemented", kDefaultOnly),
      P("max_rotate_angle", "int, optional, default='0'", "0", "random rotation in [-v, v] degrees"),
      P("max_aspect_ratio", "float, optional, default=0", "0", "random aspect change in [1-v, 1+v]"),
      P("min_aspect_ratio", "float or None, optional, default=None", "None", "not implemented", kDefaultOnly),
      P("max_shear_ratio", "float, optional, default=0", "0", "random shear in [-v, v]"),
      P("max_crop_size", "int, optional, default='-1'", "-1", "random square crop size, upper bound"),
      P("min_crop_size", "int, optional, default='-1'", "-1", "random square crop size, lower bound"),
      P("max_random_scale", "float, optional, default=1", "1", "random scale, upper bound"),
      P("min_random_scale", "float, optional, default=1", "1", "random scale, lower bound"),
      P("max_random_area", "float, optional, default=1", "1", "random_resized_crop only; unused", kIgnored),
      P("min_random_area", "float, optional, default=1", "1", "random_resized_crop only; unused", kIgnored),
      P("max_img_size", "float, optional, default=1e+10", "1e+10", "largest size after scaling"),
      P("min_img_size", "float, optional, default=0", "0", "smallest size after scaling"),
      P("brightness", "float, optional, default=0", "0", "not implemented", kDefaultOnly),
      P("contrast", "float, optional, default=0", "0", "not implemented", kDefaultOnly),
      P("saturation", "float, optional, default=0", "0", "not implemented", kDefaultOnly),
      P("pca_noise", "float, optional, default=0", "0", "not implemented", kDefaultOnly),
      P("random_h", "int, optional, default='0'", "0", "not implemented", kDefaultOnly),
      P("random_s", "int, optional, default='0'", "0", "not implemented", kDefaultOnly),
      P("random_l", "int, optional, default='0'", "0", "not implemented", kDefaultOnly),
      P("rotate", "int, optional, default='-1'", "-1", "fixed rotation in degrees (overrides max_rotate_angle)"),
      P("fill_value", "int, optional, default='255'", "255", "value of pixels outside the image"),
      P("inter_method", "int, optional, default='1'", "1",
        "interpolation: 0 NN, 1 bilinear, 2 cubic, 3 area, 4 lanczos4, 9 auto, 10 random"),
      P("pad", "int, optional, default='0'", "0", "border of fill_value pixels added before cropping"),
  };
  p.insert(p.end(), aug.begin(), aug.end());
  if (uint8_only) return p;
  const std::vector<ParamSpec> norm = {
      P("mirror", "boolean, optional, default=0", "0", "mirror every image"),
      P("rand_mirror", "boolean, optional, default=0", "0", "mirror half of the images at random"),
      P("mean_img", "string, optional, default=''", "", "not implemented", kDefaultOnly),
      P("mean_r", "float, optional, default=0", "0", "subtracted from R"),
      P("mean_g", "float, optional, default=0", "0", "subtracted from G"),
      P("mean_b", "float, optional, default=0", "0", "subtracted from B"),
      P("mean_a", "float, optional, default=0", "0", "alpha: not supported", kDefaultOnly),
      P("std_r", "float, optional, default=1", "1", "R is divided by it"),
      P("std_g", "float, optional, default=1", "1", "G is divided by it"),
      P("std_b", "float, optional, default=1", "1", "B is divided by it"),
      P("std_a", "float, optional, default=1", "1", "alpha: not supported", kDefaultOnly),
      P("scale", "float, optional, default=1", "1", "multiplies the normalised pixels"),
      P("max_random_contrast", "float, optional, default=0", "0", "random contrast in [1-v, 1+v]"),
      P("max_random_illumination", "float, optional, default=0", "0", "random illumination in [-v, v]"),
  };
  p.insert(p.end(), norm.begin(), norm.end());
  return p;
}

std::unique_ptr<DataIter> MakeImageRecordIter(const ParamValues& v, bool uint8_only) {
  ImageRecordIterOptions o;
  o.path_imglist = v.Str("path_imglist");
  o.path_imgrec = v.Str("path_imgrec");
  o.path_imgidx = v.Str("path_imgidx");
  o.label_width = v.Int("label_width");
  o.data_shape = v.ShapeOf("data_shape");
  o.preprocess_threads = v.Int("preprocess_threads");
  o.verbose = v.Bool("verbose");
  o.num_parts = v.Int("num_parts");
  o.part_index = v.Int("part_index");
  o.seed_aug = v.OptInt("seed_aug");
  o.shuffle = v.Bool("shuffle");
  o.seed = v.Int("seed");
  o.batch_size = v.Int("batch_size");
  o.round_batch = v.Bool("round_batch");
  o.prefetch_buffer = v.Int("prefetch_buffer");
  o.dtype = v.Dtype("dtype", uint8_only ? DType::kUint8 : DType::kFloat32);
  o.resize = v.Int("resize");
  o.rand_crop = v.Bool("rand_crop");
  o.max_rotate_angle = v.Int("max_rotate_angle");
  o.max_aspect_ratio = v.Float("max_aspect_ratio");
  o.max_shear_ratio = v.Float("max_shear_ratio");
  o.max_crop_size = v.Int("max_crop_size");
  o.min_crop_size = v.Int("min_crop_size");
  o.max_random_scale = v.Float("max_random_scale");
  o.min_random_scale = v.Float("min_random_scale");
  o.max_img_size = v.Float("max_img_size");
  o.min_img_size = v.Float("min_img_size");
  o.rotate = v.Int("rotate");
  o.fill_value = v.Int("fill_value");
  o.inter_method = v.Int("inter_method");
  o.pad = v.Int("pad");
  if (!uint8_only) {
    o.mirror = v.Bool("mirror");
    o.rand_mirror = v.Bool("rand_mirror");
    o.mean_r = v.Float("mean_r");
    o.mean_g = v.Float("mean_g");
    o.mean_b = v.Float("mean_b");
    o.std_r = v.Float("std_r");
    o.std_g = v.Float("std_g");
    o.std_b = v.Float("std_b");
    o.scale = v.Float("scale");
    o.max_random_contrast = v.Float("max_random_contrast");
    o.max_random_illumination = v.Float("max_random_illumination");
  }
  return std::make_unique<ImageRecordIter>(o);
}

Entry MnistEntry() {
  std::vector<ParamSpec> p = {
      P("image", "string, optional, default='./train-images-idx3-ubyte'", "./train-images-idx3-ubyte",
        "the images (idx file, plain or gzip)"),
      P("label", "string, optional, default='./train-labels-idx1-ubyte'", "./train-labels-idx1-ubyte",
        "the labels (idx file, plain or gzip)"),
      P("batch_size", "int, optional, default='128'", "128", "images per batch"),
      P("shuffle", "boolean, optional, default=1", "1", "shuffle the images (once)"),
      P("flat", "boolean, optional, default=0", "0", "images as rows of 784 values"),
      P("seed", "int, optional, default='0'", "0", "seed of the shuffling"),
      P("silent", "boolean, optional, default=0", "0", "MXNet: no log output; unused", kIgnored),
      P("num_parts", "int, optional, default='1'", "1", "parts the data set is split into"),
      P("part_index", "int, optional, default='0'", "0", "the part this iterator reads"),
  };
  AddPrefetchParams(p, "{None, 'float32'}");
  return {"MNISTIter", "Iterates over the MNIST idx files (images scaled to [0, 1]), one shuffle at construction.",
          std::move(p), [](const ParamValues& v) -> std::unique_ptr<DataIter> {
            MNISTIterOptions o;
            o.batch_size = v.Int("batch_size");
            o.shuffle = v.Bool("shuffle");
            o.flat = v.Bool("flat");
            o.seed = static_cast<uint32_t>(v.Int("seed"));
            o.num_parts = v.Int("num_parts");
            o.part_index = v.Int("part_index");
            WEFT_CHECK(v.Dtype("dtype", DType::kFloat32) == DType::kFloat32, "MNISTIter: dtype must be float32");
            return std::make_unique<PrefetchingIter>(std::make_unique<MNISTIter>(v.Str("image"), v.Str("label"), o),
                                                     v.Int("prefetch_buffer"));
          }};
}

Entry CsvEntry() {
  std::vector<ParamSpec> p = {
      P("data_csv", "string, required", std::nullopt, "the data file"),
      P("data_shape", "Shape(tuple), required", std::nullopt, "the shape of one example"),
      P("label_csv", "string, optional, default='NULL'", "NULL", "the label file; NULL: labels are 0"),
      P("label_shape", "Shape(tuple), optional, default=[1]", "[1]", "the shape of one label"),
      P("batch_size", "int (non-negative), required", std::nullopt, "examples per batch"),
      P("round_batch", "boolean, optional, default=1", "1", "complete the last batch from the start"),
  };
  AddPrefetchParams(p, "{None, 'float32', 'int32', 'int64'}");
  return {"CSVIter", "Iterates over CSV files: one example (and one label) per line.", std::move(p),
          [](const ParamValues& v) -> std::unique_ptr<DataIter> {
            CSVIterOptions o;
            o.data_csv = v.Str("data_csv");
            o.data_shape = v.ShapeOf("data_shape");
            o.label_csv = v.Str("label_csv");
            o.label_shape = v.ShapeOf("label_shape");
            o.batch_size = v.Int("batch_size");
            o.round_batch = v.Bool("round_batch");
            o.prefetch_buffer = v.Int("prefetch_buffer");
            o.dtype = v.Dtype("dtype", DType::kFloat32);
            return std::make_unique<CSVIter>(o);
          }};
}

Entry LibSVMEntry() {
  std::vector<ParamSpec> p = {
      P("data_libsvm", "string, required", std::nullopt, "the data file (zero-based indices) or a directory of them"),
      P("data_shape", "Shape(tuple), required", std::nullopt, "(number of features,)"),
      P("label_libsvm", "string, optional, default='NULL'", "NULL",
        "the label file or directory; NULL: the data lines' labels"),
      P("label_shape", "Shape(tuple), optional, default=[1]", "[1]", "(label columns,)"),
      P("num_parts", "int, optional, default='1'", "1", "parts the files are split into"),
      P("part_index", "int, optional, default='0'", "0", "the part this iterator reads"),
      P("batch_size", "int (non-negative), required", std::nullopt, "examples per batch"),
      P("round_batch", "boolean, optional, default=1", "1", "complete the last batch from the start (only 1)"),
  };
  AddPrefetchParams(p, "{None, 'float32'}");
  return {"LibSVMIter", "Iterates over LibSVM files (zero-based indices): csr data batches.", std::move(p),
          [](const ParamValues& v) -> std::unique_ptr<DataIter> {
            LibSVMIterOptions o;
            o.data_libsvm = v.Str("data_libsvm");
            o.data_shape = v.ShapeOf("data_shape");
            o.label_libsvm = v.Str("label_libsvm");
            o.label_shape = v.ShapeOf("label_shape");
            o.num_parts = v.Int("num_parts");
            o.part_index = v.Int("part_index");
            o.batch_size = v.Int("batch_size");
            o.round_batch = v.Bool("round_batch");
            o.prefetch_buffer = v.Int("prefetch_buffer");
            WEFT_CHECK(v.Dtype("dtype", DType::kFloat32) == DType::kFloat32,
                       "LibSVMIter: dtype must be float32 (as in MXNet, whose LibSVMIter fails for any other)");
            return std::make_unique<LibSVMIter>(o);
          }};
}

const std::vector<Entry>& Registry() {
  static const std::vector<Entry> entries = [] {
    std::vector<Entry> e;
    e.push_back(CsvEntry());
    e.push_back({"ImageRecordIter",
                 "Iterates over an image RecordIO file (.rec from im2rec): decoding, augmentation and normalisation "
                 "on worker threads.",
                 ImageRecordParams(false), [](const ParamValues& v) { return MakeImageRecordIter(v, false); }});
    e.push_back({"ImageRecordUInt8Iter", "ImageRecordIter with uint8 output (MXNet: deprecated; use dtype='uint8').",
                 ImageRecordParams(true), [](const ParamValues& v) { return MakeImageRecordIter(v, true); }});
    e.push_back(LibSVMEntry());
    e.push_back(MnistEntry());
    std::sort(e.begin(), e.end(), [](const Entry& a, const Entry& b) { return a.name < b.name; });
    return e;
  }();
  return entries;
}

DataIterInfo InfoOf(const Entry& e) {
  DataIterInfo info{e.name, e.description, {}};
  for (const auto& p : e.params) info.params.push_back({p.name, p.type, p.default_value, p.doc});
  return info;
}

}  // namespace

std::vector<DataIterInfo> ListDataIters() {
  std::vector<DataIterInfo> out;
  for (const auto& e : Registry()) out.push_back(InfoOf(e));
  return out;
}

std::optional<DataIterInfo> FindDataIter(const std::string& name) {
  for (const auto& e : Registry())
    if (e.name == name) return InfoOf(e);
  return std::nullopt;
}

std::unique_ptr<DataIter> CreateDataIter(const std::string& name, const std::map<std::string, std::string>& params) {
  for (const auto& e : Registry())
    if (e.name == name) return e.create(ParamValues(name, e.params, params));
  std::string known;
  for (const auto& e : Registry()) known += (known.empty() ? "" : ", ") + e.name;
  Fail("data iterator '{}' is not available; known: {}", name, known);
}

}  // namespace weft
