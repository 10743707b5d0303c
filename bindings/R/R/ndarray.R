# MXNDArray: weft arrays seen from R. R's arrays are column-major and MXNet's row-major, so an R
# array of dim c(d1, ..., dn) has the bytes of an MXNet array of shape (dn, ..., d1): dims are
# reversed, data is not moved (MXNet R's convention).

#' Create an MXNDArray from an R array
#'
#' Copies an R array, matrix or vector into a new float32 array on a device. \code{dim} of the
#' result is \code{dim} of the source (a vector becomes a 1-d array); MXNet's operators see the
#' reversed shape, as in MXNet's R package.
#'
#' @param src.array An R array, matrix or numeric vector.
#' @param ctx The device (default \code{mx.ctx.default()}).
#' @return An \code{MXNDArray}.
#' @examples
#' x <- mx.nd.array(matrix(1:6, 2, 3))
#' dim(x)
#' as.array(x * 2 + 1)
#' @export
mx.nd.array <- function(src.array, ctx = NULL) {
  ctx <- mx.internal.check.context(ctx, "mx.nd.array")
  if (is.mx.ndarray(src.array)) return(mx.nd.copyto(src.array, ctx))
  if (!is.numeric(src.array) && !is.logical(src.array)) {
    stop("mx.nd.array takes a numeric array, matrix or vector, not ", class(src.array)[1], call. = FALSE)
  }
  d <- dim(src.array)
  if (is.null(d)) d <- length(src.array)
  .mx_nd_array(as.double(src.array), as.integer(d), ctx$device_typeid, ctx$device_id)
}

#' Is it an MXNDArray?
#' @param src.array An object.
#' @return TRUE or FALSE.
#' @examples
#' is.mx.ndarray(mx.nd.array(1:3))
#' is.mx.ndarray(1:3)
#' @export
is.mx.ndarray <- function(src.array) inherits(src.array, "MXNDArray")

mx.internal.check.dims <- function(shape, what) {
  if (!is.numeric(shape) || length(shape) == 0 || anyNA(shape) || any(shape < 0) || any(shape != round(shape))) {
    stop(what, ": the shape must be a vector of non-negative whole numbers", call. = FALSE)
  }
  as.integer(shape)
}

mx.internal.shape.text <- function(shape) paste0("(", paste(rev(shape), collapse = ","), ")")

#' Arrays of zeros or ones
#'
#' @param shape The R dim of the array (a vector of extents).
#' @param ctx The device (default \code{mx.ctx.default()}).
#' @return An \code{MXNDArray}.
#' @examples
#' as.array(mx.nd.zeros(c(2, 3)))
#' as.array(mx.nd.ones(4))
#' @export
mx.nd.zeros <- function(shape, ctx = NULL) mx.internal.nd.full(shape, 0, ctx, "mx.nd.zeros")

#' @rdname mx.nd.zeros
#' @export
mx.nd.ones <- function(shape, ctx = NULL) mx.internal.nd.full(shape, 1, ctx, "mx.nd.ones")

mx.internal.nd.full <- function(shape, value, ctx, what) {
  shape <- mx.internal.check.dims(shape, what)
  ctx <- mx.internal.check.context(ctx, what)
  .mx_nd_invoke("_full", list(), c("shape", "ctx", "value"),
                c(mx.internal.shape.text(shape), format(ctx), mx.internal.format.number(value)), NULL)[[1]]
}

#' Copy an array to a device
#'
#' @param src The \code{MXNDArray} to copy.
#' @param ctx The device of the copy.
#' @return A new \code{MXNDArray} on \code{ctx} with the values of \code{src}.
#' @examples
#' x <- mx.nd.copyto(mx.nd.array(1:3), mx.cpu())
#' @export
mx.nd.copyto <- function(src, ctx) {
  mx.internal.check.nd(src, "mx.nd.copyto(src)")
  ctx <- mx.internal.check.context(ctx, "mx.nd.copyto")
  out <- .mx_nd_empty(dim(src), ctx$device_typeid, ctx$device_id, .mx_nd_dtype(src))
  mx.internal.copy(src, out)
  out
}

