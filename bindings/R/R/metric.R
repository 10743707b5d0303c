# Evaluation metrics (MXNet R's interface): list(init(), update(label, pred, state), get(state))
# where label and pred are MXNDArrays of a batch (pred: one column per example) and get returns
# list(name, value).

#' Evaluation metrics
#'
#' \code{mx.metric.accuracy}: the fraction of examples whose largest prediction is at the label
#' (labels count classes from 0, as MXNet's do); \code{mx.metric.top_k_accuracy(k)}: whose label
#' is among the k largest; \code{mx.metric.mse}, \code{mx.metric.rmse}, \code{mx.metric.mae}:
#' regression errors; \code{mx.metric.logloss}: the mean negative log of the label's predicted
#' probability. \code{mx.metric.custom(name, feval)} makes a metric from
#' \code{feval(label, pred)} on R arrays, averaged over batches.
#' @param name The metric's name.
#' @param feval A function of (label, pred) R arrays returning a number.
#' @param k How many of the largest predictions count.
#' @return A metric: \code{list(init, update, get)}.
#' @examples
#' m <- mx.metric.accuracy
#' s <- m$update(mx.nd.array(c(0, 1)), mx.nd.array(matrix(c(0.9, 0.1, 0.3, 0.7), 2)), m$init())
#' m$get(s)
#' @export
mx.metric.custom <- function(name, feval) {
  list(init = function() c(0, 0),
       update = function(label, pred, state) {
         value <- feval(as.array(label), as.array(pred))
         state + c(value, 1)
       },
       get = function(state) list(name = name, value = state[1] / state[2]))
}

# A metric summing a per-example quantity: value = sum / count over every example seen.
mx.internal.metric.sum <- function(name, per.example, finish = identity) {
  list(init = function() c(0, 0),
       update = function(label, pred, state) {
         label <- as.array(label)
         pred <- as.array(pred)
         state + c(sum(per.example(label, pred)), length(label))
       },
       get = function(state) list(name = name, value = finish(state[1] / state[2])))
}

mx.internal.pred.matrix <- function(pred, n) {
  if (length(dim(pred)) == 1 || is.null(dim(pred))) return(matrix(pred, nrow = 1))
  matrix(pred, ncol = n)
}

#' @rdname mx.metric.custom
#' @export
mx.metric.accuracy <- mx.internal.metric.sum("accuracy", function(label, pred) {
  p <- mx.internal.pred.matrix(pred, length(label))
  (max.col(t(p), ties.method = "first") - 1) == as.vector(label)
})

#' @rdname mx.metric.custom
#' @export
mx.metric.top_k_accuracy <- function(k) {
  mx.internal.metric.sum(paste0("top_", k, "_accuracy"), function(label, pred) {
    p <- mx.internal.pred.matrix(pred, length(label))
    label <- as.vector(label)
    vapply(seq_along(label), function(j) {
      sum(p[, j] > p[label[j] + 1, j]) < k
    }, TRUE)
  })
}

#' @rdname mx.metric.custom
#' @export
mx.metric.mse <- mx.internal.metric.sum("mse", function(label, pred) (as.vector(label) - as.vector(pred))^2)

#' @rdname mx.metric.custom
#' @export
mx.metric.rmse <- mx.internal.metric.sum("rmse", function(label, pred) (as.vector(label) - as.vector(pred))^2, sqrt)

#' @rdname mx.metric.custom
#' @export
mx.metric.mae <- mx.internal.metric.sum("mae", function(label, pred) abs(as.vector(label) - as.vector(pred)))

#' @rdname mx.metric.custom
#' @export
mx.metric.logloss <- mx.internal.metric.sum("logloss", function(label, pred) {
  p <- mx.internal.pred.matrix(pred, length(label))
  label <- as.vector(label)
  -log(pmax(p[cbind(label + 1, seq_along(label))], 1e-15))
})
