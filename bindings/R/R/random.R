#' Seed the random generators
#'
#' Seeds weft's generator (dropout and the random operators, on every device) and R's (which the
#' initializers and \code{mx.io.arrayiter}'s shuffling draw from), so that a training run repeats.
#' @param seed An integer.
#' @return NULL, invisibly.
#' @examples
#' mx.set.seed(42)
#' @export
mx.set.seed <- function(seed) {
  .mx_random_seed(as.integer(seed))
  set.seed(seed)
  invisible(NULL)
}