# Copies src into dst (any devices; the engine orders it after earlier writes to src).
mx.internal.copy <- function(src, dst) {
  invisible(.mx_nd_invoke("_copyto", list(src), character(), character(), list(dst)))
}

mx.internal.check.nd <- function(x, what) {
  if (!is.mx.ndarray(x)) stop(what, " must be an MXNDArray, not ", class(x)[1], call. = FALSE)
}

#' Convert an MXNDArray to an R array
#'
#' Waits for the operations writing the array, then copies its values into an R numeric array with
#' the same \code{dim}.
#'
#' @param x An \code{MXNDArray}.
#' @param ... Not used.
#' @return A numeric array.
#' @examples
#' as.array(mx.nd.array(matrix(1:4, 2)))
#' @export
as.array.MXNDArray <- function(x, ...) .mx_nd_as_array(x)

#' @rdname as.array.MXNDArray
#' @export
as.matrix.MXNDArray <- function(x, ...) {
  if (length(dim(x)) != 2) stop("as.matrix: the MXNDArray has ", length(dim(x)), " dimensions, not 2", call. = FALSE)
  a <- as.array(x)
  matrix(a, nrow = nrow(a), ncol = ncol(a))
}

#' Dimensions of an MXNDArray
#'
#' The R dim: MXNet's shape reversed.
#' @param x An \code{MXNDArray}.
#' @return An integer vector.
#' @examples
#' dim(mx.nd.zeros(c(2, 3, 4)))
#' length(mx.nd.zeros(c(2, 3, 4)))
#' @export
dim.MXNDArray <- function(x) .mx_nd_dim(x)

#' @rdname dim.MXNDArray
#' @export
length.MXNDArray <- function(x) as.integer(prod(dim(x)))

#' The device of an MXNDArray
#' @param nd An \code{MXNDArray}.
#' @return An \code{MXContext}.
#' @examples
#' ctx(mx.nd.ones(2))
#' @export
ctx <- function(nd) {
  mx.internal.check.nd(nd, "ctx(nd)")
  d <- .mx_nd_context(nd)
  mx.internal.context.of(d[1], d[2])
}

#' @export
print.MXNDArray <- function(x, ...) {
  print(as.array(x), ...)
  invisible(x)
}

# Elements [begin, end) of the last R dimension (MXNet's first axis: the batch), sharing memory.
# begin and end count from 0, as MXNet R's mx.nd.slice did.
mx.internal.nd.slice <- function(x, begin, end) .mx_nd_slice(x, as.integer(begin), as.integer(end))

#' Save and load MXNDArrays
#'
#' MXNet's NDArray file format (what \code{mx.nd.save} in Python and weft write): a list of arrays,
#' named or not.
#'
#' @param ndarray An \code{MXNDArray} or a list of them (names are saved when every one is named).
#' @param filename The file.
#' @return \code{mx.nd.load}: the list of arrays, named when the file has names.
#' @examples
#' f <- tempfile()
#' mx.nd.save(list(a = mx.nd.array(1:3), b = mx.nd.ones(c(2, 2))), f)
#' names(mx.nd.load(f))
#' @export
mx.nd.save <- function(ndarray, filename) {
  if (is.mx.ndarray(ndarray)) ndarray <- list(ndarray)
  if (!is.list(ndarray)) stop("mx.nd.save: ndarray must be an MXNDArray or a list of them", call. = FALSE)
  nms <- names(ndarray)
  named <- !is.null(nms) && all(nzchar(nms))
  if (!is.null(nms) && !named && any(nzchar(nms))) {
    stop("mx.nd.save: name every array of the list or none", call. = FALSE)
  }
  .mx_nd_save(ndarray, path.expand(filename), named)
  invisible(NULL)
}

#' @rdname mx.nd.save
#' @export
mx.nd.load <- function(filename) .mx_nd_load(path.expand(filename))

# ---- arithmetic ---------------------------------------------------------------------------------

