# Devices: MXNet's contexts. mx.gpu(i) is what MXNet's C API calls gpu i: device i of the GPU-class
# plugin weft found (CUDA, HIP or Vulkan; WEFT_MXNET_GPU chooses), an error when there is none.

mx.internal.context <- function(device, typeid, dev.id) {
  if (!is.numeric(dev.id) || length(dev.id) != 1 || is.na(dev.id) || dev.id < 0 || dev.id != round(dev.id)) {
    stop("dev.id must be a non-negative whole number", call. = FALSE)
  }
  structure(list(device = device, device_id = as.integer(dev.id), device_typeid = typeid), class = "MXContext")
}

#' Devices: the CPU and GPUs
#'
#' \code{mx.cpu(i)} is weft's cpu device \code{i}; \code{mx.gpu(i)} is GPU \code{i} as MXNet's C
#' API numbers them on weft: device \code{i} of the GPU-class plugin found (CUDA, HIP or Vulkan;
#' the environment variable \code{WEFT_MXNET_GPU} names one). Using a GPU context when there is no
#' GPU raises an error saying so.
#'
#' @param dev.id The device number, from 0.
#' @return An \code{MXContext}.
#' @examples
#' mx.cpu()
#' mx.gpu(1)
#' @export
mx.cpu <- function(dev.id = 0) mx.internal.context("cpu", 1L, dev.id)

#' @rdname mx.cpu
#' @export
mx.gpu <- function(dev.id = 0) mx.internal.context("gpu", 2L, dev.id)

#' @rdname mx.cpu
#' @param x An object.
#' @export
is.mx.context <- function(x) inherits(x, "MXContext")

#' The default device
#'
#' The device arrays and executors use when none is given: \code{mx.cpu()} until changed.
#'
#' @param new A context to make the default, or NULL to keep it.
#' @return The default context (after the change).
#' @examples
#' mx.ctx.default()
#' mx.ctx.default(mx.cpu(0))
#' @export
mx.ctx.default <- function(new = NULL) {
  if (!is.null(new)) {
    if (!is.mx.context(new)) stop("mx.ctx.default: new must be mx.cpu() or mx.gpu(i)", call. = FALSE)
    .MXNetEnv$ctx <- new
  }
  .MXNetEnv$ctx
}

#' @export
print.MXContext <- function(x, ...) {
  cat(format(x), "\n", sep = "")
  invisible(x)
}

#' @export
format.MXContext <- function(x, ...) paste0(x$device, "(", x$device_id, ")")

#' The number of GPUs
#'
#' How many devices \code{mx.gpu(i)} can address (0 without a GPU-class plugin with a device).
#' @return An integer.
#' @examples
#' mx.gpu.count()
#' @export
mx.gpu.count <- function() .mx_gpu_count()

# The context of a device of MXNet's numbering (1 cpu, 2 gpu; pinned and shared memory are cpu).
mx.internal.context.of <- function(dev.type, dev.id) {
  if (dev.type == 2L) mx.gpu(dev.id) else mx.cpu(dev.id)
}

mx.internal.check.context <- function(ctx, what) {
  if (is.null(ctx)) return(mx.ctx.default())
  if (!is.mx.context(ctx)) stop(what, ": ctx must be mx.cpu() or mx.gpu(i)", call. = FALSE)
  ctx
}
