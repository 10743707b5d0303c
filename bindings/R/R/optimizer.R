# Optimizers (MXNet R's interface): list(create.state(index, weight), update(index, weight, grad,
# state)) where update returns list(weight, state). The updates run as weft's fused update
# operators (sgd_mom_update, adam_update, ...), which change the weight and the state arrays in
# place on the weight's device.

# The learning rate of the next update of `index`: counts updates per index, as MXNet's
# optimizers do, and lets the scheduler see the largest count.
mx.internal.opt.lr <- function(env, index, lr_scheduler) {
  key <- as.character(index)
  env$counts[[key]] <- (if (is.null(env$counts[[key]])) 0 else env$counts[[key]]) + 1
  env$num_update <- max(env$num_update, env$counts[[key]])
  if (!is.null(lr_scheduler)) lr_scheduler(env)
  env$lr
}

mx.internal.opt.env <- function(learning.rate) {
  env <- new.env(parent = emptyenv())
  env$lr <- learning.rate
  env$base_lr <- learning.rate
  env$num_update <- 0
  env$counts <- list()
  env
}

mx.internal.opt.attrs <- function(lr, wd, rescale.grad, clip_gradient) {
  list(lr = lr, wd = wd, rescale_grad = rescale.grad, clip_gradient = if (is.null(clip_gradient)) -1 else clip_gradient)
}

mx.internal.opt.update <- function(op, inputs, attrs, weight) {
  do.call(mx.nd.invoke, c(list(op, inputs), attrs, list(out = weight)))
  invisible(weight)
}

#' Optimizers
#'
#' \code{mx.opt.sgd}: stochastic gradient descent with momentum (MXNet's SGD:
#' \code{mom = momentum * mom - lr * (rescale.grad * grad + wd * weight); weight += mom});
#' \code{mx.opt.nag}: Nesterov momentum; \code{mx.opt.adam}: Adam (Kingma and Ba, 2014) with
#' MXNet's bias correction of the learning rate; \code{mx.opt.rmsprop}: RMSProp (Tieleman and
#' Hinton, 2012; with \code{centered = TRUE}, Graves' 2013 variant); \code{mx.opt.adagrad}:
#' AdaGrad (Duchi et al., 2011); \code{mx.opt.adadelta}: AdaDelta (Zeiler, 2012).
#' \code{mx.opt.create(name, ...)} makes one by name.
#' @param learning.rate The step size.
#' @param momentum The momentum.
#' @param wd The weight decay (L2 regularisation).
#' @param rescale.grad Multiplies the gradient first (FeedForward.create sets 1 / batch size).
#' @param clip_gradient Clips the rescaled gradient to [-clip_gradient, clip_gradient]; NULL for no clipping.
#' @param lr_scheduler NULL, or a function of the optimizer's state environment that sets its
#'   \code{lr} (see \code{mx.lr_scheduler.FactorScheduler}).
#' @param beta1,beta2 Adam's decay rates of the moment estimates.
#' @param epsilon Added for numerical stability.
#' @param gamma1,gamma2 RMSProp's decay of the averages and (centered) momentum of the step.
#' @param centered Graves' centered RMSProp.
#' @param rho AdaDelta's decay rate.
#' @param name The optimizer's name: \code{"sgd"}, \code{"nag"}, \code{"adam"}, \code{"rmsprop"},
#'   \code{"adagrad"} or \code{"adadelta"}.
#' @param ... The optimizer's parameters.
#' @return An optimizer: \code{list(create.state, update)}.
#' @examples
#' opt <- mx.opt.create("sgd", learning.rate = 0.1, momentum = 0.9)
#' w <- mx.nd.ones(3)
#' state <- opt$create.state(1, w)
#' as.array(opt$update(1, w, mx.nd.ones(3), state)$weight)
#' @export
mx.opt.sgd <- function(learning.rate = 0.01, momentum = 0, wd = 0, rescale.grad = 1, clip_gradient = NULL,
                       lr_scheduler = NULL) {
  env <- mx.internal.opt.env(learning.rate)
  create.state <- function(index, weight) {
    if (momentum == 0) NULL else mx.nd.zeros(dim(weight), ctx(weight))
  }
  update <- function(index, weight, grad, state) {
    attrs <- mx.internal.opt.attrs(mx.internal.opt.lr(env, index, lr_scheduler), wd, rescale.grad, clip_gradient)
    if (is.null(state)) {
      mx.internal.opt.update("sgd_update", list(weight, grad), attrs, weight)
    } else {
      mx.internal.opt.update("sgd_mom_update", list(weight, grad, state), c(attrs, momentum = momentum), weight)
    }
    list(weight = weight, state = state)
  }
  list(create.state = create.state, update = update, env = env)
}

