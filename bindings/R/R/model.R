# Feed-forward models (MXNet R's mx.model.*): training with mx.model.FeedForward.create, predict,
# and MXNet's checkpoint files (prefix-symbol.json, prefix-%04d.params with arg:/aux: names).

# The batch range [begin, end) of each of `n` devices, and the input shapes it gives them.
mx.internal.slices <- function(shapes, n) {
  batch <- shapes[[1]][length(shapes[[1]])]
  step <- ceiling(batch / n)
  lapply(seq_len(n) - 1, function(k) {
    begin <- min(k * step, batch)
    end <- min((k + 1) * step, batch)
    list(begin = begin, end = end,
         shapes = lapply(shapes, function(s) replace(s, length(s), end - begin)))
  })
}

# The data and label names the iterator's batches are bound to (label: the argument ending in
# "label", as MXNet R finds it).
mx.internal.io.names <- function(symbol, input.names, output.names) {
  if (is.null(input.names)) input.names <- "data"
  if (is.null(output.names)) {
    args <- arguments(symbol)
    output.names <- args[endsWith(args, "label")]
  }
  list(input = input.names, output = output.names)
}

# The arrays of one batch (MXNet's names) for device slice `s`.
mx.internal.batch.arrays <- function(batch, io, s, whole) {
  pick <- function(x) if (whole) x else mx.internal.nd.slice(x, s$begin, s$end)
  arrays <- lapply(io$input, function(n) pick(batch[[n]]))
  names(arrays) <- io$input
  labels <- if (!is.null(batch$label) && length(io$output) == 1) list(pick(batch$label)) else
    lapply(io$output, function(n) pick(batch[[n]]))
  names(labels) <- io$output
  c(arrays, labels)
}

# One pass of the executors over a batch: copy it in, forward, and return the outputs on the cpu
# with the labels.
mx.internal.model.step <- function(execs, slices, batch, io, is.train) {
  whole <- length(execs) == 1
  parts <- lapply(seq_along(execs), function(i) mx.internal.batch.arrays(batch, io, slices[[i]], whole))
  for (i in seq_along(execs)) {
    mx.exec.update.arg.arrays(execs[[i]], parts[[i]], match.name = TRUE)
    mx.exec.forward(execs[[i]], is.train = is.train)
  }
  preds <- lapply(execs, function(e) mx.nd.copyto(e$ref.outputs[[1]], mx.cpu()))
  labels <- lapply(parts, function(p) p[[length(p)]])
  list(preds = preds, labels = labels)
}

mx.internal.metric.update <- function(metric, state, step) {
  if (is.null(metric)) return(state)
  for (i in seq_along(step$preds)) state <- metric$update(step$labels[[i]], step$preds[[i]], state)
  state
}

# Gradients to weights: through the KVStore (which sums the devices' gradients and, when it
# updates, runs the optimizer) or with one updater per device.
mx.internal.model.update <- function(execs, kvstore, update.on.kvstore, updaters, params.index) {
  if (!is.null(kvstore)) {
    kvstore$push(params.index, lapply(execs, function(e) e$ref.grad.arrays[params.index]), -params.index)
  }
  if (update.on.kvstore) {
    kvstore$pull(params.index, lapply(execs, function(e) e$ref.arg.arrays[params.index]), -params.index)
    return(invisible(NULL))
  }
  if (!is.null(kvstore)) {
    kvstore$pull(params.index, lapply(execs, function(e) e$ref.grad.arrays[params.index]), -params.index)
  }
  for (i in seq_along(execs)) {
    weights <- updaters[[i]](execs[[i]]$ref.arg.arrays, execs[[i]]$ref.grad.arrays)
    mx.exec.update.arg.arrays(execs[[i]], weights, skip.null = TRUE)
  }
  invisible(NULL)
}

