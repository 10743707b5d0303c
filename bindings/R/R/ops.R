# The operator functions: one mx.symbol.<op> and one mx.nd.<op> per operator the library lists,
# made when the package loads from MXSymbolGetAtomicSymbolInfo. Their formal arguments are the
# operator's inputs (first, so they can be given by position) and, after `...`, its attributes
# with MXNet R's spelling (num_hidden is num.hidden; the underscore spelling is accepted too).
# Names starting with "_" become mx.symbol.internal.<rest> and mx.nd.internal.<rest>, not
# exported (MXNet R's rule); backward operators and MXNet's NumPy-interface names get none.

mx.internal.r.name <- function(x) gsub("_", ".", x, fixed = TRUE)

# The R spelling of a value of an attribute, as MXNet's parameter parser reads it.
mx.internal.format.number <- function(x) {
  if (is.finite(x) && x == round(x) && abs(x) < 2^53) return(format(x, scientific = FALSE))
  format(x, digits = 17)
}

mx.internal.format.value <- function(x, key) {
  if (is.mx.context(x)) return(format(x))
  if (is.logical(x) && length(x) == 1 && !is.na(x)) return(if (x) "True" else "False")
  if (is.character(x) && length(x) == 1) return(x)
  if (is.numeric(x) && !anyNA(x)) {
    parts <- vapply(as.double(x), mx.internal.format.number, "")
    if (length(x) == 1) return(parts)
    return(paste0("(", paste(parts, collapse = ","), ")"))
  }
  stop("argument '", mx.internal.r.name(key), "': cannot pass ", class(x)[1], " of length ", length(x),
       " (use a number, a numeric vector for a tuple, a string or TRUE/FALSE)", call. = FALSE)
}

# The spec of one operator: which formal is which input or attribute.
mx.internal.op.spec <- function(info) {
  is.input <- startsWith(info$arg.types, "NDArray-or-Symbol")
  keep <- !duplicated(info$arg.names)
  inputs <- info$arg.names[is.input & keep]
  attrs <- info$arg.names[!is.input & keep]
  variadic <- nzchar(info$key.var.num.args) || any(endsWith(info$arg.types[is.input], "[]"))
  list(op = info$name, inputs = if (variadic) character() else inputs, attrs = attrs, variadic = variadic,
       num.args = info$key.var.num.args, description = info$description, info = info)
}

mx.internal.op.formals <- function(spec, kind) {
  reserved <- if (kind == "symbol") c("name", "attr") else "out"
  attrs <- setdiff(mx.internal.r.name(spec$attrs), reserved)
  names.in.order <- c(mx.internal.r.name(spec$inputs), "...", attrs, reserved)
  f <- rep(list(NULL), length(names.in.order))
  names(f) <- names.in.order
  f[["..."]] <- quote(expr = )
  as.pairlist(f)
}

mx.internal.make.op <- function(spec, kind, ns) {
  f <- function() NULL
  formals(f) <- mx.internal.op.formals(spec, kind)
  caller <- if (kind == "symbol") quote(mx.internal.call.symbol) else quote(mx.internal.call.nd)
  body(f) <- as.call(list(caller, spec$op, quote(environment()), quote(list(...))))
  environment(f) <- ns
  f
}

# Creates every operator function in `ns`; returns the names to export.
mx.internal.generate.ops <- function(ns) {
  specs <- new.env(parent = emptyenv())
  public <- character()
  for (info in .mx_op_list()) {
    op <- info$name
    if (startsWith(op, "_backward_") || grepl("^_np[ix]?_", op)) next
    rname <- if (startsWith(op, "_")) paste0("internal.", substring(op, 2)) else op
    spec <- mx.internal.op.spec(info)
    assign(op, spec, envir = specs)
    for (kind in c("symbol", "nd")) {
      fname <- paste0("mx.", kind, ".", rname)
      if (exists(fname, envir = ns, inherits = FALSE)) next  # a function written by hand comes first
      assign(fname, mx.internal.make.op(spec, kind, ns), envir = ns)
      if (!startsWith(op, "_")) public <- c(public, fname)
    }
  }
  .MXNetEnv$ops <- specs
  public
}

