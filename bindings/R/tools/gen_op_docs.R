# Writes the help pages of the generated operator functions (mx.symbol.<op>, mx.nd.<op>) for the
# operators of the library the installed package loads, into the man/ directory given:
#   Rscript tools/gen_op_docs.R <package>/man [library directory of the installed package]
# One page per operator weft implements (its description, both functions' usage, every argument
# with MXNet's type text); one page lists the MXNet operator names weft does not implement (their
# functions exist and raise an error saying so). tools/check.sh runs it before R CMD build, so the
# pages always match the library checked.
args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 1) stop("usage: Rscript tools/gen_op_docs.R <man directory> [library directory]")
man <- args[1]
suppressPackageStartupMessages(library(mxnet, lib.loc = if (length(args) > 1) args[2] else NULL))
ns <- asNamespace("mxnet")
specs <- get(".MXNetEnv", envir = ns)$ops

escape <- function(x) {
  x <- gsub("\\", "\\\\", x, fixed = TRUE)
  x <- gsub("%", "\\%", x, fixed = TRUE)
  x <- gsub("{", "\\{", x, fixed = TRUE)
  gsub("}", "\\}", x, fixed = TRUE)
}

usage <- function(fname) {
  f <- get(fname, envir = ns)
  parts <- vapply(names(formals(f)), function(n) {
    shown <- if (make.names(n) == n || n == "...") n else paste0("`", n, "`")
    if (n == "...") "..." else paste(shown, "= NULL")
  }, "")
  # Wrapped at 80 characters (R CMD check's limit for usage lines is 90).
  lines <- character()
  line <- paste0(fname, "(")
  for (i in seq_along(parts)) {
    item <- paste0(parts[i], if (i < length(parts)) "," else ")")
    if (nchar(line) + nchar(item) + 1 > 80 && !endsWith(line, "(")) {
      lines <- c(lines, line)
      line <- paste0("    ", item)
    } else {
      line <- paste0(line, if (endsWith(line, "(")) "" else " ", item)
    }
  }
  paste(c(lines, line), collapse = "\n")
}

# The \arguments entries of both functions (inputs and attributes from the op's information).
arguments <- function(spec, formal.names) {
  info <- spec$info
  r.names <- gsub("_", ".", info$arg.names, fixed = TRUE)
  items <- character()
  for (n in formal.names) {
    i <- match(n, r.names)
    text <- if (n == "...") {
      if (spec$variadic) "The input symbols (mx.symbol) or arrays (mx.nd), or attributes with the underscore spelling."
      else "Attributes with the underscore spelling (\\code{num_hidden = } for \\code{num.hidden = })."
    } else if (n == "name") {
      "mx.symbol only: the name of the new symbol (default: the operator's name in lower case and a counter)."
    } else if (n == "attr") {
      "mx.symbol only: a named list of symbol attributes (such as \\code{ctx_group})."
    } else if (n == "out") {
      "mx.nd only: NULL, or the MXNDArray(s) to write the result into."
    } else if (!is.na(i)) {
      paste0(escape(info$arg.types[i]), ". ", escape(info$arg.descriptions[i]))
    } else {
      "An argument of the operator."
    }
    items <- c(items, paste0("\\item{", escape(n), "}{", text, "}"))
  }
  items
}

