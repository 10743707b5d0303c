# MXExecutor: a symbol bound to arrays on a device. The object is an R environment (class
# "MXExecutor"), so the mx.exec.* functions change it in place, as MXNet R's executor did: every
# copy of the object is the same executor. Its fields:
#   $ref.arg.arrays, $ref.grad.arrays, $ref.aux.arrays, $ref.outputs   the executor's own arrays
#   $arg.arrays, $grad.arrays, $aux.arrays, $outputs                    copies of them
# (named lists; a gradient is NULL where its grad.req is "null").

.mx.grad.req.codes <- c(null = 0L, write = 1L, add = 3L)

mx.internal.grad.req <- function(req, name) {
  if (isTRUE(req)) return("write")
  if (identical(req, FALSE)) return("null")
  if (!is.character(req) || length(req) != 1 || !(req %in% names(.mx.grad.req.codes))) {
    stop("grad.req of '", name, "' must be \"null\", \"write\" or \"add\" (or TRUE/FALSE)", call. = FALSE)
  }
  req
}

#' Bind a symbol to arrays
#'
#' Makes an executor of \code{symbol} on \code{ctx}. Its argument and auxiliary arrays are new
#' arrays on \code{ctx} holding copies of the ones given; its gradient arrays are new zero arrays
#' for the arguments whose \code{grad.req} is \code{"write"} or \code{"add"}.
#' @param symbol An \code{MXSymbol}.
#' @param ctx The device.
#' @param arg.arrays The argument arrays: a list in the order of \code{arguments(symbol)}, or named.
#' @param aux.arrays The auxiliary state arrays, likewise.
#' @param grad.reqs One \code{"null"}, \code{"write"} or \code{"add"} per argument (a list or a
#'   vector, in argument order or named), or one for all.
#' @return An \code{MXExecutor}.
#' @examples
#' a <- mx.symbol.Variable("a")
#' b <- mx.symbol.Variable("b")
#' exec <- mx.symbol.bind(2 * a + b, mx.cpu(), list(a = mx.nd.array(c(1, 2)), b = mx.nd.array(c(2, 3))),
#'                        list(), "null")
#' mx.exec.forward(exec)
#' as.array(exec$ref.outputs[[1]])
#' @export
mx.symbol.bind <- function(symbol, ctx, arg.arrays, aux.arrays = list(), grad.reqs = "null") {
  mx.internal.check.symbol(symbol, "mx.symbol.bind(symbol)")
  ctx <- mx.internal.check.context(ctx, "mx.symbol.bind")
  arg.names <- arguments(symbol)
  aux.names <- .mx_symbol_auxiliary_states(symbol)
  args <- mx.internal.in.order(arg.arrays, arg.names, "arg.arrays")
  aux <- mx.internal.in.order(aux.arrays, aux.names, "aux.arrays")
  if (length(grad.reqs) == 1) grad.reqs <- rep(list(grad.reqs[[1]]), length(arg.names))
  reqs <- mx.internal.in.order(as.list(grad.reqs), arg.names, "grad.reqs")
  reqs <- vapply(seq_along(reqs), function(i) mx.internal.grad.req(reqs[[i]], arg.names[i]), "")
  on.ctx <- function(x) mx.nd.copyto(x, ctx)
  ref.args <- lapply(args, on.ctx)
  ref.aux <- lapply(aux, on.ctx)
  ref.grads <- vector("list", length(arg.names))
  for (i in seq_along(arg.names)) {
    if (reqs[i] != "null") ref.grads[[i]] <- mx.nd.zeros(dim(ref.args[[i]]), ctx)
  }
  names(ref.args) <- arg.names
  names(ref.grads) <- arg.names
  names(ref.aux) <- aux.names
  handle <- .mx_executor_bind(symbol, ctx$device_typeid, ctx$device_id, unname(ref.args), unname(ref.grads),
                              unname(.mx.grad.req.codes[reqs]), unname(ref.aux))
  exec <- new.env(parent = emptyenv())
  exec$handle <- handle
  exec$symbol <- symbol
  exec$ctx <- ctx
  exec$ref.arg.arrays <- ref.args
  exec$ref.grad.arrays <- ref.grads
  exec$ref.aux.arrays <- ref.aux
  outs <- .mx_executor_outputs(handle)
  names(outs) <- outputs(symbol)
  exec$ref.outputs <- outs
  class(exec) <- "MXExecutor"
  exec
}

