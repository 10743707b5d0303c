// OptimizerFromPickle: see kvstore_optimizer.h.
#include "kvstore_optimizer.h"

#include <nlohmann/json.hpp>

#include "frontend_callback.h"
#include "weft/base.h"
#include "weft/lr_scheduler.h"
#include "weft/operator.h"

namespace weft::mx {
namespace {

// Describes the unpickled optimizer as JSON: its type, the settings weft's optimizers have, and
// its learning-rate schedule.
constexpr const char* kDescribe = R"(import json, pickle
o = pickle.loads(_weft_input.encode('latin-1'))
p = {'lr': o.lr, 'wd': o.wd, 'rescale_grad': o.rescale_grad,
     'clip_gradient': -1.0 if o.clip_gradient is None else o.clip_gradient}
for k in ('momentum', 'beta1', 'beta2', 'epsilon', 'gamma1', 'gamma2', 'centered'):
    if hasattr(o, k):
        p[k] = getattr(o, k)
s = o.lr_scheduler
sched = None
if s is not None:
    sched = {'type': type(s).__name__, 'base_lr': s.base_lr}
    for k in ('step', 'factor', 'stop_factor_lr', 'warmup_steps'):
        if hasattr(s, k):
            sched[k] = getattr(s, k)
_weft_result = json.dumps({'type': type(o).__name__, 'params': p, 'scheduler': sched,
                           'multi_precision': bool(getattr(o, 'multi_precision', False))}))";

std::unique_ptr<LRScheduler> Scheduler(const nlohmann::json& s) {
  const std::string type = s.at("type");
  if (s.value("warmup_steps", 0) != 0) Fail("{} with warmup_steps: weft's schedulers have no warm-up", type);
  if (type == "FactorScheduler") {
    return std::make_unique<FactorScheduler>(s.at("step").get<int>(), s.value("factor", 1.0f),
                                             s.value("stop_factor_lr", 1e-8f));
  }
  if (type == "MultiFactorScheduler") {
    return std::make_unique<MultiFactorScheduler>(s.at("step").get<std::vector<int>>(), s.value("factor", 1.0f));
  }
  Fail("learning-rate schedule {}: weft's distributed stores take FactorScheduler or MultiFactorScheduler", type);
}

// Whether the optimizer has parameter `name` (GetParam documents weft::Error for unknown names).
bool Knows(const Optimizer& opt, const std::string& name) {
  try {
    opt.GetParam(name);
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace

std::unique_ptr<Optimizer> OptimizerFromPickle(const std::string& pickled) {
  const nlohmann::json d =
      nlohmann::json::parse(EvalPython("reading the optimizer sent to the KVStore", kDescribe, pickled));
  std::string type = d.at("type");
  for (char& c : type) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (type != "sgd" && type != "nag" && type != "adam" && type != "rmsprop") {
    Fail(
        "optimizer {} on a distributed KVStore: weft's stores run sgd, nag, adam or rmsprop (use one of those, or "
        "a local store)",
        d.at("type").get<std::string>());
  }
  if (d.value("multi_precision", false)) Fail("{} with multi_precision: weft's stores update float32 weights", type);
  std::unique_ptr<Optimizer> opt = OptimizerRegistry::Create(type);
  for (const auto& [k, v] : d.at("params").items()) {
    if (!Knows(*opt, k)) continue;  // a setting of MXNet's class that this type has no use for here
    opt->SetParamString(k, v.is_boolean() ? (v.get<bool>() ? "true" : "false") : FormatFloat(v.get<double>()));
  }
  if (!d.at("scheduler").is_null()) opt->SetLRScheduler(Scheduler(d.at("scheduler")));
  return opt;
}

}  // namespace weft::mx
