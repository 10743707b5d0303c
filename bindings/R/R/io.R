# Data iterators: the library's (mx.io.MNISTIter, generated when the package loads from
# MXListDataIters) and mx.io.arrayiter over R arrays. Both have MXNet R's methods:
# $iter.next(), $reset(), $value() (list(data, label) of MXNDArrays), $num.pad().

mx.internal.make.iter <- function(info, ns) {
  params <- unique(info$arg.names)
  f <- function() NULL
  fmls <- c(rep(list(NULL), length(params)), list(quote(expr = )))
  names(fmls) <- c(mx.internal.r.name(params), "...")
  formals(f) <- as.pairlist(fmls)
  body(f) <- as.call(list(quote(mx.internal.create.iter), info$name, params, quote(environment()), quote(list(...))))
  environment(f) <- ns
  f
}

mx.internal.generate.iters <- function(ns) {
  public <- character()
  for (info in .mx_io_list()) {
    fname <- paste0("mx.io.", info$name)
    if (exists(fname, envir = ns, inherits = FALSE)) next
    assign(fname, mx.internal.make.iter(info, ns), envir = ns)
    public <- c(public, fname)
  }
  public
}

mx.internal.create.iter <- function(name, params, frame, dots) {
  values <- list()
  for (p in params) {
    v <- get(mx.internal.r.name(p), envir = frame)
    if (!is.null(v)) values[[p]] <- v
  }
  dot.names <- names(dots)
  if (length(dots) > 0 && (is.null(dot.names) || !all(nzchar(dot.names)))) {
    stop("mx.io.", name, ": give parameters as name = value", call. = FALSE)
  }
  for (k in dot.names) values[[gsub(".", "_", k, fixed = TRUE)]] <- dots[[k]]
  for (k in c("image", "label", "path_imglist", "path_imgrec", "data_csv", "label_csv")) {
    if (is.character(values[[k]])) values[[k]] <- path.expand(values[[k]])
  }
  keys <- names(values)
  strings <- vapply(keys, function(k) mx.internal.format.value(values[[k]], k), "", USE.NAMES = FALSE)
  handle <- .mx_io_create(name, as.character(keys), strings)
  it <- new.env(parent = emptyenv())
  it$handle <- handle
  it$iter.next <- function() .mx_io_next(handle)
  it$reset <- function() invisible(.mx_io_reset(handle))
  it$value <- function() .mx_io_value(handle)
  it$num.pad <- function() .mx_io_num_pad(handle)
  class(it) <- c("MXNativeDataIter", "MXDataIter")
  it
}

#' Is it a data iterator?
#' @param x An object.
#' @return TRUE or FALSE.
#' @export
is.mx.dataiter <- function(x) inherits(x, "MXDataIter")

#' A data iterator over R arrays
#'
#' Batches of \code{data} (its last dimension indexes the examples) and \code{label}. The last
#' batch is filled up with examples from the start; \code{$num.pad()} says how many.
#' @param data An R array or matrix, examples along the last dimension.
#' @param label A vector (or array) of labels, one per example.
#' @param batch.size The batch size.
#' @param shuffle Visit the examples in a random order (drawn once, from R's generator).
#' @param ctx The device of the batches.
#' @return An \code{MXDataIter}.
#' @examples
#' it <- mx.io.arrayiter(matrix(1:20, 2, 10), 1:10, batch.size = 4)
#' it$iter.next()
#' dim(it$value()$data)
#' @export
mx.io.arrayiter <- function(data, label, batch.size = 128, shuffle = FALSE, ctx = NULL) {
  if (is.null(dim(data))) data <- array(data, c(1, length(data)))
  d <- dim(data)
  n <- d[length(d)]
  label <- as.array(label)
  ld <- dim(label)
  if (ld[length(ld)] != n) stop("mx.io.arrayiter: ", n, " examples in data but ", ld[length(ld)], " labels", call. = FALSE)
  if (n == 0) stop("mx.io.arrayiter: no examples", call. = FALSE)
  batch.size <- as.integer(batch.size)
  order <- if (shuffle) sample.int(n) else seq_len(n)
  it <- new.env(parent = emptyenv())
  cursor <- -batch.size
  take <- function(x, idx) {
    dx <- dim(x)
    m <- matrix(x, ncol = dx[length(dx)])
    array(m[, idx], c(dx[-length(dx)], length(idx)))
  }
  it$iter.next <- function() {
    cursor <<- cursor + batch.size
    cursor < n
  }
  it$reset <- function() {
    cursor <<- -batch.size
    invisible(NULL)
  }
  it$num.pad <- function() max(0L, cursor + batch.size - n)
  it$value <- function() {
    if (cursor < 0 || cursor >= n) stop("mx.io.arrayiter: call iter.next() first", call. = FALSE)
    idx <- order[((cursor + seq_len(batch.size) - 1L) %% n) + 1L]
    list(data = mx.nd.array(take(data, idx), ctx), label = mx.nd.array(take(label, idx), ctx))
  }
  class(it) <- c("MXArrayDataIter", "MXDataIter")
  it
}