# One pass over `data` without training; the metric's state after it.
mx.internal.model.evaluate <- function(execs, slices, data, io, metric) {
  state <- if (is.null(metric)) NULL else metric$init()
  data$reset()
  while (data$iter.next()) {
    step <- mx.internal.model.step(execs, slices, data$value(), io, FALSE)
    state <- mx.internal.metric.update(metric, state, step)
  }
  data$reset()
  state
}

#' The model of trained executors
#'
#' The parameters (the mean over the devices, on the cpu) and auxiliary states of executors bound
#' for training, with their symbol.
#' @param symbol The network.
#' @param train.execs The executors.
#' @return An \code{MXFeedForwardModel}: \code{list(symbol, arg.params, aux.params)}.
#' @export
mx.model.extract.model <- function(symbol, train.execs) {
  mean.of <- function(field, k) {
    total <- Reduce(`+`, lapply(train.execs, function(e) mx.nd.copyto(e[[field]][[k]], mx.cpu())))
    if (length(train.execs) == 1) total else total / length(train.execs)
  }
  first <- train.execs[[1]]
  trained <- names(first$ref.arg.arrays)[!vapply(first$ref.grad.arrays, is.null, TRUE)]
  arg.params <- lapply(trained, function(n) mean.of("ref.arg.arrays", n))
  names(arg.params) <- trained
  aux.params <- lapply(names(first$ref.aux.arrays), function(n) mean.of("ref.aux.arrays", n))
  names(aux.params) <- names(first$ref.aux.arrays)
  structure(list(symbol = symbol, arg.params = arg.params, aux.params = aux.params), class = "MXFeedForwardModel")
}

mx.internal.model.train <- function(symbol, ctx, input.shape, output.shape, arg.params, aux.params, begin.round,
                                    end.round, optimizer, train.data, eval.data, metric, epoch.end.callback,
                                    batch.end.callback, kvstore, io, fixed.param, verbose) {
  if (verbose) message("Start training with ", length(ctx), " devices")
  slices <- mx.internal.slices(c(input.shape, output.shape), length(ctx))
  execs <- lapply(seq_along(ctx), function(i) {
    do.call(mx.simple.bind, c(list(symbol = symbol, ctx = ctx[[i]], grad.req = "write", fixed.param = fixed.param),
                              slices[[i]]$shapes))
  })
  for (e in execs) {
    mx.exec.update.arg.arrays(e, arg.params, match.name = TRUE)
    mx.exec.update.aux.arrays(e, aux.params, match.name = TRUE)
  }
  params.index <- which(!vapply(execs[[1]]$ref.grad.arrays, is.null, TRUE))
  update.on.kvstore <- !is.null(kvstore) && kvstore$update.on.kvstore
  updaters <- NULL
  if (update.on.kvstore) {
    kvstore$set.optimizer(optimizer)
  } else {
    updaters <- lapply(execs, function(e) mx.opt.get.updater(optimizer, e$ref.arg.arrays))
  }
  if (!is.null(kvstore)) kvstore$init(params.index, execs[[1]]$ref.arg.arrays[params.index])
  model <- NULL
  for (iteration in begin.round:end.round) {
    nbatch <- 0
    train.metric <- if (is.null(metric)) NULL else metric$init()
    while (train.data$iter.next()) {
      step <- mx.internal.model.step(execs, slices, train.data$value(), io, TRUE)
      for (e in execs) mx.exec.backward(e)
      mx.internal.model.update(execs, kvstore, update.on.kvstore, updaters, params.index)
      train.metric <- mx.internal.metric.update(metric, train.metric, step)
      nbatch <- nbatch + 1
      if (!is.null(batch.end.callback)) batch.end.callback(iteration, nbatch, environment())
    }
    train.data$reset()
    if (!is.null(metric) && verbose) {
      r <- metric$get(train.metric)
      message("[", iteration, "] Train-", r$name, "=", r$value)
    }
    eval.metric <- NULL
    if (!is.null(eval.data)) {
      eval.metric <- mx.internal.model.evaluate(execs, slices, eval.data, io, metric)
      if (!is.null(metric) && verbose) {
        r <- metric$get(eval.metric)
        message("[", iteration, "] Validation-", r$name, "=", r$value)
      }
    }
    model <- mx.model.extract.model(symbol, execs)
    if (!is.null(epoch.end.callback) && identical(epoch.end.callback(iteration, 0, environment(), verbose = verbose), FALSE)) {
      break
    }
  }
  model
}

