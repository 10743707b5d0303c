// weft core — KVStore "local" and "device" (see weft/kvstore.h).
#include "weft/kvstore.h"

#include <algorithm>
#include <cctype>
#include <mutex>
#include <optional>
#include <variant>

#include <nlohmann/json.hpp>

#include "kvstore/host_ops.h"
#include "operator/kernel_runner.h"
#include "weft/sdk/operator.h"

namespace weft {
namespace {

// A key as the store sees it: ints and strings in one map, the kind remembered.
struct Key {
  bool is_string;
  int int_key;
  std::string str_key;
  std::string id() const { return is_string ? "s:" + str_key : "i:" + std::to_string(int_key); }
  std::string display() const { return is_string ? "'" + str_key + "'" : std::to_string(int_key); }
};
Key IntKey(int k) { return Key{false, k, {}}; }
Key StrKey(const std::string& k) { return Key{true, 0, k}; }

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

struct KVStore::Impl {
  struct Entry {
    Key key;
    NDArray stored;
    int opt_index = 0;
    std::optional<Context> merge_ctx;      // where pushes are summed (device type: chosen at first push)
    NDArray merged;                        // the sum of the last push
    std::map<size_t, NDArray> staging;     // per value slot: copy on the merge device (or cpu(0))
    std::map<size_t, NDArray> host_stage;  // per value slot: cpu(0) copy of a device value to compress
    std::map<size_t, NDArray> residual;    // per value slot: 2-bit compression residual (cpu(0))
    std::map<size_t, NDArray> packed;      // per value slot: 2-bit codes (cpu(0), uint32)
    std::map<size_t, NDArray> decoded;     // per value slot: decoded values (cpu(0))
    std::map<size_t, std::unique_ptr<KernelRunner>> add_n;  // device sums by number of inputs
  };

  std::string type;
  bool device_mode = false;
  std::mutex mu;
  std::map<std::string, Entry> entries;
  std::optional<bool> string_keys;  // set by the first key used
  int next_index = 0;
  std::unique_ptr<Optimizer> optimizer;
  Updater updater;
  StrUpdater str_updater;
  bool compress = false;
  float threshold = 0.5f;
  bool pushed = false;
  std::map<Context, uint64_t> merge_load;  // bytes of keys merged on each device

  void CheckKind(const Key& key) {
    if (!string_keys) {
      string_keys = key.is_string;
      return;
    }
    WEFT_CHECK(*string_keys == key.is_string,
               "KVStore({}): key {} is {} but this store already uses {} keys; one store takes int keys or string "
               "keys, not both",
               type, key.display(), key.is_string ? "a string" : "an int", *string_keys ? "string" : "int");
  }

  Entry& Find(const Key& key, const char* op) {
    CheckKind(key);
    auto it = entries.find(key.id());
    WEFT_CHECK(it != entries.end(), "KVStore({}) {}: key {} has not been initialized; call Init({}, value) first", type,
               op, key.display(), key.display());
    return it->second;
  }

  void CheckArray(const Entry& e, const NDArray& a, const char* op, const char* what, size_t i) {
    WEFT_CHECK(!a.is_none(), "KVStore({}) {} of key {}: {} {} is a none array", type, op, e.key.display(), what, i);
    WEFT_CHECK(a.GetShape() == e.stored.GetShape() && a.GetDType() == e.stored.GetDType(),
               "KVStore({}) {} of key {}: {} {} has shape {} and dtype {}, but the key was initialized with shape {} "
               "and dtype {}",
               type, op, e.key.display(), what, i, a.GetShape(), DTypeName(a.GetDType()), e.stored.GetShape(),
               DTypeName(e.stored.GetDType()));
  }

