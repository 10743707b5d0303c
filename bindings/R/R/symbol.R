# MXSymbol: symbolic graphs. An MXSymbol is an external pointer with class "MXSymbol"; the
# fields of MXNet R's symbol object ($arguments, $outputs, $infer.shape(), ...) are there too.

#' Create a symbolic variable
#'
#' @param name The name of the variable.
#' @return An \code{MXSymbol}.
#' @examples
#' a <- mx.symbol.Variable("a")
#' b <- mx.symbol.Variable("b")
#' arguments(2 * a + b)
#' @export
mx.symbol.Variable <- function(name) {
  if (!is.character(name) || length(name) != 1 || !nzchar(name)) {
    stop("mx.symbol.Variable: name must be a non-empty string", call. = FALSE)
  }
  .mx_symbol_variable(name)
}

#' Is it an MXSymbol?
#' @param x An object.
#' @return TRUE or FALSE.
#' @examples
#' is.mx.symbol(mx.symbol.Variable("x"))
#' @export
is.mx.symbol <- function(x) inherits(x, "MXSymbol")

mx.internal.check.symbol <- function(x, what) {
  if (!is.mx.symbol(x)) stop(what, " must be an MXSymbol, not ", class(x)[1], call. = FALSE)
}

#' Group symbols into one with several outputs
#' @param ... MXSymbols, or one list of them.
#' @return An \code{MXSymbol} whose outputs are those of the symbols, in order.
#' @examples
#' a <- mx.symbol.Variable("a")
#' outputs(mx.symbol.Group(a, 2 * a))
#' @export
mx.symbol.Group <- function(...) {
  symbols <- list(...)
  if (length(symbols) == 1 && is.list(symbols[[1]]) && !is.mx.symbol(symbols[[1]])) symbols <- symbols[[1]]
  for (s in symbols) mx.internal.check.symbol(s, "mx.symbol.Group: each element")
  .mx_symbol_group(unname(symbols))
}

#' Save and load symbols
#'
#' MXNet's symbol JSON (what \code{mx.sym.save} in Python, \code{mx.model.save} and weft write).
#' @param symbol An \code{MXSymbol}.
#' @param filename The file.
#' @param json.str A JSON string.
#' @return \code{mx.symbol.load} and \code{mx.symbol.load.json}: the symbol.
#' @examples
#' f <- tempfile()
#' mx.symbol.save(mx.symbol.Variable("data"), f)
#' arguments(mx.symbol.load(f))
#' @export
mx.symbol.save <- function(symbol, filename) {
  mx.internal.check.symbol(symbol, "mx.symbol.save(symbol)")
  .mx_symbol_save(symbol, path.expand(filename))
  invisible(NULL)
}

#' @rdname mx.symbol.save
#' @export
mx.symbol.load <- function(filename) .mx_symbol_load(path.expand(filename))

#' @rdname mx.symbol.save
#' @export
mx.symbol.load.json <- function(json.str) .mx_symbol_load_json(json.str)

#' Infer the shapes of a symbol's arguments, outputs and auxiliary states
#'
#' @param symbol An \code{MXSymbol}.
#' @param ... The R dims of some arguments, as \code{name = dim}.
#' @return \code{list(arg.shapes, out.shapes, aux.shapes)} of named lists of R dims, or NULL
#'   when the shapes given do not determine them all.
#' @examples
#' net <- mx.symbol.FullyConnected(mx.symbol.Variable("data"), num.hidden = 10, name = "fc")
#' mx.symbol.infer.shape(net, data = c(784, 100))$arg.shapes
#' @export
mx.symbol.infer.shape <- function(symbol, ...) {
  mx.internal.check.symbol(symbol, "mx.symbol.infer.shape(symbol)")
  mx.internal.infer.shape(symbol, list(...))
}

mx.internal.infer.shape <- function(symbol, shapes) {
  if (length(shapes) > 0 && (is.null(names(shapes)) || !all(nzchar(names(shapes))))) {
    stop("mx.symbol.infer.shape: give the shapes as name = dim", call. = FALSE)
  }
  known <- arguments(symbol)
  unknown <- setdiff(names(shapes), known)
  if (length(unknown) > 0) {
    stop("mx.symbol.infer.shape: ", paste0("'", unknown, "'", collapse = ", "), " is not an argument of the symbol ",
         "(its arguments: ", paste(known, collapse = ", "), ")", call. = FALSE)
  }
  .mx_symbol_infer_shape(symbol, lapply(shapes, function(s) mx.internal.check.dims(s, "mx.symbol.infer.shape")))
}

#' The arguments and outputs of a symbol
#' @param x An \code{MXSymbol}.
#' @return A character vector.
#' @examples
#' net <- mx.symbol.FullyConnected(mx.symbol.Variable("data"), num.hidden = 10, name = "fc")
#' arguments(net)
#' outputs(net)
#' @export
arguments <- function(x) {
  mx.internal.check.symbol(x, "arguments(x)")
  .mx_symbol_arguments(x)
}

#' @rdname arguments
#' @export
outputs <- function(x) {
  mx.internal.check.symbol(x, "outputs(x)")
  .mx_symbol_outputs(x)
}

#' Apply a symbol to inputs
#'
#' Composes a copy of \code{x} on the given symbols, by argument name (the names
#' \code{arguments(x)} lists) or by position.
#' @param x An \code{MXSymbol}.
#' @param ... The input symbols; \code{name =} names the result.
#' @return The composed \code{MXSymbol}.
#' @examples
#' fc <- mx.symbol.FullyConnected(num.hidden = 4, name = "fc")
#' net <- mx.apply(fc, fc_data = mx.symbol.Variable("x"))
#' arguments(net)
#' @export
mx.apply <- function(x, ...) {
  mx.internal.check.symbol(x, "mx.apply(x)")
  mx.internal.apply(x, list(...))
}