# The store of a training on `ndevice` devices: none for one device; for "local", MXNet R's choice
# between updating on the store (small parameters) and summing there, updating on each device.
mx.internal.model.kvstore <- function(kvstore, arg.params, ndevice, verbose) {
  if (is.mx.kvstore(kvstore)) return(kvstore)
  if (!is.character(kvstore)) stop("kvstore must be an MXKVStore or a store type", call. = FALSE)
  if (ndevice == 1) return(NULL)
  if (kvstore == "local") {
    largest <- max(vapply(arg.params, length, 0L))
    kvstore <- if (largest < 1024 * 1024 * 16) "local_update_cpu" else "local_allreduce_cpu"
    if (verbose) message("Auto-select kvstore type = ", kvstore)
  }
  mx.kv.create(kvstore)
}

#' Initialize a network's parameters
#' @param symbol The network.
#' @param input.shape A named list of the R dims of the inputs.
#' @param output.shape A named list of the R dims of the labels (or NULL).
#' @param initializer An initializer (\code{mx.init.uniform}, ...).
#' @param ctx The device of the arrays.
#' @return \code{list(arg.params, aux.params)}.
#' @export
mx.model.init.params <- function(symbol, input.shape, output.shape, initializer, ctx) {
  shapes <- mx.internal.infer.shape(symbol, c(input.shape, output.shape))
  if (is.null(shapes)) stop("the input and label shapes do not determine every parameter's shape", call. = FALSE)
  list(arg.params = mx.init.create(initializer, shapes$arg.shapes, ctx, skip.unknown = TRUE),
       aux.params = mx.init.create(initializer, shapes$aux.shapes, ctx, skip.unknown = FALSE))
}

# A data iterator of X: itself, or mx.io.arrayiter over an R array (with labels y).
mx.internal.model.iter <- function(X, y, batch.size, is.train) {
  if (is.mx.dataiter(X)) return(X)
  if (is.null(y)) {
    if (is.train) stop("training on R arrays needs the labels y", call. = FALSE)
    d <- dim(X)
    y <- rep(0, if (is.null(d)) length(X) else d[length(d)])
  }
  mx.io.arrayiter(X, y, batch.size = min(length(y), batch.size), shuffle = is.train)
}

# "rowmajor" (one example per row) or "colmajor" for a matrix, from the labels' count.
mx.internal.model.layout <- function(X, n.examples, array.layout) {
  if (array.layout != "auto" || length(dim(X)) != 2) return(if (array.layout == "auto") "colmajor" else array.layout)
  rows <- nrow(X) == n.examples
  cols <- ncol(X) == n.examples
  if (rows == cols) stop("cannot tell the layout of X; give array.layout = \"rowmajor\" or \"colmajor\"", call. = FALSE)
  if (rows) "rowmajor" else "colmajor"
}

mx.internal.model.data <- function(X, y, array.layout, batch.size, is.train) {
  if (is.array(X) || is.matrix(X)) {
    n <- if (!is.null(y)) length(y) else NA
    layout <- if (is.na(n)) (if (array.layout == "auto") "colmajor" else array.layout) else
      mx.internal.model.layout(X, n, array.layout)
    if (layout == "rowmajor") X <- t(X)
  }
  mx.internal.model.iter(X, y, batch.size, is.train)
}

