# Loading: find weft's MXNet C API library, load it, and generate the operator and iterator
# functions from what it lists.

#' @useDynLib mxnet, .registration = TRUE
#' @importFrom Rcpp evalCpp
NULL

# Package state: the default context, the symbol name counters, the generated operators' specs.
.MXNetEnv <- new.env(parent = emptyenv())

#' Where the package looks for weft's MXNet C API library
#'
#' The package is a binding of MXNet's C API as weft's \code{libweft_mxnet.so} implements it. When
#' it loads it takes the library from the environment variable \code{MXNET_LIBRARY_PATH} when that
#' is set, else from \code{weft-config --mxnet-library} when \code{weft-config} (installed in weft's
#' \code{bin} directory) is on the \code{PATH}.
#'
#' @return The path of the library.
#' @examples
#' mx.library.path()
#' @export
mx.library.path <- function() {
  path <- Sys.getenv("MXNET_LIBRARY_PATH")
  if (nzchar(path)) {
    if (!file.exists(path)) {
      stop("MXNET_LIBRARY_PATH is '", path, "', which does not exist (it should name weft's libweft_mxnet.so)",
           call. = FALSE)
    }
    return(normalizePath(path))
  }
  config <- Sys.which("weft-config")
  if (nzchar(config)) {
    out <- suppressWarnings(system2(config, "--mxnet-library", stdout = TRUE, stderr = TRUE, timeout = 60))
    status <- attr(out, "status")
    if (is.null(status) && length(out) == 1 && file.exists(out)) return(out)
    stop("'", config, " --mxnet-library' failed: ", paste(out, collapse = " "), call. = FALSE)
  }
  stop("cannot find weft's MXNet C API library (libweft_mxnet.so): set MXNET_LIBRARY_PATH to it, or put ",
       "the bin directory of a weft build or install (which has weft-config) on PATH", call. = FALSE)
}

.onLoad <- function(libname, pkgname) {
  .mx_load_library(mx.library.path())
  ns <- topenv()
  public <- c(mx.internal.generate.ops(ns), mx.internal.generate.iters(ns))
  namespaceExport(ns, public)
  .MXNetEnv$ctx <- mx.cpu()
  .MXNetEnv$names <- new.env(parent = emptyenv())
}

# Frees the weft object behind an MXNDArray, MXSymbol, MXExecutor, MXKVStore or MXDataIter now,
# instead of when R's garbage collector finds it unreachable (a later use raises an R error).
mx.internal.free <- function(x) invisible(.mx_free(x))