  void Init(const Key& key, const NDArray& value) {
    std::lock_guard<std::mutex> lock(mu);
    CheckKind(key);
    WEFT_CHECK(entries.count(key.id()) == 0, "KVStore({}) Init: duplicate init of key {}; a key is initialized once",
               type, key.display());
    WEFT_CHECK(!value.is_none(), "KVStore({}) Init of key {}: the value is a none array", type, key.display());
    WEFT_CHECK(value.GetDType() == DType::kFloat32,
               "KVStore({}) Init of key {}: the value is {}; KVStore keeps float32", type, key.display(),
               DTypeName(value.GetDType()));
    Entry e;
    e.key = key;
    // "local" keeps values on the host; "device" keeps them where they come from until the
    // first push picks the merge device.
    e.stored = value.Copy(device_mode ? value.GetContext() : Context::cpu(0));
    if (!device_mode) e.merge_ctx = Context::cpu(0);
    e.opt_index = key.is_string ? next_index++ : key.int_key;
    entries.emplace(key.id(), std::move(e));
  }

  // The device with the fewest merged bytes among those the values live on.
  Context PickMergeDevice(const std::vector<NDArray>& values, uint64_t bytes) {
    std::optional<Context> best;
    for (const NDArray& v : values) {
      const Context c = v.GetContext();
      if (!best || merge_load[c] < merge_load[*best]) best = c;
    }
    merge_load[*best] += bytes;
    return *best;
  }

  NDArray& Slot(std::map<size_t, NDArray>& m, size_t i, const Shape& shape, const Context& ctx,
                DType dtype = DType::kFloat32) {
    auto it = m.find(i);
    if (it == m.end() || it->second.GetContext() != ctx)
      it = m.insert_or_assign(i, NDArray(shape, ctx, true, dtype)).first;
    return it->second;
  }

  // Sums the values of one push; returns the array holding the sum (on the merge device).
  NDArray Reduce(Entry& e, std::vector<NDArray> values, int priority) {
    const Shape shape = e.stored.GetShape();
    if (compress) {
      for (size_t i = 0; i < values.size(); ++i) {
        NDArray src = values[i];
        if (!kv::IsHostAddressable(src.GetContext())) {
          NDArray& stage = Slot(e.host_stage, i, shape, Context::cpu(0));
          NDArray::CopyFromTo(src, stage, priority);
          src = stage;
        }
        NDArray& residual = e.residual[i];
        if (residual.is_none()) {
          residual = NDArray(shape, Context::cpu(0), false);
          residual = 0.0f;
        }
        NDArray& packed = Slot(e.packed, i, Shape(static_cast<int64_t>(kv::TwoBitWords(shape.Size()))), Context::cpu(0),
                               DType::kUint32);
        NDArray& decoded = Slot(e.decoded, i, shape, Context::cpu(0));
        kv::PushTwoBitRoundTrip(src, residual, packed, decoded, threshold, priority);
        values[i] = decoded;
      }
    }
    if (!e.merge_ctx) {
      e.merge_ctx = PickMergeDevice(values, e.stored.Bytes());
      if (e.stored.GetContext() != *e.merge_ctx) e.stored = e.stored.Copy(*e.merge_ctx);
    }
    const Context& mctx = *e.merge_ctx;
    // Bring every value to the merge device unless the host can read it where it is ("local"
    // reads host-addressable values in place).
    for (size_t i = 0; i < values.size(); ++i) {
      const Context c = values[i].GetContext();
      const bool readable = c == mctx || (!device_mode && kv::IsHostAddressable(c));
      if (!readable) {
        NDArray& stage = Slot(e.staging, i, shape, mctx);
        NDArray::CopyFromTo(values[i], stage, priority);
        values[i] = stage;
      }
    }
    if (values.size() == 1 && values[0].GetContext() == mctx) return values[0];
    if (e.merged.is_none() || e.merged.GetContext() != mctx) e.merged = NDArray(shape, mctx, true);
    if (values.size() == 1) {
      NDArray::CopyFromTo(values[0], e.merged, priority);
    } else if (!device_mode) {
      kv::PushHostSum(values, e.merged, priority);
    } else {
      auto& runner = e.add_n[values.size()];
      if (!runner) {
        NodeSignature sig;
        sig.in_shapes.assign(values.size(), shape);
        sig.in_dtypes.assign(values.size(), DType::kFloat32);
        sig.out_shapes = {shape};
        sig.out_dtypes = {DType::kFloat32};
        AttrMap attrs{std::map<std::string, std::string>{{"num_args", std::to_string(values.size())}}};
        runner = std::make_unique<KernelRunner>("add_n", attrs, mctx, sig);
      }
      runner->Run(values, {e.merged}, {WEFT_REQ_WRITE}, {}, false, priority);
    }
    return e.merged;
  }

