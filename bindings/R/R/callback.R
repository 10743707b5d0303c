# Callbacks of mx.model.FeedForward.create: batch.end.callback(iteration, nbatch, env) and
# epoch.end.callback(iteration, nbatch, env, verbose); env is the training loop's environment
# (env$metric, env$train.metric, env$eval.metric, env$model). An epoch callback returning FALSE
# stops the training.

#' Training callbacks
#'
#' \code{mx.callback.log.train.metric(period, logger)}: every \code{period} batches reports the
#' training metric so far, and at each epoch's end records the training and validation metrics
#' in \code{logger} (an environment, e.g. \code{mx.metric.logger()}, with vectors \code{train} and
#' \code{eval}). \code{mx.callback.save.checkpoint(prefix, period)}: saves the model every
#' \code{period} epochs with \code{mx.model.save}.
#' @param period Batches (or epochs) between two reports (or checkpoints).
#' @param logger NULL, or an environment as \code{mx.metric.logger()} makes.
#' @param prefix The checkpoint's file prefix.
#' @return A callback.
#' @examples
#' logger <- mx.metric.logger()
#' cb <- mx.callback.log.train.metric(100, logger)
#' @export
mx.callback.log.train.metric <- function(period, logger = NULL) {
  function(iteration, nbatch, env, verbose = TRUE) {
    if (nbatch %% period == 0 && !is.null(env$metric)) {
      result <- env$metric$get(env$train.metric)
      if (nbatch != 0 && verbose) message("Batch [", nbatch, "] Train-", result$name, "=", result$value)
      if (!is.null(logger)) {
        if (class(logger) != "environment") stop("mx.callback.log.train.metric: logger must be an environment", call. = FALSE)
        logger$train <- c(logger$train, result$value)
        if (!is.null(env$eval.metric)) logger$eval <- c(logger$eval, env$metric$get(env$eval.metric)$value)
      }
    }
    TRUE
  }
}

#' @rdname mx.callback.log.train.metric
#' @export
mx.metric.logger <- function() {
  logger <- new.env(parent = emptyenv())
  logger$train <- numeric()
  logger$eval <- numeric()
  logger
}

#' @rdname mx.callback.log.train.metric
#' @export
mx.callback.save.checkpoint <- function(prefix, period = 1) {
  function(iteration, nbatch, env, verbose = TRUE) {
    if (iteration %% period == 0) {
      mx.model.save(env$model, prefix, iteration)
      if (verbose) message(sprintf("Model checkpoint saved to %s-%04d.params", prefix, iteration))
    }
    TRUE
  }
}
