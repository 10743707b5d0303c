// oneDNN 2.x inner product for FullyConnected with cached reordered weights (see nn_fc_dnnl.h).
#include "nn_fc_dnnl.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <string>
#include <unordered_map>

#include "nn_common.h"
#include "nn_dnnl.h"

namespace weft::cpu {
namespace {

using dnnl::memory;
using tag = memory::format_tag;

constexpr uint64_t kMaxCachedBytes = uint64_t{64} << 20;

class DnnlFc final : public DnnlFcForward {
 public:
  DnnlFc(int64_t n, int64_t k, int64_t h, bool bias)
      : x_md_({n, k}, memory::data_type::f32, tag::nc),
        w_plain_({h, k}, memory::data_type::f32, tag::oi),
        b_md_(bias ? memory::desc({h}, memory::data_type::f32, tag::x) : memory::desc()),
        y_md_({n, h}, memory::data_type::f32, tag::nc) {
    const memory::desc w_any({h, k}, memory::data_type::f32, tag::any);
    dnnl::inner_product_forward::desc d(dnnl::prop_kind::forward_inference, x_md_, w_any, b_md_, y_md_);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    pd_ = dnnl::inner_product_forward::primitive_desc(d, attr, DnnlEngine());
    const std::string impl = pd_.impl_info_str();
    // gemm- or reference-based kernels gain nothing over OpenBLAS: not worth a second copy.
    if (impl.find("brgemm") == std::string::npos && impl.find("jit") == std::string::npos)
      throw dnnl::error(dnnl_unimplemented, ("no blocked kernel, only " + impl).c_str());
    if (pd_.weights_desc().get_size() > kMaxCachedBytes) throw dnnl::error(dnnl_unimplemented, "weights too large");
    prim_ = dnnl::inner_product_forward(pd_);
    scratch_.reset(Allocate(pd_.scratchpad_desc().get_size()));
    if (scratch_ == nullptr) throw dnnl::error(dnnl_out_of_memory, "no memory for the scratchpad");
    reorder_ = dnnl::reorder(dnnl::reorder::primitive_desc(DnnlEngine(), w_plain_, DnnlEngine(), pd_.weights_desc()));
  }

  // The stream and the arguments' memory objects are made on the first call and then pointed at
  // each call's buffers: making them on every call (a stream, five memory objects and a hash map:
  // mallocs and frees) cost about 2 us a call, 1-2 % of the MNIST MLP's inference batch.
  void Forward(const float* x, const float* w, uint64_t w_stamp, const float* b, float* y) const override {
    std::lock_guard<std::mutex> lock(mu_);
    if (cache_ == nullptr) {  // first call: training-only nodes never hold the copy
      cache_.reset(Allocate(pd_.weights_desc().get_size()));
      if (cache_ == nullptr)
        throw dnnl::error(dnnl_out_of_memory, "FullyConnected: no memory for the reordered weights");
      stamp_ = 0;
    }
    if (args_.empty()) MakeArgs();
    if (w_stamp == 0 || w_stamp != stamp_ || w != source_) {  // new or unknown weights: reorder first
      memory from(w_plain_, DnnlEngine(), const_cast<float*>(w));
      reorder_.execute(stream_, from, args_.at(DNNL_ARG_WEIGHTS));
      stamp_ = w_stamp;
      source_ = w;
    }
    args_.at(DNNL_ARG_SRC).set_data_handle(const_cast<float*>(x));
    args_.at(DNNL_ARG_DST).set_data_handle(y);
    if (b != nullptr) args_.at(DNNL_ARG_BIAS).set_data_handle(const_cast<float*>(b));
    prim_.execute(stream_, args_);
    stream_.wait();
  }

 private:
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  static char* Allocate(uint64_t bytes) {
    return static_cast<char*>(std::aligned_alloc(kDnnlAlign, DnnlRoundUp(std::max<uint64_t>(bytes, 1))));
  }

  // The arguments (under mu_); the source, destination and bias handles are set by each call.
  // Built aside and moved in, so that args_ is either empty or complete.
  void MakeArgs() const {
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC, memory(x_md_, DnnlEngine(), cache_.get())},
        {DNNL_ARG_WEIGHTS, memory(pd_.weights_desc(), DnnlEngine(), cache_.get())},
        {DNNL_ARG_DST, memory(y_md_, DnnlEngine(), cache_.get())},
        {DNNL_ARG_SCRATCHPAD, memory(pd_.scratchpad_desc(), DnnlEngine(), scratch_.get())}};
    if (!b_md_.is_zero()) args[DNNL_ARG_BIAS] = memory(b_md_, DnnlEngine(), cache_.get());
    args_ = std::move(args);
  }

  memory::desc x_md_, w_plain_, b_md_, y_md_;
  dnnl::inner_product_forward::primitive_desc pd_;
  dnnl::inner_product_forward prim_;
  dnnl::reorder reorder_;
  mutable std::mutex mu_;
  mutable dnnl::stream stream_{DnnlEngine()};
  mutable std::unordered_map<int, memory> args_;  // MakeArgs, on the first call
  mutable uint64_t stamp_ = 0;
  mutable const float* source_ = nullptr;
  std::unique_ptr<char, Free> scratch_;        // scratchpad, used under mu_
  mutable std::unique_ptr<char, Free> cache_;  // the reordered weights (of stamp_ / source_), under mu_
};

}  // namespace

std::unique_ptr<DnnlFcForward> DnnlFcForward::Make(int64_t n, int64_t k, int64_t h, bool bias,
                                                   const weft_host_api* host) {
  try {
    return std::make_unique<DnnlFc>(n, k, h, bias);
  } catch (const dnnl::error& e) {
    weft::sdk::Log(host, WEFT_LOG_DEBUG, std::string("oneDNN inner product not used: ") + e.what());
    return nullptr;
  }
}

}  // namespace weft::cpu