# `arrays` (a list, named or in order) as a list in the order of `names`.
mx.internal.in.order <- function(arrays, names, what) {
  if (!is.list(arrays)) stop(what, " must be a list", call. = FALSE)
  if (length(arrays) != length(names)) {
    stop(what, ": ", length(arrays), " given for ", length(names), " (", paste(names, collapse = ", "), ")",
         call. = FALSE)
  }
  given <- names(arrays)
  if (is.null(given) || !any(nzchar(given))) return(unname(arrays))
  missing <- setdiff(names, given)
  if (length(missing) > 0) stop(what, ": no entry for ", paste0("'", missing, "'", collapse = ", "), call. = FALSE)
  unname(arrays[names])
}

#' Bind a symbol with arrays of the shapes given
#'
#' Infers the shapes of every argument and auxiliary state from those given, makes zero arrays of
#' them on \code{ctx} and binds. Arguments whose names end in \code{data} or \code{label}, and
#' those in \code{fixed.param}, get no gradient; the others get \code{grad.req}.
#' @param symbol An \code{MXSymbol}.
#' @param ctx The device.
#' @param grad.req \code{"null"}, \code{"write"} or \code{"add"} (or TRUE for \code{"write"}).
#' @param fixed.param Names of arguments that get no gradient.
#' @param ... The R dims of some arguments, as \code{name = dim}.
#' @return An \code{MXExecutor}.
#' @examples
#' net <- mx.symbol.FullyConnected(mx.symbol.Variable("data"), num.hidden = 2, name = "fc")
#' exec <- mx.simple.bind(net, mx.cpu(), data = c(3, 1), grad.req = "write")
#' names(exec$ref.arg.arrays)
#' @export
mx.simple.bind <- function(symbol, ctx, grad.req = "null", fixed.param = NULL, ...) {
  mx.internal.check.symbol(symbol, "mx.simple.bind(symbol)")
  ctx <- mx.internal.check.context(ctx, "mx.simple.bind")
  shapes <- mx.internal.infer.shape(symbol, list(...))
  if (is.null(shapes)) {
    stop("mx.simple.bind: the shapes given do not determine every argument's shape; give more of ",
         paste(arguments(symbol), collapse = ", "), call. = FALSE)
  }
  arg.names <- names(shapes$arg.shapes)
  args <- lapply(shapes$arg.shapes, mx.nd.zeros, ctx = ctx)
  aux <- lapply(shapes$aux.shapes, mx.nd.zeros, ctx = ctx)
  req <- mx.internal.grad.req(grad.req, "mx.simple.bind")
  reqs <- ifelse(endsWith(arg.names, "data") | endsWith(arg.names, "label") | arg.names %in% fixed.param, "null", req)
  mx.symbol.bind(symbol, ctx, args, aux, as.list(reqs))
}

#' Is it an MXExecutor?
#' @param x An object.
#' @return TRUE or FALSE.
#' @export
is.mx.executor <- function(x) inherits(x, "MXExecutor")

mx.internal.check.exec <- function(exec, what) {
  if (!is.mx.executor(exec)) stop(what, ": exec must be an MXExecutor, not ", class(exec)[1], call. = FALSE)
}

