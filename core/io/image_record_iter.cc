// ImageRecordIter (weft/image_iter.h): a BatchPlan for the order, a Prefetcher whose workers
// each make whole batches, an ImageTransform per image.
#include "weft/image_iter.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "io/batch_buffer.h"
#include "io/batch_plan.h"
#include "io/fork_join.h"
#include "io/image_transform.h"
#include "io/seed.h"
#include "weft/engine.h"
#include "weft/logging.h"
#include "weft/recordio.h"

namespace weft {

using io_detail::BatchPlan;

namespace {

// MXNet's ImageLabelMap: the labels of each image id from an .lst file ("<id>\t<label>...\t<path>").
std::unordered_map<uint64_t, std::vector<float>> ReadLabelList(const std::string& path, int label_width) {
  std::ifstream in(path);
  WEFT_CHECK(in.good(), "ImageRecordIter: cannot open the image list path_imglist '{}'", path);
  std::unordered_map<uint64_t, std::vector<float>> out;
  std::string line;
  for (size_t lineno = 1; std::getline(in, line); ++lineno) {
    std::istringstream fields(line);
    uint64_t id = 0;
    if (!(fields >> id)) {
      WEFT_CHECK(line.find_first_not_of(" \t\r") == std::string::npos,
                 "ImageRecordIter: '{}' line {}: expected '<image id>\\t<{} label(s)>\\t<path>'", path, lineno,
                 label_width);
      continue;
    }
    std::vector<float> labels(static_cast<size_t>(label_width));
    for (float& v : labels)
      WEFT_CHECK(static_cast<bool>(fields >> v), "ImageRecordIter: '{}' line {}: fewer than label_width={} labels",
                 path, lineno, label_width);
    out[id] = std::move(labels);
  }
  return out;
}

// decode_on_engine: what a batch's decode operation needs, shared with the operations in flight
// (they may outlive the iterator).
struct EngineDecoder {
  EngineDecoder(std::shared_ptr<const io_detail::ImageTransform> t, int threads, std::string rec, std::string of_part)
      : transform(std::move(t)),
        team(threads),
        scratch(static_cast<size_t>(threads)),
        path(std::move(rec)),
        part(std::move(of_part)) {}
  std::shared_ptr<const io_detail::ImageTransform> transform;
  io_detail::ForkJoin team;
  std::vector<io_detail::ImageTransform::Scratch> scratch;  // one per team thread
  std::mutex run;          // one batch at a time (several cpu workers may run decode operations)
  std::string path, part;  // the .rec file and Impl::PartText(), for errors
};

// "ImageRecordIter: 'x.rec' record N[ of part i/n] (image id I, byte offset O): what", the error
// of a record that cannot be used, from the worker threads and from the decode operation.
[[noreturn]] void RecordFail(const std::string& path, size_t sample, const std::string& part, uint64_t id,
                             uint64_t offset, const char* what) {
  Fail("ImageRecordIter: '{}' record {}{} (image id {}, byte offset {}): {}", path, sample, part, id, offset, what);
}

// One batch's images as a worker read them, for its decode operation.
struct PendingImages {
  std::vector<std::vector<uint8_t>> payload;   // the encoded images
  std::vector<uint64_t> position, id, offset;  // per image: its draw position; for errors
  std::vector<size_t> sample;
};

}  // namespace

struct WEFT_HIDDEN ImageRecordIter::Impl : ThreadedDataIter::Producer {
  struct Worker {
    io_detail::ImageTransform::Scratch scratch;
    std::vector<uint8_t> raw;
    std::string record;
  };

  ImageRecordIterOptions o;
  std::unique_ptr<RecordIOReader> reader;
  std::vector<RecordIOExtent> extents;
  std::unordered_map<uint64_t, std::vector<float>> label_map;
  std::shared_ptr<const io_detail::ImageTransform> transform;
  std::shared_ptr<EngineDecoder> engine_decoder;  // decode_on_engine
  std::unique_ptr<BatchPlan> plan;
  std::vector<std::unique_ptr<Worker>> workers;
  uint32_t aug_seed = 0;

  Shape LabelShape() const { return o.label_width == 1 ? Shape(o.batch_size) : Shape(o.batch_size, o.label_width); }

  // The labels of one record (flag > 0: its own; an .lst: by id; else the header's one label).
  void Labels(const ImageRecordHeader& h, float* out) const {
    const auto lw = static_cast<size_t>(o.label_width);
    if (!label_map.empty()) {
      auto it = label_map.find(h.id);
      WEFT_CHECK(it != label_map.end(), "image id {} is not in the image list '{}'", h.id, o.path_imglist);
      std::copy(it->second.begin(), it->second.end(), out);
    } else if (h.flag > 0) {
      WEFT_CHECK(h.labels.size() == lw,
                 "the record holds {} labels but label_width is {} (set label_width={}, or pack the records with one "
                 "label each)",
                 h.labels.size(), lw, h.labels.size());
      std::copy(h.labels.begin(), h.labels.end(), out);
    } else {
      WEFT_CHECK(lw == 1,
                 "the record holds 1 label but label_width is {} (label_width > 1 needs records packed with that many "
                 "labels, or path_imglist)",
                 lw);
      out[0] = h.label;
    }
  }

