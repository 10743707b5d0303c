// The tape's nodes, the recorder Invoke calls, variables and the public switches.
#include "autograd/tape.h"

#include <algorithm>
#include <atomic>

#include "base/release_chain.h"
#include "operator/autograd_hook.h"
#include "operator/infer.h"
#include "weft/autograd.h"

namespace weft::autograd_detail {
namespace {

std::atomic<uint64_t> g_variable_count{0}, g_node_count{0};

// MXNet's message, then which op and output.
void CheckOutputs(const OpDef& def, const std::vector<NDArray>& outputs) {
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (!InGraph(outputs[k])) continue;
    Fail(
        "{}: output {} ({}) is part of a recorded graph ({}). Assigning to NDArrays that are already in a "
        "computational graph will cause undefined behavior when evaluating gradients. Please call backward first "
        "to clear the graph or do this out side of a record section. Also note that you cannot use inplace "
        "operations like +=, *=, relu(x, out=x), y[idx]=x, etc inside a record section.",
        def.name, k, DescribeArray(outputs[k]), outputs[k].autograd_node()->Describe());
  }
}

// An invoked op that writes into one of its inputs (x[idx] = y, x += y, relu(x, out=x)) would
// leave the tape two values under one array: MXNet refuses every such call it records (that is,
// when some input is part of a graph), whether or not the gradient needs the input's value.
void CheckNotInPlace(const imperative_detail::InvokedOp& op, const std::vector<NDArray>& inputs) {
  if (std::none_of(inputs.begin(), inputs.end(), [](const NDArray& a) { return InGraph(a); })) return;
  for (size_t i = 0; i < inputs.size(); ++i)
    for (const NDArray& o : op.outputs)
      if (o.SharesChunkWith(inputs[i]))
        Fail(
            "{}: the call writes an output into input {} ({}). NotImplementedError: Inplace operations (+=, -=, "
            "x[:]=, etc) are not supported when recording with autograd; write the result into a new array",
            op.def.name, i, DescribeArray(inputs[i]));
}

void RecordInvoked(const imperative_detail::InvokedOp& op) {
  std::vector<NDArray> inputs = op.inputs;
  inputs.insert(inputs.end(), op.aux.begin(), op.aux.end());
  CheckNotInPlace(op, inputs);
  const size_t num_args = op.inputs.size();
  std::vector<bool> keep_in(inputs.size(), false), keep_out(op.outputs.size(), false);
  if (op.def.grad == GradKind::kOp) {
    const uint32_t uses = BackwardUses(op.def, op.attrs);
    for (size_t i = 0; i < inputs.size(); ++i)
      keep_in[i] = (i < num_args && (uses & kUsesInputs)) || (i >= num_args && (uses & kUsesAux));
    if (uses & kUsesOutputs) keep_out.assign(op.outputs.size(), true);
  }
  RecordNode(NodeKind::kOp, &op.def, op.attrs, inputs, static_cast<uint32_t>(num_args), op.outputs, op.is_train,
             keep_in, keep_out);
}

const imperative_detail::Recorder kRecorder{&CheckOutputs, &RecordInvoked};

}  // namespace

Node::~Node() { detail::ReleaseInputChain(inputs); }

std::string Node::Describe() const {
  switch (kind) {
    case NodeKind::kVariable:
      return "variable " + name;
    case NodeKind::kOp:
      return name + " (" + def->name + ")";
    case NodeKind::kBackward:
      return name + " (" + backward->op + ", the gradient of " + def->name + ")";
    case NodeKind::kGraph:
      return name + " (" + graph->Describe() + ")";
  }
  return name;
}

void Node::Clear() {
  if (kind == NodeKind::kVariable) return;  // leaves stay usable (MXNet keeps marked variables)
  saved_inputs.clear();
  saved_outputs.clear();
  inputs.clear();
  if (graph) graph->Release();
  cleared = true;
}

std::string NextVariableName() { return "var" + std::to_string(g_variable_count.fetch_add(1)); }
std::string NextNodeName() { return "node_" + std::to_string(g_node_count.fetch_add(1)); }

std::string DescribeArray(const NDArray& a) {
  if (a.is_none()) return "a none array";
  return fmt::format("an array of shape {} {} on {}", a.GetShape(), DTypeName(a.GetDType()), a.GetContext());
}

NDArray KeptInput(const Node& n, size_t i) {
  NDArray a = n.saved_inputs[i].array;
  if (i < n.inputs.size() && n.inputs[i].node) a.SetAutogradEntry(n.inputs[i].node, n.inputs[i].index);
  return a;
}

NDArray KeptOutput(const NodePtr& self, size_t k) {
  NDArray a = self->saved_outputs[k].array;
  a.SetAutogradEntry(self, static_cast<uint32_t>(k));
  return a;
}