#' Train a feed-forward network
#'
#' MXNet R's training function: binds \code{symbol} on each device of \code{ctx} (splitting each
#' batch between them), initializes the parameters, and trains for \code{num.round} epochs with
#' \code{optimizer}, reporting \code{eval.metric} on the training data and on \code{eval.data}.
#' @param symbol The network (its label argument's name ends in \code{label}).
#' @param X The training data: an \code{MXDataIter} (\code{mx.io.MNISTIter}, ...) or an R array
#'   or matrix.
#' @param y The labels when X is an R array.
#' @param ctx A device or a list of devices (default \code{mx.ctx.default()}).
#' @param begin.round The number of the first epoch.
#' @param num.round The number of the last epoch.
#' @param optimizer An optimizer, or its name for \code{mx.opt.create} with \code{...} (the
#'   gradient is rescaled by 1 / batch size).
#' @param initializer The parameters' initializer.
#' @param eval.data Validation data: an \code{MXDataIter} or \code{list(data = , label = )}.
#' @param eval.metric A metric (\code{mx.metric.accuracy}, ...).
#' @param epoch.end.callback,batch.end.callback Callbacks (\code{mx.callback.*}).
#' @param array.batch.size The batch size for R arrays.
#' @param array.layout \code{"auto"}, \code{"colmajor"} (examples along the last dimension) or
#'   \code{"rowmajor"} (one example per row of a matrix).
#' @param kvstore The KVStore type (used with several devices) or an \code{MXKVStore}.
#' @param verbose Report the metrics of each epoch.
#' @param arg.params,aux.params Starting parameters (instead of the initializer's).
#' @param input.names,output.names The names of the data and label arguments.
#' @param fixed.param Arguments not trained.
#' @param allow.extra.params Ignore parameters the network does not have.
#' @param ... The optimizer's parameters (\code{learning.rate}, \code{momentum}, ...).
#' @return The trained \code{MXFeedForwardModel}.
#' @examples
#' \donttest{
#' data <- mx.symbol.Variable("data")
#' fc <- mx.symbol.FullyConnected(data, num_hidden = 2, name = "fc")
#' net <- mx.symbol.SoftmaxOutput(fc, name = "softmax")
#' x <- matrix(c(rnorm(100, -1), rnorm(100, 1)), ncol = 1)
#' x <- cbind(x, x^2)
#' y <- rep(0:1, each = 100)
#' model <- mx.model.FeedForward.create(net, X = x, y = y, num.round = 2, array.batch.size = 20,
#'                                      learning.rate = 0.1, eval.metric = mx.metric.accuracy)
#' }
#' @export
mx.model.FeedForward.create <- function(symbol, X, y = NULL, ctx = NULL, begin.round = 1, num.round = 10,
                                        optimizer = "sgd", initializer = mx.init.uniform(0.01), eval.data = NULL,
                                        eval.metric = NULL, epoch.end.callback = NULL, batch.end.callback = NULL,
                                        array.batch.size = 128, array.layout = "auto", kvstore = "local",
                                        verbose = TRUE, arg.params = NULL, aux.params = NULL, input.names = NULL,
                                        output.names = NULL, fixed.param = NULL, allow.extra.params = FALSE, ...) {
  mx.internal.check.symbol(symbol, "mx.model.FeedForward.create(symbol)")
  X <- mx.internal.model.data(X, y, array.layout, array.batch.size, TRUE)
  X$reset()
  if (!X$iter.next()) stop("mx.model.FeedForward.create: the training data is empty", call. = FALSE)
  first <- X$value()
  X$reset()
  io <- mx.internal.io.names(symbol, input.names, output.names)
  input.shape <- lapply(io$input, function(n) dim(first[[n]]))
  names(input.shape) <- io$input
  output.shape <- lapply(io$output, function(n) dim(if (is.null(first[[n]])) first$label else first[[n]]))
  names(output.shape) <- io$output
  params <- mx.model.init.params(symbol, input.shape, output.shape, initializer, mx.cpu())
  if (!is.null(arg.params)) params$arg.params <- arg.params
  if (!is.null(aux.params)) params$aux.params <- aux.params
  if (allow.extra.params) params$arg.params <- params$arg.params[names(params$arg.params) %in% arguments(symbol)]
  ctx <- if (is.null(ctx)) list(mx.ctx.default()) else if (is.mx.context(ctx)) list(ctx) else ctx
  if (!is.list(ctx) || !all(vapply(ctx, is.mx.context, TRUE))) {
    stop("ctx must be an mx.context or a list of them", call. = FALSE)
  }
  if (is.character(optimizer)) {
    batch <- input.shape[[1]][length(input.shape[[1]])]
    optimizer <- mx.opt.create(optimizer, rescale.grad = 1 / batch, ...)
  }
  if (is.list(eval.data) && !is.mx.dataiter(eval.data)) {
    if (is.null(eval.data$data) || is.null(eval.data$label)) {
      stop("eval.data must be an MXDataIter or list(data = R array, label = R array)", call. = FALSE)
    }
    eval.data <- mx.internal.model.data(eval.data$data, eval.data$label, array.layout, array.batch.size, FALSE)
  }
  kvstore <- mx.internal.model.kvstore(kvstore, params$arg.params, length(ctx), verbose)
  mx.internal.model.train(symbol, ctx, input.shape, output.shape, params$arg.params, params$aux.params,
                          begin.round, num.round, optimizer, X, eval.data, eval.metric, epoch.end.callback,
                          batch.end.callback, kvstore, io, fixed.param, verbose)
}

