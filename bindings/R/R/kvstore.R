# MXKVStore: MXNet R's key-value store object (an R environment): $init, $push, $pull,
# $set.optimizer, $type, $update.on.kvstore; also $rank and $num.workers.

#' Create a KVStore
#'
#' A key-value store of arrays, for data-parallel training: \code{kv$init(keys, values)} stores
#' one array per key; \code{kv$push(keys, values, priority)} sums the arrays pushed to each key
#' (one list of arrays per device: \code{values[[device]][[key]]}) and applies the updater set by
#' \code{kv$set.optimizer(optimizer)} to the stored array, or stores the sum when there is none;
#' \code{kv$pull(keys, outs, priority)} copies the stored arrays into \code{outs[[device]][[key]]}.
#' Keys are integers. The updater is an optimizer as \code{mx.opt.create} makes (a list of
#' \code{create.state(index, weight)} and \code{update(index, weight, grad, state)}, which returns
#' \code{list(weight, state)}); an error it raises stops the push with an R error.
#' @param type The store type: \code{"local"} or \code{"device"} (weft's other types, the
#'   distributed ones, run updaters where R cannot).
#' @return An \code{MXKVStore}.
#' @examples
#' kv <- mx.kv.create("local")
#' kv$init(3, list(mx.nd.ones(c(2, 3))))
#' kv$push(3, list(list(mx.nd.ones(c(2, 3)) * 8)))
#' out <- mx.nd.zeros(c(2, 3))
#' kv$pull(3, list(list(out)))
#' as.array(out)
#' @export
mx.kv.create <- function(type = "local") {
  if (!is.character(type) || length(type) != 1) stop("mx.kv.create: type must be a string", call. = FALSE)
  kv <- new.env(parent = emptyenv())
  handle <- .mx_kv_create(type)
  kv$handle <- handle
  kv$type <- .mx_kv_type(handle)
  kv$update.on.kvstore <- !(kv$type %in% c("local_allreduce_cpu", "local_allreduce_device"))
  rank.size <- .mx_kv_rank_size(handle)
  kv$rank <- rank.size[1]
  kv$num.workers <- rank.size[2]
  kv$init <- function(keys, values) {
    values <- mx.internal.kv.values(values, length(keys), "kv$init")
    .mx_kv_init(kv, mx.internal.kv.keys(keys), values)
    invisible(NULL)
  }
  kv$push <- function(keys, values, priority = 0) {
    .mx_kv_push(kv, mx.internal.kv.keys(keys), mx.internal.kv.lists(values, length(keys), "kv$push"),
                as.integer(priority))
    invisible(NULL)
  }
  kv$pull <- function(keys, out, priority = 0) {
    .mx_kv_pull(kv, mx.internal.kv.keys(keys), mx.internal.kv.lists(out, length(keys), "kv$pull"),
                as.integer(priority))
    invisible(NULL)
  }
  kv$set.optimizer <- function(optimizer) {
    if (!is.list(optimizer) || !is.function(optimizer$create.state) || !is.function(optimizer$update)) {
      stop("kv$set.optimizer: optimizer must be a list(create.state = , update = ) as mx.opt.create makes",
           call. = FALSE)
    }
    states <- new.env(parent = emptyenv())
    # Called by the store for each key pushed, in R's thread; returns NULL, or the error message.
    kv$call.updater <- function(key, grad, weight) {
      tryCatch({
        k <- as.character(key)
        if (!exists(k, envir = states, inherits = FALSE)) assign(k, list(optimizer$create.state(key, weight)), states)
        result <- optimizer$update(key, weight, grad, get(k, envir = states)[[1]])
        assign(k, list(result$state), states)
        if (!identical(result$weight, weight)) mx.internal.copy(result$weight, weight)
        NULL
      }, error = function(e) conditionMessage(e))
    }
    .mx_kv_set_updater(kv)
    invisible(NULL)
  }
  class(kv) <- "MXKVStore"
  kv
}

#' Is it an MXKVStore?
#' @param x An object.
#' @return TRUE or FALSE.
#' @export
is.mx.kvstore <- function(x) inherits(x, "MXKVStore")

#' @export
print.MXKVStore <- function(x, ...) {
  cat("MXKVStore of type ", x$type, "\n", sep = "")
  invisible(x)
}

mx.internal.kv.keys <- function(keys) {
  if (!is.numeric(keys) || anyNA(keys) || any(keys != round(keys))) stop("KVStore keys must be integers", call. = FALSE)
  as.integer(keys)
}

# One array per key (an MXNDArray alone stands for a list of one).
mx.internal.kv.values <- function(values, nkeys, what) {
  if (is.mx.ndarray(values)) values <- list(values)
  if (!is.list(values) || length(values) != nkeys) {
    stop(what, ": give one MXNDArray per key (", nkeys, " keys)", call. = FALSE)
  }
  unname(values)
}

# One list of arrays per device, each with one array per key.
mx.internal.kv.lists <- function(values, nkeys, what) {
  if (is.mx.ndarray(values)) values <- list(values)
  if (!is.list(values)) stop(what, ": give a list (per device) of lists (per key) of MXNDArrays", call. = FALSE)
  if (length(values) > 0 && all(vapply(values, is.mx.ndarray, TRUE)) && length(values) == nkeys) values <- list(values)
  lapply(values, function(v) mx.internal.kv.values(v, nkeys, what))
}