#' @rdname mx.opt.sgd
#' @export
mx.opt.nag <- function(learning.rate = 0.01, momentum = 0.9, wd = 0, rescale.grad = 1, clip_gradient = NULL,
                       lr_scheduler = NULL) {
  env <- mx.internal.opt.env(learning.rate)
  create.state <- function(index, weight) mx.nd.zeros(dim(weight), ctx(weight))
  update <- function(index, weight, grad, state) {
    attrs <- mx.internal.opt.attrs(mx.internal.opt.lr(env, index, lr_scheduler), wd, rescale.grad, clip_gradient)
    mx.internal.opt.update("nag_mom_update", list(weight, grad, state), c(attrs, momentum = momentum), weight)
    list(weight = weight, state = state)
  }
  list(create.state = create.state, update = update, env = env)
}

#' @rdname mx.opt.sgd
#' @export
mx.opt.adam <- function(learning.rate = 0.001, beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8, wd = 0, rescale.grad = 1,
                        clip_gradient = NULL, lr_scheduler = NULL) {
  env <- mx.internal.opt.env(learning.rate)
  create.state <- function(index, weight) {
    list(mean = mx.nd.zeros(dim(weight), ctx(weight)), variance = mx.nd.zeros(dim(weight), ctx(weight)))
  }
  update <- function(index, weight, grad, state) {
    lr <- mx.internal.opt.lr(env, index, lr_scheduler)
    t <- env$counts[[as.character(index)]]
    lr <- lr * sqrt(1 - beta2^t) / (1 - beta1^t)
    attrs <- c(mx.internal.opt.attrs(lr, wd, rescale.grad, clip_gradient),
               list(beta1 = beta1, beta2 = beta2, epsilon = epsilon))
    mx.internal.opt.update("adam_update", list(weight, grad, state$mean, state$variance), attrs, weight)
    list(weight = weight, state = state)
  }
  list(create.state = create.state, update = update, env = env)
}

#' @rdname mx.opt.sgd
#' @export
mx.opt.rmsprop <- function(learning.rate = 0.002, gamma1 = 0.95, gamma2 = 0.9, epsilon = 1e-8, wd = 0,
                           rescale.grad = 1, clip_gradient = NULL, lr_scheduler = NULL, centered = FALSE) {
  env <- mx.internal.opt.env(learning.rate)
  create.state <- function(index, weight) {
    zeros <- function() mx.nd.zeros(dim(weight), ctx(weight))
    if (centered) list(n = zeros(), g = zeros(), delta = zeros()) else list(n = zeros())
  }
  update <- function(index, weight, grad, state) {
    attrs <- c(mx.internal.opt.attrs(mx.internal.opt.lr(env, index, lr_scheduler), wd, rescale.grad, clip_gradient),
               list(gamma1 = gamma1, epsilon = epsilon))
    if (centered) {
      mx.internal.opt.update("rmspropalex_update", list(weight, grad, state$n, state$g, state$delta),
                             c(attrs, gamma2 = gamma2), weight)
    } else {
      mx.internal.opt.update("rmsprop_update", list(weight, grad, state$n), attrs, weight)
    }
    list(weight = weight, state = state)
  }
  list(create.state = create.state, update = update, env = env)
}

# The rescaled, clipped gradient plus weight decay, for the optimizers written in arithmetic.
mx.internal.opt.grad <- function(grad, weight, rescale.grad, clip_gradient, wd) {
  g <- grad * rescale.grad
  if (!is.null(clip_gradient) && clip_gradient >= 0) g <- mx.nd.invoke("clip", list(g), a_min = -clip_gradient, a_max = clip_gradient)
  if (wd != 0) g <- g + weight * wd
  g
}

#' @rdname mx.opt.sgd
#' @export
mx.opt.adagrad <- function(learning.rate = 0.05, epsilon = 1e-8, wd = 0, rescale.grad = 1, clip_gradient = NULL,
                           lr_scheduler = NULL) {
  env <- mx.internal.opt.env(learning.rate)
  create.state <- function(index, weight) mx.nd.zeros(dim(weight), ctx(weight))
  update <- function(index, weight, grad, state) {
    lr <- mx.internal.opt.lr(env, index, lr_scheduler)
    g <- mx.internal.opt.grad(grad, weight, rescale.grad, clip_gradient, wd)
    history <- state + g * g
    mx.internal.copy(weight - lr * g / sqrt(history + epsilon), weight)
    mx.internal.copy(history, state)
    list(weight = weight, state = state)
  }
  list(create.state = create.state, update = update, env = env)
}