  void Push(const Key& key, const std::vector<NDArray>& values, int priority) {
    std::lock_guard<std::mutex> lock(mu);
    Entry& e = Find(key, "Push");
    WEFT_CHECK(!values.empty(), "KVStore({}) Push of key {}: no values given", type, key.display());
    for (size_t i = 0; i < values.size(); ++i) CheckArray(e, values[i], "Push", "value", i);
    pushed = true;
    NDArray merged = Reduce(e, values, priority);
    if (optimizer) {
      if (e.stored.GetContext() != merged.GetContext()) e.stored = e.stored.Copy(merged.GetContext());
      optimizer->Update(e.opt_index, e.stored, merged);
    } else if (updater || str_updater) {
      if (e.stored.GetContext() != merged.GetContext()) e.stored = e.stored.Copy(merged.GetContext());
      if (key.is_string) {
        WEFT_CHECK(static_cast<bool>(str_updater),
                   "KVStore({}) Push of key {}: the updater set takes int keys; set a StrUpdater for string keys", type,
                   key.display());
        str_updater(key.str_key, merged, &e.stored);
      } else {
        WEFT_CHECK(static_cast<bool>(updater),
                   "KVStore({}) Push of key {}: the updater set takes string keys; set an Updater for int keys", type,
                   key.display());
        updater(key.int_key, merged, &e.stored);
      }
    } else if (!merged.SharesChunkWith(e.stored)) {
      NDArray::CopyFromTo(merged, e.stored, priority);
    }
  }