#' Predict with a model
#'
#' Runs the model's first output on every batch of \code{X}.
#' @param object An \code{MXFeedForwardModel}.
#' @param X The data: an \code{MXDataIter} or an R array (examples along the last dimension, or
#'   one per row of a matrix with \code{array.layout = "rowmajor"}).
#' @param ctx The device.
#' @param array.batch.size The batch size for R arrays.
#' @param array.layout \code{"auto"}, \code{"colmajor"} or \code{"rowmajor"}.
#' @param allow.extra.params Ignore parameters the network does not have.
#' @param ... Not used.
#' @return The outputs: a matrix with one column per example (for a classifier, one row per class).
#' @export
predict.MXFeedForwardModel <- function(object, X, ctx = NULL, array.batch.size = 128, array.layout = "auto",
                                       allow.extra.params = FALSE, ...) {
  model <- mx.unserialize(object)
  ctx <- mx.internal.check.context(ctx, "predict")
  if (is.array(X) || is.matrix(X)) {
    if (array.layout == "auto") array.layout <- mx.internal.predict.layout(X, model)
    if (array.layout == "rowmajor") X <- t(X)
  }
  X <- mx.internal.model.iter(X, NULL, array.batch.size, FALSE)
  X$reset()
  if (!X$iter.next()) stop("predict: the data is empty", call. = FALSE)
  exec <- mx.simple.bind(model$symbol, ctx, grad.req = "null", data = dim(X$value()$data))
  arg.params <- model$arg.params
  if (allow.extra.params) arg.params <- arg.params[names(arg.params) %in% arguments(model$symbol)]
  mx.exec.update.arg.arrays(exec, arg.params, match.name = TRUE)
  mx.exec.update.aux.arrays(exec, model$aux.params, match.name = TRUE)
  X$reset()
  parts <- list()
  while (X$iter.next()) {
    mx.exec.update.arg.arrays(exec, list(data = X$value()$data), match.name = TRUE)
    mx.exec.forward(exec, is.train = FALSE)
    out <- as.array(exec$ref.outputs[[1]])
    n <- dim(out)[length(dim(out))] - X$num.pad()
    parts[[length(parts) + 1]] <- matrix(out, ncol = dim(out)[length(dim(out))])[, seq_len(n), drop = FALSE]
  }
  X$reset()
  do.call(cbind, parts)
}

# "rowmajor" when the parameters fit a matrix of one example per row, "colmajor" when they fit one
# per column.
mx.internal.predict.layout <- function(X, model) {
  if (length(dim(X)) != 2) return("colmajor")
  fits <- function(features) {
    s <- tryCatch(mx.internal.infer.shape(model$symbol, list(data = c(features, 1))), error = function(e) NULL)
    !is.null(s) && all(vapply(names(model$arg.params), function(n) {
      identical(as.integer(s$arg.shapes[[n]]), as.integer(dim(model$arg.params[[n]])))
    }, TRUE))
  }
  rows <- fits(ncol(X))
  cols <- fits(nrow(X))
  if (rows == cols) stop("cannot tell the layout of X; give array.layout = \"rowmajor\" or \"colmajor\"", call. = FALSE)
  if (rows) "rowmajor" else "colmajor"
}