void EnsureRecorder() {
  static const bool installed = [] {
    imperative_detail::SetRecorder(&kRecorder);
    return true;
  }();
  (void)installed;
}

NodePtr RecordNode(NodeKind kind, const OpDef* def, const AttrMap& attrs, const std::vector<NDArray>& inputs,
                   uint32_t num_args, std::vector<NDArray>& outputs, bool is_train,
                   const std::vector<bool>& keep_inputs, const std::vector<bool>& keep_outputs) {
  if (std::none_of(inputs.begin(), inputs.end(), [](const NDArray& a) { return InGraph(a); })) return nullptr;
  auto n = std::make_shared<Node>();
  n->kind = kind;
  n->name = NextNodeName();
  n->def = def;
  n->attrs = attrs;
  n->is_train = is_train;
  n->num_args = num_args;
  n->ctx = outputs.empty() ? inputs[0].GetContext() : outputs[0].GetContext();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const NDArray& a = inputs[i];
    n->inputs.push_back(InGraph(a) ? Input{a.autograd_node(), a.autograd_index()} : Input{});
    n->in_shapes.push_back(a.GetShape());
    n->in_dtypes.push_back(a.GetDType());
    const bool keep = i < keep_inputs.size() && keep_inputs[i];
    // A kept input the call wrote its output into no longer holds the value backward needs.
    for (const NDArray& o : outputs)
      WEFT_CHECK(!keep || !o.SharesChunkWith(a),
                 "{}: the call writes an output into input {} ({}), whose value its gradient needs; while recording, "
                 "write the result into a new array",
                 def != nullptr ? def->name : std::string("recorded op"), i, DescribeArray(a));
    n->saved_inputs.push_back(keep ? Saved::Of(a) : Saved{});
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    n->out_shapes.push_back(outputs[k].GetShape());
    n->out_dtypes.push_back(outputs[k].GetDType());
    const bool keep = k < keep_outputs.size() && keep_outputs[k];
    n->saved_outputs.push_back(keep ? Saved::Of(outputs[k]) : Saved{});
  }
  for (size_t k = 0; k < outputs.size(); ++k) outputs[k].SetAutogradEntry(n, static_cast<uint32_t>(k));
  return n;
}

}  // namespace weft::autograd_detail

namespace weft::autograd {

using autograd_detail::EnsureRecorder;
using autograd_detail::Node;
using autograd_detail::NodeKind;

bool IsRecording() noexcept { return imperative_detail::IsRecording(); }
bool IsTraining() noexcept { return imperative_detail::IsTraining(); }

bool SetIsRecording(bool is_recording) noexcept {
  EnsureRecorder();
  return imperative_detail::SetIsRecording(is_recording);
}

bool SetIsTraining(bool is_training) noexcept { return imperative_detail::SetIsTraining(is_training); }

RecordingStateScope::RecordingStateScope(std::optional<bool> is_record, std::optional<bool> train_mode) noexcept
    : set_record_(is_record), set_train_(train_mode) {
  if (set_record_) prev_record_ = SetIsRecording(*set_record_);
  if (set_train_) prev_train_ = SetIsTraining(*set_train_);
}

RecordingStateScope::~RecordingStateScope() {
  if (prev_record_ && *prev_record_ != *set_record_) SetIsRecording(*prev_record_);
  if (prev_train_ && *prev_train_ != *set_train_) SetIsTraining(*prev_train_);
}

void MarkVariables(const std::vector<NDArray*>& variables, const std::vector<OpReqType>& grad_reqs,
                   const std::vector<NDArray>& gradients) {
  EnsureRecorder();
  const size_t n = variables.size();
  WEFT_CHECK(gradients.size() == n, "MarkVariables: {} variables but {} gradient buffers; give one buffer each", n,
             gradients.size());
  WEFT_CHECK(grad_reqs.size() == n || grad_reqs.size() == 1,
             "MarkVariables: {} grad_reqs for {} variables; give one per variable or one for all", grad_reqs.size(), n);
  std::vector<OpReqType> reqs(n);
  for (size_t i = 0; i < n; ++i) {
    const NDArray* v = variables[i];
    WEFT_CHECK(v != nullptr && !v->is_none(), "MarkVariables: variable {} is {}", i,
               v == nullptr ? "a null pointer" : "a none array");
    OpReqType r = grad_reqs.size() == 1 ? grad_reqs[0] : grad_reqs[i];
    WEFT_CHECK(r == kNullOp || r == kWriteTo || r == kWriteInplace || r == kAddTo,
               "MarkVariables: grad_req {} of variable {} is not one of null (0), write (1), add (3)",
               static_cast<int>(r), i);
    reqs[i] = r == kWriteInplace ? kWriteTo : r;
    const NDArray& g = gradients[i];
    if (g.is_none()) {
      WEFT_CHECK(reqs[i] == kNullOp, "MarkVariables: variable {} ({}) has grad_req {} but no gradient buffer", i,
                 autograd_detail::DescribeArray(*v), OpReqTypeName(reqs[i]));
      continue;
    }
    WEFT_CHECK(g.GetShape() == v->GetShape() && g.GetDType() == v->GetDType() && g.GetContext() == v->GetContext(),
               "MarkVariables: the gradient buffer of variable {} is {}, the variable is {}; give a buffer of the "
               "variable's shape, dtype and device",
               i, autograd_detail::DescribeArray(g), autograd_detail::DescribeArray(*v));
    for (size_t j = 0; j < n; ++j)
      WEFT_CHECK(!g.SharesChunkWith(*variables[j]),
                 "MarkVariables: the gradient buffer of variable {} shares memory with variable {}; give a separate "
                 "array",
                 i, j);
    for (size_t j = 0; j < i; ++j)
      WEFT_CHECK(gradients[j].is_none() || !g.SharesChunkWith(gradients[j]),
                 "MarkVariables: variables {} and {} have gradient buffers that share memory; give each its own", j, i);
  }
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < i; ++j)
      WEFT_CHECK(variables[i] != variables[j] && !(variables[i]->SharesChunkWith(*variables[j]) &&
                                                   variables[i]->offset() == variables[j]->offset() &&
                                                   variables[i]->GetShape() == variables[j]->GetShape()),
                 "MarkVariables: variable {} is variable {} again; mark each array once", i, j);
  for (size_t i = 0; i < n; ++i) {
    NDArray* v = variables[i];
    auto node = std::make_shared<Node>();
    node->kind = NodeKind::kVariable;
    node->name = autograd_detail::NextVariableName();
    node->ctx = v->GetContext();
    node->value = v->Detach();
    node->grad = gradients[i].is_none() ? NDArray() : gradients[i].Detach();
    node->grad_req = reqs[i];
    node->out_shapes = {v->GetShape()};
    node->out_dtypes = {v->GetDType()};
    v->SetAutogradEntry(std::move(node), 0);
  }
}