# One page for an operator and its aliases (names sharing its information).
page <- function(ops, spec) {
  fs <- unique(unlist(lapply(ops, function(op) {
    c(names(formals(get(paste0("mx.symbol.", op), envir = ns))), names(formals(get(paste0("mx.nd.", op), envir = ns))))
  })))
  desc <- escape(spec$description)
  if (!nzchar(trimws(desc))) desc <- paste0("MXNet's operator ", escape(ops[1]), ".")
  usages <- unlist(lapply(ops, function(op) c(usage(paste0("mx.symbol.", op)), "", usage(paste0("mx.nd.", op)), "")))
  c(paste0("\\name{mx.symbol.", ops[1], "}"),
    paste0("\\alias{mx.symbol.", ops, "}"),
    paste0("\\alias{mx.nd.", ops, "}"),
    paste0("\\title{The ", escape(paste(ops, collapse = " / ")), " operator}"),
    "\\description{", desc, "}",
    "\\usage{", head(usages, -1), "}",
    "\\arguments{", arguments(spec, fs), "}",
    "\\value{\\code{mx.symbol.*}: an \\code{MXSymbol}; \\code{mx.nd.*}: an \\code{MXNDArray}, or a list of them for several outputs.}",
    "\\details{Generated from the operator registry when the package loads; inputs can be given by position, ",
    "attributes by name only, with dots or underscores. Attribute values: numbers, numeric vectors (tuples, in ",
    "MXNet's order), strings, TRUE/FALSE.}")
}

# The page of a data iterator the library lists.
iter.page <- function(info) {
  fname <- paste0("mx.io.", info$name)
  params <- unique(info$arg.names)
  items <- vapply(params, function(p) {
    i <- match(p, info$arg.names)
    paste0("\\item{", escape(gsub("_", ".", p, fixed = TRUE)), "}{", escape(info$arg.types[i]), ". ",
           escape(info$arg.descriptions[i]), "}")
  }, "")
  c(paste0("\\name{", fname, "}"), paste0("\\alias{", fname, "}"),
    paste0("\\title{The ", info$name, " data iterator}"),
    "\\description{", escape(info$description), "}",
    "\\usage{", usage(fname), "}",
    "\\arguments{", items, "\\item{...}{Parameters with the underscore spelling (\\code{batch_size}).}", "}",
    "\\value{An \\code{MXDataIter} with \\code{$iter.next()}, \\code{$reset()}, \\code{$value()} (\\code{list(data, label)}",
    "of MXNDArrays) and \\code{$num.pad()}.}")
}

unimplemented <- character()
written <- 0
groups <- list()
for (op in sort(ls(specs))) {
  if (startsWith(op, "_")) next  # internal functions are not exported
  spec <- get(op, envir = specs)
  if (grepl("is not implemented by weft", spec$description, fixed = TRUE)) {
    unimplemented <- c(unimplemented, op)
    next
  }
  key <- paste(c(spec$description, spec$info$arg.names), collapse = "\r")
  groups[[key]] <- c(groups[[key]], op)
}
files <- character()
for (ops in groups) {
  # The page is named after the operator, not an alias (the description lists the aliases).
  spec <- get(ops[1], envir = specs)
  aliases <- strsplit(sub(".*Also known as: ", "", spec$description), ", ", fixed = TRUE)[[1]]
  ops <- c(setdiff(ops, aliases), intersect(ops, aliases))
  file <- paste0("mx.symbol.", ops[1])
  # file names must differ in more than case (R CMD check: portable file names)
  while (tolower(file) %in% tolower(files)) file <- paste0(file, "-op")
  files <- c(files, file)
  writeLines(page(ops, spec), file.path(man, paste0(file, ".Rd")))
  written <- written + 1
}
for (info in mxnet:::.mx_io_list()) writeLines(iter.page(info), file.path(man, paste0("mx.io.", info$name, ".Rd")))
writeLines(c("\\name{mx.unimplemented.operators}",
             "\\alias{mx.unimplemented.operators}",
             paste0("\\alias{mx.symbol.", unimplemented, "}"),
             paste0("\\alias{mx.nd.", unimplemented, "}"),
             "\\title{MXNet operators weft does not implement}",
             "\\description{MXNet 1.9.1 has these operators and weft does not. Their functions exist, so that MXNet R ",
             "programs find them, and calling one raises an R error saying that weft does not implement it:}",
             "\\details{", paste0("\\code{", escape(unimplemented), "}", collapse = ", "), "}",
             "\\keyword{internal}"),
           file.path(man, "mx.unimplemented.operators.Rd"))
cat("gen_op_docs: ", written, " operator pages and ", length(unimplemented), " unimplemented names in ", man, "\n",
    sep = "")