  // The record in w.raw: in place when it has one part (the usual case), else joined.
  std::span<const uint8_t> RecordBytes(Worker& w, const RecordIOExtent& e) const {
    if (w.raw.size() >= 8) {
      uint32_t head[2];
      std::memcpy(head, w.raw.data(), 8);
      const uint64_t len = head[1] & ((1u << 29) - 1);
      if (head[0] == kRecordIOMagic && (head[1] >> 29) == 0 && 8 + len <= w.raw.size())
        return std::span<const uint8_t>(w.raw).subspan(8, len);
    }
    ParseRecordIO(w.raw, 0, &w.record, o.path_imgrec, e.offset);
    return {reinterpret_cast<const uint8_t*>(w.record.data()), w.record.size()};
  }

  // "'x.rec' record" or "'x.rec' record ... of part i/n" pieces of the error messages.
  std::string PartText() const {
    return o.num_parts > 1 ? fmt::format(" of part {}/{}", o.part_index, o.num_parts) : std::string();
  }

  // Reads record `sample`: its labels and id into the batch; returns its encoded image (in w).
  std::span<const uint8_t> ReadImage(size_t sample, Worker& w, float* label, int* index, uint64_t* id) const {
    const RecordIOExtent& e = extents[sample];
    w.raw.resize(e.bytes);
    reader->ReadBytes(e.offset, e.bytes, w.raw.data());
    std::span<const uint8_t> payload;
    const ImageRecordHeader h = UnpackImageRecord(RecordBytes(w, e), &payload);
    *id = h.id;
    *index = static_cast<int>(h.id);
    Labels(h, label);
    return payload;
  }

  void OneImage(size_t sample, uint64_t position, Worker& w, uint8_t* data, float* label, int* index) const {
    uint64_t id = 0;
    try {
      const std::span<const uint8_t> payload = ReadImage(sample, w, label, index, &id);
      io_detail::DrawRng rng(io_detail::DrawSeed(aug_seed, position));
      transform->Process(payload, rng, w.scratch, data);
    } catch (const Error& err) {
      RecordFail(o.path_imgrec, sample, PartText(), id, extents[sample].offset, err.what());
    }
  }

  // decode_on_engine: reads the batch's records here and pushes their decoding as one operation
  // writing `data` (a cpu array nobody has used yet). Record errors are thrown here (so by Next);
  // image errors by the operation (so at the array's first wait).
  NDArray PushDecode(const BatchPlan::Batch& b, Worker& w, float* labels, std::vector<int>* index,
                     const ThreadedDataIter::Worker& worker) const {
    auto job = std::make_shared<PendingImages>();
    for (size_t i = 0; i < b.samples.size(); ++i) {
      if (worker.stopping()) return NDArray();
      uint64_t id = 0;
      try {
        const std::span<const uint8_t> payload =
            ReadImage(b.samples[i], w, labels + i * static_cast<size_t>(o.label_width), &(*index)[i], &id);
        job->payload.emplace_back(payload.begin(), payload.end());
      } catch (const Error& err) {
        RecordFail(o.path_imgrec, b.samples[i], PartText(), id, extents[b.samples[i]].offset, err.what());
      }
      job->position.push_back(b.positions[i]);
      job->id.push_back(id);
      job->offset.push_back(extents[b.samples[i]].offset);
      job->sample.push_back(b.samples[i]);
    }
    io_detail::BatchBuffer data(Shape(o.batch_size, o.data_shape[0], o.data_shape[1], o.data_shape[2]), o.dtype,
                                o.context);
    uint8_t* host = data.host();
    NDArray array = data.Finish();
    const size_t per = transform->out_bytes(), rows = static_cast<size_t>(o.batch_size);
    Engine::Get()->PushSync(
        [dec = engine_decoder, job, host, per, rows, seed = aug_seed, array](RunContext) {
          std::lock_guard<std::mutex> lock(dec->run);
          dec->team.Run(job->payload.size(), [&](size_t i, int t) {
            try {
              io_detail::DrawRng rng(io_detail::DrawSeed(seed, job->position[i]));
              dec->transform->Process(job->payload[i], rng, dec->scratch[static_cast<size_t>(t)], host + i * per);
            } catch (const Error& err) {
              RecordFail(dec->path, job->sample[i], dec->part, job->id[i], job->offset[i], err.what());
            }
          });
          const size_t used = job->payload.size();
          std::memset(host + used * per, 0, (rows - used) * per);
        },
        o.context, {}, {array.var()}, FnProperty::kNormal, 0, "ImageRecordIterDecode");
    return array;
  }

  void Restart(uint64_t delivered) override { plan->BeginEpoch(delivered); }

  // The label rows past the `used` images are zeros (round_batch=0's short batch).
  void FillLabelPad(size_t used, float* labels) const {
    std::fill(labels + used * static_cast<size_t>(o.label_width),
              labels + static_cast<size_t>(o.batch_size) * static_cast<size_t>(o.label_width), 0.0f);
  }

