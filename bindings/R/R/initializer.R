# Parameter initializers (MXNet R's): functions of (name, shape, ctx, allow.unknown) returning an
# MXNDArray. Biases and beta start at 0, gamma and moving variances at 1; weights are drawn from
# R's random generator (set.seed or mx.set.seed make them reproducible).

mx.internal.init.fixed <- function(name, shape, ctx) {
  if (endsWith(name, "bias") || endsWith(name, "beta") || endsWith(name, "moving_mean")) {
    return(mx.nd.zeros(shape, ctx))
  }
  if (endsWith(name, "gamma") || endsWith(name, "moving_var") || endsWith(name, "moving_inv_var")) {
    return(mx.nd.ones(shape, ctx))
  }
  NULL
}

mx.internal.make.init <- function(draw) {
  function(name, shape, ctx = NULL, allow.unknown = FALSE) {
    fixed <- mx.internal.init.fixed(name, shape, ctx)
    if (!is.null(fixed)) return(fixed)
    if (endsWith(name, "weight")) return(mx.nd.array(array(draw(shape), shape), ctx))
    if (allow.unknown) return(NULL)
    stop("no initialization rule for parameter '", name, "' (names end in weight, bias, gamma, beta, ",
         "moving_mean or moving_var)", call. = FALSE)
  }
}

#' Parameter initializers
#'
#' \code{mx.init.uniform(scale)} draws weights from U(-scale, scale), \code{mx.init.normal(sd)}
#' from N(0, sd^2); \code{mx.init.Xavier} scales them by the fan of each weight (Glorot and
#' Bengio, 2010: for a weight of R dim \code{c(in, ..., out)}, fan_in is the product of all
#' extents but the last and fan_out the last times the receptive field): uniform
#' U(-s, s) or normal N(0, s^2) with \code{s = sqrt(magnitude / factor)}, \code{factor} being
#' fan_in, fan_out or their mean. Biases, beta and moving means start at 0, gamma and moving
#' variances at 1. Weights come from R's random generator.
#' @param scale The bound of the uniform distribution.
#' @param sd The standard deviation of the normal distribution.
#' @param rnd_type \code{"uniform"} or \code{"gaussian"}.
#' @param factor_type \code{"avg"}, \code{"in"} or \code{"out"}.
#' @param magnitude The scale of the variance.
#' @return An initializer: a function(name, shape, ctx, allow.unknown).
#' @examples
#' init <- mx.init.Xavier(rnd_type = "gaussian", factor_type = "in", magnitude = 2)
#' dim(init("fc1_weight", c(784, 128), mx.cpu()))
#' @export
mx.init.uniform <- function(scale) mx.internal.make.init(function(shape) stats::runif(prod(shape), -scale, scale))

#' @rdname mx.init.uniform
#' @export
mx.init.normal <- function(sd) mx.internal.make.init(function(shape) stats::rnorm(prod(shape), 0, sd))

#' @rdname mx.init.uniform
#' @export
mx.init.Xavier <- function(rnd_type = "uniform", factor_type = "avg", magnitude = 3) {
  rnd_type <- match.arg(rnd_type, c("uniform", "gaussian"))
  factor_type <- match.arg(factor_type, c("avg", "in", "out"))
  mx.internal.make.init(function(shape) {
    n <- length(shape)
    field <- if (n > 2) prod(shape[seq_len(n - 2)]) else 1
    fan.out <- shape[n] * field
    fan.in <- if (n > 1) prod(shape[-n]) else shape[n]
    factor <- switch(factor_type, avg = (fan.in + fan.out) / 2, "in" = fan.in, out = fan.out)
    s <- sqrt(magnitude / factor)
    if (rnd_type == "uniform") stats::runif(prod(shape), -s, s) else stats::rnorm(prod(shape), 0, s)
  })
}

#' Initialize parameters of given shapes
#'
#' @param initializer An initializer (\code{mx.init.uniform}, ...).
#' @param shape.array A named list of R dims.
#' @param ctx The device of the arrays.
#' @param skip.unknown Leave out names the initializer has no rule for (else an error).
#' @return A named list of MXNDArrays.
#' @examples
#' params <- mx.init.create(mx.init.uniform(0.1), list(fc_weight = c(4, 2), fc_bias = 2), mx.cpu())
#' as.array(params$fc_bias)
#' @export
mx.init.create <- function(initializer, shape.array, ctx = NULL, skip.unknown = TRUE) {
  if (length(shape.array) == 0) return(list())
  params <- lapply(names(shape.array), function(n) initializer(n, shape.array[[n]], ctx, allow.unknown = skip.unknown))
  names(params) <- names(shape.array)
  params[!vapply(params, is.null, TRUE)]
}