void AttachGrad(NDArray* variable, OpReqType grad_req) {
  WEFT_CHECK(variable != nullptr && !variable->is_none(), "AttachGrad: the variable is {}",
             variable == nullptr ? "a null pointer" : "a none array");
  NDArray grad(variable->GetShape(), variable->GetContext(), false, variable->GetDType());
  grad = 0.0f;
  MarkVariables({variable}, {grad_req}, {grad});
}

void RecordView(const NDArray& source, NDArray* view, const std::string& op,
                const std::map<std::string, std::string>& params) {
  WEFT_CHECK(view != nullptr && !view->is_none() && !source.is_none(), "RecordView: the source or the view is none");
  if (!IsRecording() || !autograd_detail::InGraph(source)) return;
  const OpDef& def = OpRegistry::Get().Lookup(op);
  const AttrMap attrs = def.Normalize(AttrMap(params));
  WEFT_CHECK(def.grad == GradKind::kOp && BackwardUses(def, attrs) == 0,
             "RecordView: {} cannot describe a view: its gradient reads values (use an op whose backward reads only "
             "the head gradient: Reshape, slice_axis, slice, Flatten, expand_dims)",
             op);
  std::vector<ShapeSlot> in{source.GetShape()}, out(OpOutputNames(def, attrs).size()), aux;
  std::vector<int> in_t{static_cast<int>(source.GetDType())}, out_t(out.size(), -1), aux_t;
  InferShapes(def, attrs, in, out, aux);
  InferTypes(def, attrs, in_t, out_t, aux_t);
  WEFT_CHECK(out.size() == 1 && out[0] && *out[0] == view->GetShape() && out_t[0] == static_cast<int>(view->GetDType()),
             "RecordView: {} of {} makes {}, but the view is {}", op, autograd_detail::DescribeArray(source),
             out.empty() || !out[0] ? std::string("an unknown shape") : out[0]->ToString(),
             autograd_detail::DescribeArray(*view));
  std::vector<NDArray> outputs{*view};
  autograd_detail::RecordNode(NodeKind::kOp, &def, attrs, {source}, 1, outputs, IsTraining(), {}, {});
  *view = outputs[0];
}

namespace {
Node* VariableNode(const NDArray& a) {
  Node* n = a.autograd_node().get();
  return n != nullptr && n->is_variable() ? n : nullptr;
}
}  // namespace

NDArray GetGrad(const NDArray& array) {
  Node* n = VariableNode(array);
  return n != nullptr ? n->grad : NDArray();
}

bool GetGradState(const NDArray& array) {
  Node* n = VariableNode(array);
  return n != nullptr && n->fresh_grad;
}

void SetGradState(const NDArray& array, bool fresh) {
  if (Node* n = VariableNode(array)) n->fresh_grad = fresh;
}

}  // namespace weft::autograd