  void Pull(const Key& key, const std::vector<NDArray>& outs, int priority) {
    std::lock_guard<std::mutex> lock(mu);
    Entry& e = Find(key, "Pull");
    for (size_t i = 0; i < outs.size(); ++i) CheckArray(e, outs[i], "Pull", "out", i);
    for (const NDArray& out : outs) {
      if (out.SharesChunkWith(e.stored) && out.offset() == e.stored.offset()) continue;
      NDArray::CopyFromTo(e.stored, out, priority);
    }
  }
};

std::unique_ptr<KVStore> KVStore::Create(const std::string& type) {
  const std::string t = Lower(type);
  if (t == "nccl" || t.rfind("dist", 0) == 0) {
    Fail(
        "KVStore::Create(\"{}\"): the {} kvstore comes with a transport plugin ({}), which is not available yet; "
        "use \"local\" or \"device\" for training in one process",
        type, type,
        t == "nccl"         ? "NCCL"
        : t == "dist_async" ? "ZeroMQ parameter server"
                            : "Gloo allreduce");
  }
  WEFT_CHECK(t == "local" || t == "device",
             "KVStore::Create(\"{}\"): unknown type; known types: local, device (in-process), nccl, dist_sync, "
             "dist_device_sync, dist_async (transport plugins)",
             type);
  auto impl = std::make_unique<Impl>();
  impl->type = type;
  impl->device_mode = t == "device";
  return std::unique_ptr<KVStore>(new KVStore(std::move(impl)));
}

KVStore::KVStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KVStore::~KVStore() = default;

const std::string& KVStore::type() const { return impl_->type; }

void KVStore::Init(int key, const NDArray& value) { impl_->Init(IntKey(key), value); }
void KVStore::Init(const std::string& key, const NDArray& value) { impl_->Init(StrKey(key), value); }

namespace {
template <typename K, typename V>
void CheckCounts(const std::string& type, const char* op, const std::vector<K>& keys, const std::vector<V>& values) {
  WEFT_CHECK(keys.size() == values.size(), "KVStore({}) {}: {} keys but {} value lists", type, op, keys.size(),
             values.size());
}
}  // namespace

void KVStore::Init(const std::vector<int>& keys, const std::vector<NDArray>& values) {
  CheckCounts(type(), "Init", keys, values);
  for (size_t i = 0; i < keys.size(); ++i) Init(keys[i], values[i]);
}
void KVStore::Init(const std::vector<std::string>& keys, const std::vector<NDArray>& values) {
  CheckCounts(type(), "Init", keys, values);
  for (size_t i = 0; i < keys.size(); ++i) Init(keys[i], values[i]);
}

void KVStore::Push(int key, const std::vector<NDArray>& values, int priority) {
  impl_->Push(IntKey(key), values, priority);
}
void KVStore::Push(const std::string& key, const std::vector<NDArray>& values, int priority) {
  impl_->Push(StrKey(key), values, priority);
}

namespace {
// Groups the values of repeated keys (MXNet's GroupKVPairs), keeping first-seen key order.
template <typename K>
std::vector<std::pair<K, std::vector<NDArray>>> Group(const std::vector<K>& keys,
                                                      const std::vector<std::vector<NDArray>>& values) {
  std::vector<std::pair<K, std::vector<NDArray>>> out;
  for (size_t i = 0; i < keys.size(); ++i) {
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == keys[i]; });
    if (it == out.end()) it = out.insert(out.end(), {keys[i], {}});
    it->second.insert(it->second.end(), values[i].begin(), values[i].end());
  }
  return out;
}
}  // namespace

void KVStore::Push(const std::vector<int>& keys, const std::vector<std::vector<NDArray>>& values, int priority) {
  CheckCounts(type(), "Push", keys, values);
  for (auto& [k, v] : Group(keys, values)) Push(k, v, priority);
}
void KVStore::Push(const std::vector<std::string>& keys, const std::vector<std::vector<NDArray>>& values,
                   int priority) {
  CheckCounts(type(), "Push", keys, values);
  for (auto& [k, v] : Group(keys, values)) Push(k, v, priority);
}

void KVStore::Pull(int key, const std::vector<NDArray>& outs, int priority) {
  impl_->Pull(IntKey(key), outs, priority);
}
void KVStore::Pull(const std::string& key, const std::vector<NDArray>& outs, int priority) {
  impl_->Pull(StrKey(key), outs, priority);
}
void KVStore::Pull(const std::vector<int>& keys, const std::vector<std::vector<NDArray>>& outs, int priority) {
  CheckCounts(type(), "Pull", keys, outs);
  for (size_t i = 0; i < keys.size(); ++i) Pull(keys[i], outs[i], priority);
}
void KVStore::Pull(const std::vector<std::string>& keys, const std::vector<std::vector<NDArray>>& outs, int priority) {
  CheckCounts(type(), "Pull", keys, outs);
  for (size_t i = 0; i < keys.size(); ++i) Pull(keys[i], outs[i], priority);
}

void KVStore::PushPull(int key, const std::vector<NDArray>& values, const std::vector<NDArray>& outs, int priority) {
  Push(key, values, priority);
  Pull(key, outs.empty() ? values : outs, priority);
}
void KVStore::PushPull(const std::string& key, const std::vector<NDArray>& values, const std::vector<NDArray>& outs,
                       int priority) {
  Push(key, values, priority);
  Pull(key, outs.empty() ? values : outs, priority);
}

