/* weft SDK — operator definitions and kernels.
 *
 * A *definition* says what an op is: its name, attributes, inputs/outputs/aux states, shape and
 * dtype inference, gradient, in-place options and resource needs. Core defines the built-in ops
 * (MXNet's names and semantics); an operator plugin may add new ones.
 * A *kernel* computes an op on one device type for a set of dtypes. Device plugins provide kernels
 * for the ops they support; an operator plugin may add kernels for built-in or new ops.
 * The two register separately: a third party can add a kernel for a built-in op on its own device,
 * or a new op with kernels for several devices.
 *
 * Gradients follow one convention for built-in and plugin ops alike. The definition of op X
 * names its backward op (by MXNet custom "_backward_X") and which forward values backward reads
 * (WEFT_OP_BACKWARD_USES_*). The backward op's inputs are, in order:
 *     the gradients of X's outputs (num_outputs of them),
 *     X's inputs           (num_inputs, only if USES_INPUTS),
 *     X's outputs          (num_outputs, only if USES_OUTPUTS),
 *     X's aux states       (num_aux, only if USES_AUX);
 * its outputs are the gradients of X's inputs, in input order, with X's input shapes and dtypes.
 * A plugin need not define the backward op: core derives that definition from X's. It only
 * registers a kernel under the backward op's name.
 *
 * Attributes travel as strings exactly as in MXNet's symbol JSON ("(3, 3)", "True", "relu", "64").
 * sdk/cpp/attrs.hpp parses them.
 *
 * Tensors: row-major (C order) and contiguous, unless the kernel was registered with
 * WEFT_KERNEL_FLAG_STRIDED, in which case a tensor may carry strides (in elements).
 *
 * Where kernels run (SDK 2.0): a kernel's compute is called on a host thread with the stream of
 * the engine worker that runs the operation (weft_kernel_args.stream):
 *   - on a host-addressable device (the cpu plugin) core passes the NULL stream: compute does the
 *     work in the calling thread and returns when it is done;
 *   - on any other device compute *queues* its work on `stream` (a CUDA launch, a Vulkan dispatch
 *     recorded into the stream's command buffer, a task on a simulated device's queue) and
 *     returns; core records an event after it. Compute must not wait for the device. Errors it
 *     can see at once (unsupported values) are returned; failures while the work runs are the
 *     stream's sticky error (device.h). The inputs' earlier writers have completed, or are
 *     ordered before this stream position by core (stream_wait_event).
 * An operator plugin that registers a kernel for another plugin's device type receives that
 * plugin's weft_device_ptr values and weft_stream; it turns them into native handles
 * (cudaStream_t, VkCommandBuffer, device addresses) with the host's native_handle (host.h).
 */
#ifndef WEFT_SDK_OPERATOR_H_
#define WEFT_SDK_OPERATOR_H_

#include "weft/sdk/device.h"
#include "weft/sdk/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Write request for each output of a kernel (MXNet OpReqType; same values). */
#define WEFT_REQ_NULL 0          /* do not touch the output */
#define WEFT_REQ_WRITE 1         /* overwrite the output */
#define WEFT_REQ_WRITE_INPLACE 2 /* overwrite; the output may alias an input (see inplace pairs) */
#define WEFT_REQ_ADD 3           /* add the result to what the output holds */

/* A tensor on a device. Shape and strides are in elements; offset is in bytes from `data`. */
typedef struct weft_tensor {
  size_t struct_size;
  weft_device_ptr data;   /* the allocation (a weft_device_ptr of the device's plugin) */
  uint64_t offset;        /* bytes from data to element 0 */
  int32_t dtype;          /* WEFT_DTYPE_* */
  int32_t device;         /* device index within the kernel's plugin */
  int32_t ndim;           /* 0 for a scalar */
  const int64_t* shape;   /* ndim extents, borrowed for the duration of the call */
  const int64_t* strides; /* ndim strides in elements, borrowed; NULL = contiguous row-major.
                             Non-NULL only for kernels registered with WEFT_KERNEL_FLAG_STRIDED */
} weft_tensor;

/* Storage types (SDK 2.1; MXNet's NDArrayStorageType codes, as .params records carry them).
 *   WEFT_STYPE_DEFAULT     dense, the layout above.
 *   WEFT_STYPE_ROW_SPARSE  an array of shape (R, d1, ...) whose rows listed in one aux array,
 *                          `indices` (shape (nnz_rows,), sorted ascending, unique, in [0, R)), are
 *                          stored as values of shape (nnz_rows, d1, ...); other rows are zero.
 *   WEFT_STYPE_CSR         a 2-d array (M, N) in compressed sparse row form: values of shape (nnz,)
 *                          and two aux arrays, `indptr` (M + 1 entries from 0, non-decreasing, to
 *                          nnz: row i holds values[indptr[i] .. indptr[i+1])) and `indices` (nnz
 *                          column numbers, ascending within a row, in [0, N)).
 * Aux arrays are 1-d, int64 or int32 (WEFT_DTYPE_INT64 / INT32), contiguous, in that order.
 * A sparse tensor handed to a kernel (weft_kernel_args) keeps the array's full shape in its
 * weft_tensor (ndim, shape) while data + offset point at the values; the number of values (nnz or
 * nnz_rows) is the length of the `indices` aux array. */