# The operators behind R's arithmetic and comparison on arrays: (array op array, array op scalar,
# scalar op array).
.mx.nd.ops <- list(
  "+" = c("elemwise_add", "_plus_scalar", "_plus_scalar", "broadcast_add"),
  "-" = c("elemwise_sub", "_minus_scalar", "_rminus_scalar", "broadcast_sub"),
  "*" = c("elemwise_mul", "_mul_scalar", "_mul_scalar", "broadcast_mul"),
  "/" = c("elemwise_div", "_div_scalar", "_rdiv_scalar", "broadcast_div"),
  "^" = c("_power", "_power_scalar", "_rpower_scalar", "broadcast_power"),
  "%%" = c("_mod", "_mod_scalar", "_rmod_scalar", "broadcast_mod"),
  "==" = c("_equal", "_equal_scalar", "_equal_scalar", "broadcast_equal"),
  "!=" = c("_not_equal", "_not_equal_scalar", "_not_equal_scalar", "broadcast_not_equal"),
  ">" = c("_greater", "_greater_scalar", "_lesser_scalar", "broadcast_greater"),
  ">=" = c("_greater_equal", "_greater_equal_scalar", "_lesser_equal_scalar", "broadcast_greater_equal"),
  "<" = c("_lesser", "_lesser_scalar", "_greater_scalar", "broadcast_lesser"),
  "<=" = c("_lesser_equal", "_lesser_equal_scalar", "_greater_equal_scalar", "broadcast_lesser_equal"))

mx.internal.scalar <- function(x, op) {
  if (!is.numeric(x) && !is.logical(x) || length(x) != 1 || is.na(x)) {
    stop("MXNDArray ", op, ": the other operand must be an MXNDArray or a single number", call. = FALSE)
  }
  mx.internal.format.number(as.double(x))
}

#' Arithmetic and comparison on MXNDArrays
#'
#' \code{+ - * / ^ \%\%} and the comparisons, between two arrays of one \code{dim} (or of dims
#' that broadcast, as MXNet's \code{broadcast_*} operators do on the reversed shapes) or an array
#' and a number. Each is an operator run by weft on the array's device; the result is a new array.
#'
#' @param e1,e2 MXNDArrays or numbers.
#' @return An \code{MXNDArray}.
#' @examples
#' x <- mx.nd.array(c(1, 2, 3))
#' as.array(1 - x + (2 * x) / (x + 0.5))
#' @export
Ops.MXNDArray <- function(e1, e2) {
  op <- .Generic
  if (missing(e2)) {
    if (op == "+") return(e1)
    if (op == "-") return(.mx_nd_invoke("_mul_scalar", list(e1), "scalar", "-1", NULL)[[1]])
    stop("MXNDArray: unary ", op, " is not supported", call. = FALSE)
  }
  names <- .mx.nd.ops[[op]]
  if (is.null(names)) stop("MXNDArray: ", op, " is not supported", call. = FALSE)
  if (is.mx.ndarray(e1) && is.mx.ndarray(e2)) {
    same <- identical(dim(e1), dim(e2))
    return(.mx_nd_invoke(if (same) names[1] else names[4], list(e1, e2), character(), character(), NULL)[[1]])
  }
  if (is.mx.ndarray(e1)) {
    return(.mx_nd_invoke(names[2], list(e1), "scalar", mx.internal.scalar(e2, op), NULL)[[1]])
  }
  .mx_nd_invoke(names[3], list(e2), "scalar", mx.internal.scalar(e1, op), NULL)[[1]]
}

#' Elementwise math on MXNDArrays
#'
#' R's \code{Math} functions that weft has an operator for (\code{abs}, \code{sign}, \code{sqrt},
#' \code{exp}, \code{log}, \code{floor}, \code{ceiling}, \code{round}, \code{trunc}, trigonometric
#' and hyperbolic functions, ...), run on the array's device.
#' @param x An \code{MXNDArray}.
#' @param ... Not used.
#' @return An \code{MXNDArray}.
#' @examples
#' as.array(sqrt(mx.nd.array(c(1, 4, 9))))
#' @export
Math.MXNDArray <- function(x, ...) {
  op <- switch(.Generic, ceiling = "ceil", trunc = "fix", gamma = "gamma", lgamma = "gammaln", .Generic)
  if (.Generic %in% c("cumsum", "cumprod", "cummax", "cummin")) {
    stop("MXNDArray: ", .Generic, " is not supported (convert with as.array first)", call. = FALSE)
  }
  .mx_nd_invoke(op, list(x), character(), character(), NULL)[[1]]
}