#' The fields of an MXExecutor
#'
#' \code{$ref.arg.arrays}, \code{$ref.grad.arrays}, \code{$ref.aux.arrays} and
#' \code{$ref.outputs} are the executor's own arrays (what forward reads and writes);
#' \code{$arg.arrays}, \code{$grad.arrays}, \code{$aux.arrays} and \code{$outputs} are copies of
#' them. Also \code{$symbol}, \code{$ctx}. The fields change only through the \code{mx.exec.*}
#' functions.
#' @param x An \code{MXExecutor}.
#' @param name The field.
#' @param value Not allowed.
#' @return The field.
#' @export
`$.MXExecutor` <- function(x, name) {
  copies <- function(arrays) lapply(arrays, function(a) if (is.null(a)) NULL else mx.nd.copyto(a, x[["ctx"]]))
  switch(name,
    arg.arrays = copies(x[["ref.arg.arrays"]]),
    grad.arrays = copies(x[["ref.grad.arrays"]]),
    aux.arrays = copies(x[["ref.aux.arrays"]]),
    outputs = copies(x[["ref.outputs"]]),
    {
      if (!exists(name, envir = x, inherits = FALSE)) stop("MXExecutor has no field '", name, "'", call. = FALSE)
      get(name, envir = x, inherits = FALSE)
    })
}

#' @rdname cash-.MXExecutor
#' @export
`$<-.MXExecutor` <- function(x, name, value) {
  stop("an MXExecutor's fields change through mx.exec.update.arg.arrays, mx.exec.update.aux.arrays and ",
       "mx.exec.update.grad.arrays", call. = FALSE)
}

#' @export
print.MXExecutor <- function(x, ...) {
  cat("MXExecutor on ", format(x[["ctx"]]), " with arguments ", paste(names(x[["ref.arg.arrays"]]), collapse = ", "),
      "\n", sep = "")
  invisible(x)
}

# Copies `from` (a list) into the executor's arrays `to` (by position or by name): MXNet R's rules.
mx.internal.update.arrays <- function(exec, field, from, match.name, skip.null) {
  what <- paste0("mx.exec.update.", sub("ref.", "", field, fixed = TRUE))
  mx.internal.check.exec(exec, what)
  mx.internal.exec.handle(exec, what)
  to <- exec[[field]]
  if (!is.list(from)) stop(what, ": the arrays must be a list", call. = FALSE)
  if (!match.name) {
    if (length(from) != length(to)) {
      stop(what, ": ", length(from), " arrays given for ", length(to), " (", paste(names(to), collapse = ", "),
           "); or give them by name with match.name = TRUE", call. = FALSE)
    }
    index <- seq_along(from)
  } else {
    if (length(from) == 0) return(invisible(exec))
    nms <- names(from)
    if (is.null(nms) || !all(nzchar(nms))) {
      stop(what, ": match.name = TRUE needs a name on every array", call. = FALSE)
    }
    index <- match(nms, names(to))
    if (anyNA(index)) {
      stop(what, ": the executor has no array ", paste0("'", nms[is.na(index)], "'", collapse = ", "), " (it has ",
           paste(names(to), collapse = ", "), ")", call. = FALSE)
    }
  }
  for (i in seq_along(index)) {
    src <- from[[i]]
    dst <- to[[index[i]]]
    label <- if (is.null(names(to))) index[i] else names(to)[index[i]]
    if (is.null(dst)) {
      if (!is.null(src)) stop(what, ": '", label, "' has no array in the executor (grad.req \"null\"); give NULL", call. = FALSE)
      next
    }
    if (is.null(src)) {
      if (!skip.null) stop(what, ": '", label, "' is NULL; use skip.null = TRUE to leave it unchanged", call. = FALSE)
      next
    }
    mx.internal.check.nd(src, paste0(what, ": '", label, "'"))
    if (identical(src, dst)) next  # already the executor's own array (an in-place update)
    if (!identical(dim(src), dim(dst))) {
      stop(what, ": '", label, "' has dim c(", paste(dim(src), collapse = ", "), ") but the executor's array has dim c(",
           paste(dim(dst), collapse = ", "), ")", call. = FALSE)
    }
    mx.internal.copy(src, dst)
  }
  invisible(exec)
}

mx.internal.exec.handle <- function(exec, what) {
  h <- exec[["handle"]]
  if (.mx_is_null_handle(h)) {
    stop(what, ": the MXExecutor's handle is gone: it was freed, or restored from a saved R session ",
         "(bind the symbol again)", call. = FALSE)
  }
  h
}