#define WEFT_STYPE_DEFAULT 0
#define WEFT_STYPE_ROW_SPARSE 1
#define WEFT_STYPE_CSR 2
/* Bit for storage type s in a storage-type mask (weft_kernel_def.storage_types). */
#define WEFT_STYPE_BIT(s) (((uint32_t)1) << (s))
/* Most aux arrays a storage type has (csr: indptr, indices). */
#define WEFT_MAX_SPARSE_AUX 2

/* A shape during inference. ndim == -1: unknown. An extent of -1: that axis is unknown. */
#define WEFT_MAX_NDIM 8
typedef struct weft_shape {
  int32_t ndim;
  int64_t dims[WEFT_MAX_NDIM];
} weft_shape;

/* ---------------------------------------------------------------------------------------------
 * Definitions
 * ------------------------------------------------------------------------------------------- */

/* Which forward values the backward op reads (lets the executor free the rest early). */
#define WEFT_OP_BACKWARD_USES_INPUTS (1u << 0)
#define WEFT_OP_BACKWARD_USES_OUTPUTS (1u << 1)
#define WEFT_OP_BACKWARD_USES_AUX (1u << 2)

/* Resources a kernel may ask for. */
#define WEFT_OP_RESOURCE_TEMP_SPACE (1u << 0) /* a workspace, sized by the kernel (weft_kernel_state_args) */
#define WEFT_OP_RESOURCE_RANDOM (1u << 1)     /* a per-call seed in weft_kernel_args.seed */

/* Flags of a definition. */
#define WEFT_OP_FLAG_LOSS                                               \
  (1u << 0) /* the op makes its own head gradient (like SoftmaxOutput): \
               backward needs no out-grad from the user */

/* One attribute of an op. */
typedef struct weft_attr_def {
  size_t struct_size;
  const char* name;          /* MXNet attribute name, e.g. "num_hidden" */
  const char* type;          /* informational: "int", "float", "bool", "shape", "string", "enum" */
  const char* default_value; /* string form; NULL = required */
  const char* doc;           /* one line */
} weft_attr_def;

typedef struct weft_infer_args {
  size_t struct_size;
  void* def_data; /* the weft_op_def's def_data */
  const char* op_name;
  int32_t num_attrs;
  const weft_kv* attrs; /* every attribute, defaults filled in */
  int32_t num_inputs;
  weft_shape* input_shapes; /* in/out: the callee may fill unknown input shapes */
  int32_t* input_dtypes;    /* in/out: -1 = unknown */
  int32_t num_outputs;
  weft_shape* output_shapes; /* out */
  int32_t* output_dtypes;    /* out */
  int32_t num_aux;
  weft_shape* aux_shapes; /* in/out */
  int32_t* aux_dtypes;    /* in/out */
} weft_infer_args;

typedef struct weft_op_def {
  size_t struct_size;
  const char* name;        /* globally unique op name; registering an existing name is an error */
  const char* description; /* one paragraph */
  int32_t num_inputs;
  const char* const* input_names; /* e.g. {"data", "weight", "bias"}; variables created for
                                     inputs not given are named "<node>_<input name>" */
  int32_t num_outputs;
  const char* const* output_names; /* e.g. {"output"} */
  int32_t num_aux;
  const char* const* aux_names; /* e.g. {"moving_mean", "moving_var"} */
  int32_t num_attrs;
  const weft_attr_def* attrs;
  uint32_t flags;     /* WEFT_OP_FLAG_* */
  uint32_t resources; /* WEFT_OP_RESOURCE_* */
  /* Shape inference (required) and dtype inference (NULL: every output and unknown input takes
   * the dtype of the first known input). Both may be partial: fill what can be inferred and
   * return NULL. Inconsistent shapes return WEFT_ERR_INVALID_ARGUMENT whose message names the
   * input and both shapes. */
  weft_error* (*infer_shape)(void* plugin_state, weft_infer_args* args);
  weft_error* (*infer_type)(void* plugin_state, weft_infer_args* args);
  /* Name of the backward op (see the convention above); NULL = not differentiable. */
  const char* backward_op;
  uint32_t backward_uses; /* WEFT_OP_BACKWARD_USES_* */
  /* In-place options: `num_inplace` pairs (input index, output index) that may share memory. */
  int32_t num_inplace;
  const int32_t* inplace_pairs;
  void* def_data; /* passed back unchanged in weft_infer_args (no globals needed) */
} weft_op_def;