void KVStore::SetOptimizer(std::unique_ptr<Optimizer> optimizer) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->optimizer = std::move(optimizer);
  impl_->updater = nullptr;
  impl_->str_updater = nullptr;
}
Optimizer* KVStore::optimizer() const { return impl_->optimizer.get(); }

void KVStore::SetUpdater(Updater updater) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->optimizer.reset();
  impl_->updater = std::move(updater);
}
void KVStore::SetUpdater(StrUpdater updater) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->optimizer.reset();
  impl_->str_updater = std::move(updater);
}

void KVStore::SetGradientCompression(const std::map<std::string, std::string>& params) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  WEFT_CHECK(!impl_->pushed,
             "KVStore({}) SetGradientCompression: call it before the first Push (residuals start at zero then)",
             impl_->type);
  auto it = params.find("type");
  WEFT_CHECK(it != params.end(), "KVStore SetGradientCompression: the parameter 'type' is required (\"2bit\")");
  for (const auto& [k, v] : params)
    WEFT_CHECK(k == "type" || k == "threshold",
               "KVStore SetGradientCompression: unknown parameter '{}' (known: type, threshold)", k);
  if (it->second == "none") {
    impl_->compress = false;
    return;
  }
  WEFT_CHECK(it->second == "2bit", "KVStore SetGradientCompression: unknown type '{}'; the known type is \"2bit\"",
             it->second);
  float t = 0.5f;
  if (auto th = params.find("threshold"); th != params.end()) {
    try {
      size_t used = 0;
      t = std::stof(th->second, &used);
      WEFT_CHECK(used == th->second.size(), "trailing characters");
    } catch (const std::exception&) {
      Fail("KVStore SetGradientCompression: threshold '{}' is not a number", th->second);
    }
  }
  WEFT_CHECK(t > 0, "KVStore SetGradientCompression: threshold must be > 0, got {}", t);
  impl_->compress = true;
  impl_->threshold = t;
}

void KVStore::SaveOptimizerStates(const std::string& file_name, bool dump_optimizer) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  WEFT_CHECK(impl_->optimizer != nullptr, "KVStore({}) SaveOptimizerStates: no optimizer is set (SetOptimizer first)",
             impl_->type);
  std::map<std::string, NDArray> arrays = impl_->optimizer->GetStates();
  nlohmann::json meta = nlohmann::json::parse(impl_->optimizer->Serialize());
  if (!dump_optimizer) {
    meta.erase("type");
    meta.erase("params");
  }
  const std::string text = meta.dump();
  NDArray blob(Shape(static_cast<int64_t>(text.size())), Context::cpu(0), false, DType::kUint8);
  blob.SyncCopyFromCPUBytes(text.data(), text.size());
  arrays["__meta__"] = blob;
  NDArray::Save(file_name, arrays);
}

void KVStore::LoadOptimizerStates(const std::string& file_name) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  WEFT_CHECK(impl_->optimizer != nullptr, "KVStore({}) LoadOptimizerStates: no optimizer is set (SetOptimizer first)",
             impl_->type);
  std::map<std::string, NDArray> arrays = NDArray::LoadToMap(file_name);
  auto it = arrays.find("__meta__");
  WEFT_CHECK(it != arrays.end(),
             "LoadOptimizerStates: {} has no __meta__ record; it was not written by "
             "SaveOptimizerStates",
             file_name);
  std::string text(it->second.Size(), '\0');
  it->second.SyncCopyToCPUBytes(text.data(), text.size());
  arrays.erase(it);
  nlohmann::json meta = nlohmann::json::parse(text, nullptr, false);
  WEFT_CHECK(!meta.is_discarded(), "LoadOptimizerStates: {}: the __meta__ record is not JSON", file_name);
  if (!meta.contains("type")) meta["type"] = impl_->optimizer->GetType();
  impl_->optimizer->Deserialize(meta.dump());
  impl_->optimizer->SetStates(arrays);
}

}  // namespace weft