#' Update the arrays of an executor
#'
#' Copies arrays into the executor's argument, auxiliary or gradient arrays. This function will
#' MUTATE the state of exec: every reference to the executor sees the new values.
#' @param exec An \code{MXExecutor}.
#' @param arg.arrays A list of MXNDArrays: one per array in order, or named (with
#'   \code{match.name = TRUE}) for some of them.
#' @param match.name Match the arrays by name instead of position.
#' @param skip.null Leave an array unchanged where the list has NULL (else NULL is an error).
#' @return The executor, invisibly.
#' @examples
#' a <- mx.symbol.Variable("a")
#' exec <- mx.simple.bind(a * 2, mx.cpu(), a = c(2))
#' mx.exec.update.arg.arrays(exec, list(a = mx.nd.array(c(1, 2))), match.name = TRUE)
#' mx.exec.forward(exec)
#' as.array(exec$ref.outputs[[1]])
#' @export
mx.exec.update.arg.arrays <- function(exec, arg.arrays, match.name = FALSE, skip.null = FALSE) {
  mx.internal.update.arrays(exec, "ref.arg.arrays", arg.arrays, match.name, skip.null)
}

#' @rdname mx.exec.update.arg.arrays
#' @export
mx.exec.update.aux.arrays <- function(exec, arg.arrays, match.name = FALSE, skip.null = FALSE) {
  mx.internal.update.arrays(exec, "ref.aux.arrays", arg.arrays, match.name, skip.null)
}

#' @rdname mx.exec.update.arg.arrays
#' @export
mx.exec.update.grad.arrays <- function(exec, arg.arrays, match.name = FALSE, skip.null = FALSE) {
  mx.internal.update.arrays(exec, "ref.grad.arrays", arg.arrays, match.name, skip.null)
}

#' Forward and backward passes of an executor
#'
#' \code{mx.exec.forward} computes the outputs (\code{exec$ref.outputs}) from the argument
#' arrays; \code{mx.exec.backward} computes the gradients (\code{exec$ref.grad.arrays}) of the
#' last forward pass, given the gradients of the outputs (none for a loss output such as
#' \code{SoftmaxOutput}). These functions will MUTATE the state of exec.
#' @param exec An \code{MXExecutor}.
#' @param is.train TRUE for a training pass (dropout on, batch statistics, kept for backward).
#' @param ... The outputs' gradients: MXNDArrays, or one list of them.
#' @return The executor, invisibly.
#' @examples
#' a <- mx.symbol.Variable("a")
#' exec <- mx.simple.bind(a * 2, mx.cpu(), a = c(2), grad.req = "write")
#' mx.exec.update.arg.arrays(exec, list(a = mx.nd.array(c(1, 2))), match.name = TRUE)
#' mx.exec.forward(exec, is.train = TRUE)
#' mx.exec.backward(exec, mx.nd.ones(2))
#' as.array(exec$ref.grad.arrays$a)
#' @export
mx.exec.forward <- function(exec, is.train = TRUE) {
  mx.internal.check.exec(exec, "mx.exec.forward")
  .mx_executor_forward(mx.internal.exec.handle(exec, "mx.exec.forward"), isTRUE(is.train))
  invisible(exec)
}

#' @rdname mx.exec.forward
#' @export
mx.exec.backward <- function(exec, ...) {
  mx.internal.check.exec(exec, "mx.exec.backward")
  handle <- mx.internal.exec.handle(exec, "mx.exec.backward")
  grads <- list(...)
  if (length(grads) == 1 && is.list(grads[[1]])) grads <- grads[[1]]
  if (all(vapply(exec[["ref.grad.arrays"]], is.null, TRUE))) {
    stop("mx.exec.backward: the executor has no gradient arrays (every grad.req is \"null\"); bind with ",
         "grad.req = \"write\"", call. = FALSE)
  }
  for (g in grads) mx.internal.check.nd(g, "mx.exec.backward: each output gradient")
  .mx_executor_backward(handle, unname(grads))
  invisible(exec)
}