/* ---------------------------------------------------------------------------------------------
 * Kernels
 * ------------------------------------------------------------------------------------------- */

/* Arguments of create_state: called once per node when a graph is bound (or once per imperative
 * call), so attribute parsing and algorithm choice happen once. */
typedef struct weft_kernel_state_args {
  size_t struct_size;
  void* kernel_data; /* the weft_kernel_def's kernel_data */
  const char* op_name;
  int32_t device; /* device index the kernel will run on */
  int32_t num_attrs;
  const weft_kv* attrs; /* every attribute, defaults filled in */
  int32_t num_inputs;
  const weft_shape* input_shapes;
  const int32_t* input_dtypes;
  int32_t num_outputs;
  const weft_shape* output_shapes;
  const int32_t* output_dtypes;
  int32_t num_aux;
  const weft_shape* aux_shapes;
  const int32_t* aux_dtypes;
  void* state;              /* out: kernel state passed to compute (may stay NULL) */
  uint64_t workspace_bytes; /* out: temp space compute needs (bytes, device memory) */
  /* Appended in 2.1 (test with WEFT_STRUCT_HAS). Only for kernels that claim sparse storage
   * (weft_kernel_def.storage_types): WEFT_STYPE_* of each input and output, the storage types
   * its infer_storage accepted; the shapes above are the arrays' full shapes. NULL for dense calls. */
  const int32_t* input_stypes;
  const int32_t* output_stypes;
} weft_kernel_state_args;

/* Arguments of infer_storage (SDK 2.1): may this kernel compute a call whose inputs have these
 * storage types, and what storage types do its outputs get (MXNet's FInferStorageType with
 * dispatch to FComputeEx)? */
typedef struct weft_storage_args {
  size_t struct_size;
  void* kernel_data; /* the weft_kernel_def's kernel_data */
  const char* op_name;
  int32_t num_attrs;
  const weft_kv* attrs; /* every attribute, defaults filled in */
  int32_t num_inputs;
  const int32_t* input_stypes; /* WEFT_STYPE_* of each input */
  const weft_shape* input_shapes;
  const int32_t* input_dtypes;
  int32_t num_outputs;
  int32_t* output_stypes; /* in: -1 when free, else the storage type the caller's output array has
                             (out=); out: the storage type of every output */
  int32_t claimed;        /* out: 1 when the kernel computes this call; leave 0 to decline (the
                             host then looks further, or falls back to dense as MXNet does) */
} weft_storage_args;

/* Arguments of alloc_sparse_output: storage for a sparse output whose size the kernel learns only
 * while computing (the stored rows of dot(csr.T, dense)). */
typedef struct weft_sparse_alloc_args {
  size_t struct_size;
  int32_t output;                       /* index of the sparse output */
  int64_t num_stored;                   /* row_sparse: stored rows; csr: stored values */
  weft_tensor values;                   /* out: the values (data, offset; full shape as in weft_kernel_args) */
  weft_tensor aux[WEFT_MAX_SPARSE_AUX]; /* out: the aux arrays (row_sparse: indices of num_stored
                                           entries; csr: indptr of M + 1, indices of num_stored),
                                           int64, contiguous, contents undefined */
} weft_sparse_alloc_args;