#' @rdname mx.opt.sgd
#' @export
mx.opt.adadelta <- function(rho = 0.9, epsilon = 1e-5, wd = 0, rescale.grad = 1, clip_gradient = NULL) {
  create.state <- function(index, weight) {
    list(acc.g = mx.nd.zeros(dim(weight), ctx(weight)), acc.delta = mx.nd.zeros(dim(weight), ctx(weight)))
  }
  update <- function(index, weight, grad, state) {
    g <- mx.internal.opt.grad(grad, weight, rescale.grad, clip_gradient, wd)
    acc.g <- rho * state$acc.g + (1 - rho) * g * g
    delta <- sqrt(state$acc.delta + epsilon) / sqrt(acc.g + epsilon) * g
    acc.delta <- rho * state$acc.delta + (1 - rho) * delta * delta
    mx.internal.copy(weight - delta, weight)
    mx.internal.copy(acc.g, state$acc.g)
    mx.internal.copy(acc.delta, state$acc.delta)
    list(weight = weight, state = state)
  }
  list(create.state = create.state, update = update)
}

#' @rdname mx.opt.sgd
#' @export
mx.opt.create <- function(name, ...) {
  make <- switch(name, sgd = mx.opt.sgd, nag = mx.opt.nag, adam = mx.opt.adam, rmsprop = mx.opt.rmsprop,
                 adagrad = mx.opt.adagrad, adadelta = mx.opt.adadelta,
                 stop("unknown optimizer '", name, "' (sgd, nag, adam, rmsprop, adagrad, adadelta)", call. = FALSE))
  make(...)
}

#' An updater of a list of weights
#'
#' A closure \code{function(weights, grads)} that applies the optimizer to every weight whose
#' gradient is not NULL (keeping one state per position) and returns the list of new weights.
#' @param optimizer An optimizer.
#' @param weights The list of weights (NULL where there is nothing to update).
#' @return The updater.
#' @examples
#' upd <- mx.opt.get.updater(mx.opt.create("sgd", learning.rate = 0.5), list(w = mx.nd.ones(2)))
#' as.array(upd(list(w = mx.nd.ones(2)), list(w = mx.nd.ones(2)))$w)
#' @export
mx.opt.get.updater <- function(optimizer, weights) {
  states <- lapply(seq_along(weights), function(i) {
    if (is.null(weights[[i]])) NULL else list(optimizer$create.state(i, weights[[i]]))
  })
  function(weight, grad) {
    out <- vector("list", length(weight))
    names(out) <- names(weight)
    for (i in seq_along(weight)) {
      if (is.null(grad[[i]])) next
      r <- optimizer$update(i, weight[[i]], grad[[i]], states[[i]][[1]])
      states[[i]] <<- list(r$state)
      out[i] <- list(r$weight)
    }
    out
  }
}

#' Learning rate schedulers
#'
#' \code{mx.lr_scheduler.FactorScheduler(step, factor_val)} multiplies the learning rate by
#' \code{factor_val} every \code{step} updates (not below \code{stop_factor_lr});
#' \code{mx.lr_scheduler.MultiFactorScheduler(step, factor_val)} multiplies it at each update
#' count in the vector \code{step}.
#' @param step Updates between drops, or the update counts of the drops.
#' @param factor_val The factor.
#' @param stop_factor_lr The smallest learning rate.
#' @param verbose Report each change.
#' @return A scheduler for the optimizers' \code{lr_scheduler}.
#' @examples
#' opt <- mx.opt.sgd(learning.rate = 0.1, lr_scheduler = mx.lr_scheduler.FactorScheduler(100, 0.5))
#' @export
mx.lr_scheduler.FactorScheduler <- function(step, factor_val, stop_factor_lr = 1e-8, verbose = FALSE) {
  if (step < 1) stop("FactorScheduler: step must be at least 1", call. = FALSE)
  function(env) {
    drops <- floor(env$num_update / step)
    lr <- max(env$base_lr * factor_val^drops, stop_factor_lr)
    if (verbose && lr != env$lr) message("Update[", env$num_update, "]: learning rate is ", lr)
    env$lr <- lr
  }
}

#' @rdname mx.lr_scheduler.FactorScheduler
#' @export
mx.lr_scheduler.MultiFactorScheduler <- function(step, factor_val, stop_factor_lr = 1e-8, verbose = FALSE) {
  if (is.unsorted(step, strictly = TRUE) || any(step < 1)) {
    stop("MultiFactorScheduler: step must be increasing update counts", call. = FALSE)
  }
  function(env) {
    lr <- max(env$base_lr * factor_val^sum(env$num_update > step), stop_factor_lr)
    if (verbose && lr != env$lr) message("Update[", env$num_update, "]: learning rate is ", lr)
    env$lr <- lr
  }
}