# Sorts the arguments of a call into inputs and attributes (op names: with underscores).
mx.internal.op.args <- function(spec, frame, dots, kind, is.input) {
  what <- paste0("mx.", kind, ".", spec$op)
  inputs <- list()
  attrs <- list()
  for (k in spec$inputs) {
    v <- get(mx.internal.r.name(k), envir = frame)
    if (!is.null(v)) inputs[[k]] <- v
  }
  for (k in setdiff(spec$attrs, c("name", "attr", "out"))) {
    v <- get(mx.internal.r.name(k), envir = frame)
    if (!is.null(v)) attrs[[k]] <- v
  }
  positional <- list()
  dot.names <- names(dots)
  if (is.null(dot.names)) dot.names <- rep("", length(dots))
  for (i in seq_along(dots)) {
    v <- dots[[i]]
    key <- gsub(".", "_", dot.names[i], fixed = TRUE)
    if (!nzchar(key)) {
      if (!spec$variadic) {
        stop(what, ": too many inputs given by position (its inputs: ",
             paste(mx.internal.r.name(spec$inputs), collapse = ", "), "); give attributes as name = value",
             call. = FALSE)
      }
      positional <- c(positional, if (is.list(v) && !is.input(v)) v else list(v))
    } else if (key %in% spec$inputs) {
      inputs[[key]] <- v
    } else if (spec$variadic && key == "data" && (is.input(v) || is.list(v))) {
      positional <- c(positional, if (is.list(v) && !is.input(v)) v else list(v))
    } else if (is.null(v)) {
      next
    } else {
      attrs[[key]] <- v  # an attribute, or one the library does not know: its error names it
    }
  }
  for (k in names(inputs)) {
    if (!is.input(inputs[[k]])) {
      stop(what, ": input '", mx.internal.r.name(k), "' must be an ", if (kind == "symbol") "MXSymbol" else "MXNDArray",
           ", not ", class(inputs[[k]])[1], call. = FALSE)
    }
  }
  for (i in seq_along(positional)) {
    if (!is.input(positional[[i]])) {
      stop(what, ": input ", i, " must be an ", if (kind == "symbol") "MXSymbol" else "MXNDArray", ", not ",
           class(positional[[i]])[1], call. = FALSE)
    }
  }
  if (spec$variadic && nzchar(spec$num.args) && is.null(attrs[[spec$num.args]]) && length(positional) > 0 &&
      spec$num.args %in% spec$attrs) {
    attrs[[spec$num.args]] <- length(positional)
  }
  keys <- names(attrs)
  values <- vapply(keys, function(k) mx.internal.format.value(attrs[[k]], k), "", USE.NAMES = FALSE)
  list(inputs = if (spec$variadic) positional else inputs, keys = as.character(keys), values = values)
}

# The automatic name of a new operator symbol: the op's name in lower case and a counter, as
# MXNet's NameManager does (fullyconnected0, fullyconnected1, ...).
mx.internal.auto.name <- function(op) {
  hint <- tolower(op)
  counters <- .MXNetEnv$names
  n <- if (exists(hint, envir = counters, inherits = FALSE)) get(hint, envir = counters) else 0L
  assign(hint, n + 1L, envir = counters)
  paste0(hint, n)
}

mx.internal.call.symbol <- function(op, frame, dots) {
  spec <- get(op, envir = .MXNetEnv$ops)
  a <- mx.internal.op.args(spec, frame, dots, "symbol", is.mx.symbol)
  name <- get("name", envir = frame)
  if (is.null(name)) name <- mx.internal.auto.name(op)
  if (!is.character(name) || length(name) != 1) stop("mx.symbol.", op, ": name must be a string", call. = FALSE)
  sym <- mx.internal.named.error(paste0("mx.symbol.", op), .mx_symbol_create(op, a$keys, a$values, a$inputs, name))
  attr <- get("attr", envir = frame)
  for (k in names(attr)) .mx_symbol_set_attr(sym, k, mx.internal.format.value(attr[[k]], k))
  sym
}

mx.internal.call.nd <- function(op, frame, dots) {
  spec <- get(op, envir = .MXNetEnv$ops)
  a <- mx.internal.op.args(spec, frame, dots, "nd", is.mx.ndarray)
  out <- get("out", envir = frame)
  if (is.mx.ndarray(out)) out <- list(out)
  result <- mx.internal.named.error(paste0("mx.nd.", op), .mx_nd_invoke(op, unname(a$inputs), a$keys, a$values, out))
  if (length(result) == 1) result[[1]] else result
}

# Evaluates `expr`; an error it raises is raised again with `what` (the R function) in front.
mx.internal.named.error <- function(what, expr) {
  tryCatch(expr, error = function(e) stop(what, ": ", conditionMessage(e), call. = FALSE))
}

# Internal symbol building for the package's own operators (arithmetic): inputs by name.
mx.internal.symbol.op <- function(op, inputs, attrs) {
  keys <- names(attrs)
  values <- vapply(keys, function(k) mx.internal.format.value(attrs[[k]], k), "", USE.NAMES = FALSE)
  .mx_symbol_create(op, as.character(keys), values, inputs, mx.internal.auto.name(op))
}

#' Run an operator on MXNDArrays by name
#'
#' What every \code{mx.nd.<op>} function calls: operator \code{op} (MXNet's name) on the input
#' arrays with attributes given as \code{name = value}.
#' @param op The operator's name.
#' @param inputs A list of MXNDArrays.
#' @param ... Attributes.
#' @param out NULL, or the MXNDArray(s) to write the results into.
#' @return The output array, or a list of them when the operator has several.
#' @examples
#' x <- mx.nd.array(c(-1, 2))
#' as.array(mx.nd.invoke("relu", list(x)))
#' @export
mx.nd.invoke <- function(op, inputs, ..., out = NULL) {
  attrs <- list(...)
  keys <- gsub(".", "_", names(attrs), fixed = TRUE)
  values <- vapply(seq_along(attrs), function(i) mx.internal.format.value(attrs[[i]], keys[i]), "")
  for (x in inputs) mx.internal.check.nd(x, paste0("mx.nd.invoke('", op, "') input"))
  if (is.mx.ndarray(out)) out <- list(out)
  result <- .mx_nd_invoke(op, unname(inputs), as.character(keys), values, out)
  if (length(result) == 1) result[[1]] else result
}