typedef struct weft_kernel_args {
  size_t struct_size;
  void* kernel_data; /* the weft_kernel_def's kernel_data */
  void* state;       /* from create_state */
  int32_t device;
  int32_t num_inputs;
  const weft_tensor* inputs;
  int32_t num_outputs;
  const weft_tensor* outputs;
  const int32_t* req; /* one WEFT_REQ_* per output */
  int32_t num_aux;
  const weft_tensor* aux; /* aux states; forward kernels may update them (BatchNorm) */
  weft_tensor workspace;  /* workspace_bytes of device memory (data 0 when none asked) */
  weft_stream stream;     /* NULL = run synchronously in the calling thread; otherwise queue the
                             work on it and return (see the top of this file) */
  int32_t is_train;       /* 1 in training mode (Dropout, BatchNorm) */
  uint64_t seed;          /* per-call seed when WEFT_OP_RESOURCE_RANDOM was asked */
  /* Appended to 2.0 (test with WEFT_STRUCT_HAS; older hosts pass a shorter struct): num_inputs
   * stamps of the inputs' contents, or NULL. The host draws a stamp from one process-wide counter
   * when a tensor's storage is created and again each time a write to it completes, so a nonzero
   * stamp seen again (with the same data pointer and offset) means the bytes are unchanged since
   * then. A kernel may key a cache of a transformed input on it (the cpu plugin keeps
   * FullyConnected weights reordered for oneDNN while they stay constant, as in inference).
   * 0 = unknown: never cache. */
  const uint64_t* input_stamps;
  /* Appended in 2.1 (test with WEFT_STRUCT_HAS). Set only for kernels that claim sparse storage
   * (weft_kernel_def.storage_types); a kernel of a 2.0 plugin never gets a sparse array.
   * input_stypes / output_stypes: WEFT_STYPE_* per slot (NULL: every slot dense). input_aux[i]:
   * the aux arrays of input i (NumAux of its storage type, in the order of WEFT_STYPE_*), NULL for
   * a dense input; inputs[i] then points at the values and keeps the full shape. A sparse output
   * is empty until compute calls alloc_sparse_output(sparse_ctx, &a), which returns in `a` the
   * output's new storage (replacing what it held) for compute to fill before it returns (or, on
   * a stream, before the queued work completes); call it only while compute runs (sparse_ctx
   * lives for the call). Sparse outputs take WEFT_REQ_WRITE only. */
  const int32_t* input_stypes;
  const int32_t* output_stypes;
  const weft_tensor* const* input_aux;
  void* sparse_ctx;
  weft_error* (*alloc_sparse_output)(void* sparse_ctx, weft_sparse_alloc_args* args);
} weft_kernel_args;

/* Kernel flags (weft_kernel_def.flags). */
#define WEFT_KERNEL_FLAG_STRIDED (1u << 0) /* accepts tensors with strides (views) */

typedef struct weft_kernel_def {
  size_t struct_size;
  const char* op_name;     /* op it computes, e.g. "FullyConnected" or "_backward_FullyConnected" */
  const char* device_type; /* the device plugin's device_type it runs on, e.g. "cpu" */
  uint64_t dtypes;         /* WEFT_DTYPE_BIT mask of accepted dtypes (of the first input) */
  uint32_t flags;          /* WEFT_KERNEL_FLAG_* */
  void* kernel_data;       /* passed back unchanged in weft_kernel_state_args / weft_kernel_args, so
                              one C function can serve many kernels without globals */
  /* Optional (NULL = stateless, no workspace). Returns WEFT_ERR_UNSUPPORTED for attribute values
   * or shapes the kernel cannot handle; the message says which. */
  weft_error* (*create_state)(void* plugin_state, weft_kernel_state_args* args);
  void (*destroy_state)(void* plugin_state, void* state);
  /* Runs the kernel. Must honour req[i] for every output. */
  weft_error* (*compute)(void* plugin_state, const weft_kernel_args* args);
  /* Appended to 2.0 (test with WEFT_STRUCT_HAS; a plugin built against an older SDK passes a
   * shorter struct, which the host reads as NULL here). Where the kernel's code lives, for
   * listings (weft-info --json, the generated OPS.md); never used to run it. Paths as the plugin's
   * compiler saw them (__FILE__: absolute, or relative to its build directory); readers make them
   * relative to the source tree. NULL = unknown. */
  const char* source_file;       /* the file that registered the kernel */
  const char* const* math_files; /* NULL-terminated list of further files holding its math (functor
                                     headers, GPU shaders), or NULL */
  /* Appended in 2.1 (test with WEFT_STRUCT_HAS). WEFT_STYPE_BIT mask of the storage types the
   * kernel takes in its inputs and outputs. 0 (every kernel of a 2.0 plugin) or the default bit
   * alone: a dense kernel. A mask with a sparse bit makes a sparse kernel: the host offers it only
   * calls with a sparse input or output, asks infer_storage (required then) whether it claims
   * them, and passes storage types and aux arrays in weft_kernel_args. An op may have a dense and
   * a sparse kernel on one device; a call with sparse arrays that no kernel claims runs on dense
   * copies (MXNet's storage fallback) or is refused with the op's name, never handed to a dense
   * kernel as is. */
  uint32_t storage_types;
  weft_error* (*infer_storage)(void* plugin_state, weft_storage_args* args);
} weft_kernel_def;

typedef struct weft_operator_api {
  size_t struct_size;
  int32_t num_op_defs;
  const weft_op_def* const* op_defs; /* plugin-owned, valid until shutdown */
  int32_t num_kernels;
  const weft_kernel_def* const* kernels; /* plugin-owned, valid until shutdown */
} weft_operator_api;

#ifdef __cplusplus
}
#endif

#endif /* WEFT_SDK_OPERATOR_H_ */