  bool Produce(uint64_t k, DataBatch* out, const ThreadedDataIter::Worker& worker) override {
    BatchPlan::Batch b;
    if (!plan->GetBatch(k, &b)) return false;
    io_detail::BatchBuffer data(Shape(o.batch_size, o.data_shape[0], o.data_shape[1], o.data_shape[2]), o.dtype,
                                o.context);
    io_detail::BatchBuffer label(LabelShape(), DType::kFloat32, o.context);
    const size_t per = transform->out_bytes();
    auto* labels = reinterpret_cast<float*>(label.host());
    out->index.assign(static_cast<size_t>(o.batch_size), 0);
    Worker& w = *workers[static_cast<size_t>(worker.index())];
    if (engine_decoder) {
      out->data = PushDecode(b, w, labels, &out->index, worker);
      if (out->data.is_none()) return false;  // stopping
      FillLabelPad(b.samples.size(), labels);
      out->pad_num = b.pad;
      out->label = label.Finish();
      return true;
    }
    for (size_t i = 0; i < b.samples.size(); ++i) {
      if (worker.stopping()) return false;  // dropped anyway
      OneImage(b.samples[i], b.positions[i], w, data.host() + i * per, labels + i * static_cast<size_t>(o.label_width),
               &out->index[i]);
    }
    // round_batch=0: the rows past the data are zeros (deterministic, unlike MXNet's stale rows).
    const size_t used = b.samples.size();
    std::memset(data.host() + used * per, 0, (static_cast<size_t>(o.batch_size) - used) * per);
    FillLabelPad(used, labels);
    out->pad_num = b.pad;
    out->data = data.Finish();
    out->label = label.Finish();
    return true;
  }
};

ImageRecordIter::ImageRecordIter(const ImageRecordIterOptions& options) {
  auto impl = std::make_unique<Impl>();
  Impl& m = *impl;
  m.o = options;
  const ImageRecordIterOptions& o = m.o;
  WEFT_CHECK(!o.path_imgrec.empty(), "ImageRecordIter: path_imgrec (the .rec file) is required");
  WEFT_CHECK(o.batch_size >= 1, "ImageRecordIter: batch_size must be at least 1, got {}", o.batch_size);
  WEFT_CHECK(o.label_width >= 1, "ImageRecordIter: label_width must be at least 1, got {}", o.label_width);
  WEFT_CHECK(o.prefetch_buffer >= 0, "ImageRecordIter: prefetch_buffer must not be negative");
  m.transform = std::make_unique<io_detail::ImageTransform>(o);
  m.reader = std::make_unique<RecordIOReader>(o.path_imgrec);
  m.extents = RecordIOPartition(o.path_imgrec, o.path_imgidx, o.num_parts, o.part_index);
  if (!o.path_imglist.empty()) m.label_map = ReadLabelList(o.path_imglist, o.label_width);
  // dmlc-core seeds its index shuffle with 111 + seed (kRandMagic).
  m.plan =
      std::make_unique<BatchPlan>(m.extents.size(), o.batch_size,
                                  o.round_batch ? io_detail::LastBatch::kRoundBatch : io_detail::LastBatch::kPartial,
                                  o.shuffle, static_cast<uint32_t>(111 + o.seed));
  m.aug_seed = static_cast<uint32_t>(o.seed_aug.value_or(o.seed));
  if (o.decode_on_engine) {
    WEFT_CHECK(o.context.GetDeviceType() == "cpu",
               "ImageRecordIter: decode_on_engine needs a cpu context (the operation writes the batch in host "
               "memory), got {}; use context cpu or leave decode_on_engine off",
               o.context);
    m.engine_decoder =
        std::make_shared<EngineDecoder>(m.transform, RecommendedCpuMathThreads(), o.path_imgrec, m.PartText());
  }
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const int threads = std::clamp(o.preprocess_threads, 1, cores);
  for (int i = 0; i < threads; ++i) m.workers.push_back(std::make_unique<Impl::Worker>());
  if (o.verbose)
    LogInfo("ImageRecordIter: '{}' part {}/{}: {} records, {} decoding threads", o.path_imgrec, o.part_index,
            o.num_parts, m.extents.size(), threads);
  impl_ = impl.get();
  StartWorkers(std::move(impl), threads, static_cast<size_t>(o.prefetch_buffer) + static_cast<size_t>(threads));
}

std::vector<DataDesc> ImageRecordIter::ProvideData() const {
  const auto& o = impl_->o;
  return {{"data", Shape(o.batch_size, o.data_shape[0], o.data_shape[1], o.data_shape[2]), o.dtype}};
}
std::vector<DataDesc> ImageRecordIter::ProvideLabel() const {
  return {{"softmax_label", impl_->LabelShape(), DType::kFloat32}};
}
size_t ImageRecordIter::num_records() const { return impl_->extents.size(); }
size_t ImageRecordIter::num_batches() const { return static_cast<size_t>(impl_->plan->num_batches()); }

}  // namespace weft