mx.internal.apply <- function(x, args) {
  name <- ""
  if (!is.null(args$name)) {
    name <- args$name
    args$name <- NULL
  }
  for (a in args) mx.internal.check.symbol(a, "mx.apply: each input")
  nms <- names(args)
  if (!is.null(nms) && !(all(nzchar(nms)) || !any(nzchar(nms)))) {
    stop("mx.apply: give the inputs all by name or all by position", call. = FALSE)
  }
  if (!is.null(nms) && !any(nzchar(nms))) args <- unname(args)
  out <- .mx_symbol_copy(x)
  .mx_symbol_compose(out, args, name)
  out
}

#' The fields of an MXSymbol
#'
#' MXNet R's symbol object: \code{$arguments}, \code{$outputs}, \code{$auxiliary.states},
#' \code{$infer.shape(list)}, \code{$get.internals()}, \code{$get.output(i)} (from 1),
#' \code{$as.json()}, \code{$save(filename)}, \code{$debug.str()}, \code{$apply(list)};
#' \code{x[[i]]} is output \code{i} (from 1, or by output name).
#' @param x An \code{MXSymbol}.
#' @param name The field.
#' @param i An output index (from 1) or name.
#' @param ... Not used.
#' @return The field.
#' @examples
#' net <- mx.symbol.FullyConnected(mx.symbol.Variable("data"), num.hidden = 10, name = "fc")
#' net$arguments
#' internals <- net$get.internals()
#' internals$outputs
#' internals[["fc_output"]]$outputs
#' @export
`$.MXSymbol` <- function(x, name) {
  switch(name,
    arguments = .mx_symbol_arguments(x),
    outputs = .mx_symbol_outputs(x),
    auxiliary.states = .mx_symbol_auxiliary_states(x),
    infer.shape = function(shapes) mx.internal.infer.shape(x, shapes),
    get.internals = function() .mx_symbol_internals(x),
    get.output = function(index) x[[index]],
    as.json = function() .mx_symbol_json(x),
    save = function(filename) mx.symbol.save(x, filename),
    debug.str = function() .mx_symbol_debug_str(x),
    apply = function(kwargs) mx.internal.apply(x, kwargs),
    stop("MXSymbol has no field '", name, "'", call. = FALSE))
}

#' @rdname cash-.MXSymbol
#' @export
`[[.MXSymbol` <- function(x, i, ...) {
  outs <- .mx_symbol_outputs(x)
  if (is.character(i)) {
    index <- match(i, outs)
    if (is.na(index)) {
      stop("the symbol has no output '", i, "' (its outputs: ", paste(outs, collapse = ", "), ")", call. = FALSE)
    }
  } else {
    index <- i
    if (!is.numeric(index) || length(index) != 1 || index < 1 || index > length(outs) || index != round(index)) {
      stop("output index ", format(i), " is out of range: the symbol has ", length(outs), " outputs, numbered from 1",
           call. = FALSE)
    }
  }
  .mx_symbol_output(x, as.integer(index) - 1L)
}

#' @export
print.MXSymbol <- function(x, ...) {
  cat("MXSymbol with outputs ", paste(.mx_symbol_outputs(x), collapse = ", "), "\n", sep = "")
  invisible(x)
}

# ---- arithmetic ---------------------------------------------------------------------------------

.mx.symbol.ops <- list(
  "+" = c("elemwise_add", "_plus_scalar", "_plus_scalar"),
  "-" = c("elemwise_sub", "_minus_scalar", "_rminus_scalar"),
  "*" = c("elemwise_mul", "_mul_scalar", "_mul_scalar"),
  "/" = c("elemwise_div", "_div_scalar", "_rdiv_scalar"),
  "^" = c("_power", "_power_scalar", "_rpower_scalar"))

#' Arithmetic on MXSymbols
#'
#' \code{+ - * / ^} between two symbols or a symbol and a number build MXNet's elementwise
#' operators (\code{elemwise_add}, \code{_plus_scalar}, \code{_rminus_scalar}, ...).
#' @param e1,e2 MXSymbols or numbers.
#' @return An \code{MXSymbol}.
#' @examples
#' a <- mx.symbol.Variable("a")
#' b <- mx.symbol.Variable("b")
#' c <- 2 * a + b
#' arguments(c)
#' @export
Ops.MXSymbol <- function(e1, e2) {
  op <- .Generic
  if (missing(e2)) {
    if (op == "+") return(e1)
    if (op == "-") return(mx.internal.symbol.op("_mul_scalar", list(data = e1), list(scalar = -1)))
    stop("MXSymbol: unary ", op, " is not supported", call. = FALSE)
  }
  names <- .mx.symbol.ops[[op]]
  if (is.null(names)) stop("MXSymbol: ", op, " is not supported", call. = FALSE)
  if (is.mx.symbol(e1) && is.mx.symbol(e2)) {
    return(mx.internal.symbol.op(names[1], list(lhs = e1, rhs = e2), list()))
  }
  if (is.mx.symbol(e1)) {
    return(mx.internal.symbol.op(names[2], list(data = e1), list(scalar = mx.internal.symbol.scalar(e2, op))))
  }
  mx.internal.symbol.op(names[3], list(data = e2), list(scalar = mx.internal.symbol.scalar(e1, op)))
}

mx.internal.symbol.scalar <- function(x, op) {
  if (!is.numeric(x) || length(x) != 1 || is.na(x)) {
    stop("MXSymbol ", op, ": the other operand must be an MXSymbol or a single number", call. = FALSE)
  }
  x
}