#' Save and load model checkpoints
#'
#' MXNet's checkpoint files: \code{prefix-symbol.json} and \code{prefix-\%04d.params} (the
#' parameters named \code{arg:<name>} and \code{aux:<name>}), as MXNet's \code{save_checkpoint},
#' weft's \code{train_mnist} and \code{weft::SaveCheckpoint} write them.
#' @param model An \code{MXFeedForwardModel}.
#' @param prefix The files' prefix.
#' @param iteration The epoch number in the parameter file's name.
#' @return \code{mx.model.load}: the \code{MXFeedForwardModel}.
#' @examples
#' net <- mx.symbol.FullyConnected(mx.symbol.Variable("data"), num.hidden = 2, name = "fc")
#' model <- structure(list(symbol = net, arg.params = list(fc_weight = mx.nd.ones(c(3, 2)), fc_bias = mx.nd.zeros(2)),
#'                         aux.params = list()), class = "MXFeedForwardModel")
#' prefix <- file.path(tempdir(), "fc")
#' mx.model.save(model, prefix, 1)
#' names(mx.model.load(prefix, 1)$arg.params)
#' @export
mx.model.save <- function(model, prefix, iteration) {
  model <- mx.unserialize(model)
  arrays <- c(model$arg.params, model$aux.params)
  prefixed <- function(kind, x) if (length(x) == 0) character() else paste0(kind, ":", names(x))
  names(arrays) <- c(prefixed("arg", model$arg.params), prefixed("aux", model$aux.params))
  mx.symbol.save(model$symbol, paste0(prefix, "-symbol.json"))
  mx.nd.save(arrays, sprintf("%s-%04d.params", prefix, as.integer(iteration)))
  invisible(NULL)
}

#' @rdname mx.model.save
#' @export
mx.model.load <- function(prefix, iteration) {
  symbol <- mx.symbol.load(paste0(prefix, "-symbol.json"))
  arrays <- mx.nd.load(sprintf("%s-%04d.params", prefix, as.integer(iteration)))
  nms <- names(arrays)
  if (is.null(nms)) nms <- character(length(arrays))
  part <- function(kind) {
    keep <- startsWith(nms, paste0(kind, ":"))
    out <- arrays[keep]
    names(out) <- substring(nms[keep], nchar(kind) + 2)
    out
  }
  structure(list(symbol = symbol, arg.params = part("arg"), aux.params = part("aux")), class = "MXFeedForwardModel")
}

#' Models in R's saved workspaces
#'
#' An \code{MXFeedForwardModel} holds handles to weft's objects, which R cannot save with a
#' workspace; \code{mx.serialize} turns it into R values (the symbol's JSON, R arrays) that
#' \code{saveRDS} keeps, and \code{mx.unserialize} turns those back.
#' @param model An \code{MXFeedForwardModel}.
#' @return The model in the other form.
#' @export
mx.serialize <- function(model) {
  if (isTRUE(model$is.serialized)) return(model)
  structure(list(symbol_json = .mx_symbol_json(model$symbol), arg.params = lapply(model$arg.params, as.array),
                 aux.params = lapply(model$aux.params, as.array), is.serialized = TRUE),
            class = "MXFeedForwardModel")
}

#' @rdname mx.serialize
#' @export
mx.unserialize <- function(model) {
  if (!isTRUE(model$is.serialized)) return(model)
  structure(list(symbol = mx.symbol.load.json(model$symbol_json), arg.params = lapply(model$arg.params, mx.nd.array),
                 aux.params = lapply(model$aux.params, mx.nd.array)), class = "MXFeedForwardModel")
}
