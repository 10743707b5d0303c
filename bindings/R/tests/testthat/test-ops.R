test_that("one mx.symbol and one mx.nd function per operator, with the op's documented arguments", {
  info <- mxnet:::.mx_op_list()
  ops <- vapply(info, function(i) i$name, "")
  public <- ops[!startsWith(ops, "_")]
  exports <- getNamespaceExports("mxnet")
  expect_true(all(paste0("mx.symbol.", public) %in% exports))
  expect_true(all(paste0("mx.nd.", public) %in% exports))
  conv <- info[[match("Convolution", ops)]]
  f <- names(formals(mx.symbol.Convolution))
  expect_true(all(gsub("_", ".", conv$arg.names) %in% f))
  expect_true(exists("mx.symbol.internal.plus_scalar", envir = asNamespace("mxnet")))
  expect_false(any(startsWith(exports, "mx.symbol._backward")))
})

test_that("imperative operator calls: mx.nd.<op> and variadic operators", {
  x <- mx.nd.array(matrix(c(-1, 2, -3, 4), 2))
  expect_identical(as.array(mx.nd.relu(x)), matrix(c(0, 2, 0, 4), 2))
  w <- mx.nd.array(matrix(1, 4, 3))
  b <- mx.nd.zeros(3)
  y <- mx.nd.FullyConnected(mx.nd.array(matrix(1:8, 4, 2)), w, b, num_hidden = 3)
  expect_identical(as.array(y), matrix(rep(c(10, 26), each = 3), 3, 2))
  s <- mx.nd.add_n(mx.nd.ones(2), mx.nd.ones(2), mx.nd.ones(2))
  expect_identical(as.array(s), array(3, 2))
  cat <- mx.symbol.Concat(mx.symbol.Variable("p"), mx.symbol.Variable("q"), dim = 1, name = "cat")
  expect_equal(arguments(cat), c("p", "q"))
  out <- mx.nd.zeros(2)
  mx.nd.invoke("_plus_scalar", list(mx.nd.ones(2)), scalar = 4, out = out)
  expect_identical(as.array(out), array(5, 2))
})

test_that("an operator weft does not implement raises an R error saying so", {
  unimplemented <- Filter(function(i) grepl("is not implemented by weft", i$description), mxnet:::.mx_op_list())
  skip_if(length(unimplemented) == 0, "weft implements every MXNet operator name it lists")
  op <- unimplemented[[1]]$name
  f <- get(paste0("mx.nd.", if (startsWith(op, "_")) paste0("internal.", substring(op, 2)) else op),
           envir = asNamespace("mxnet"))
  expect_error(f(mx.nd.ones(2)), "not implemented by weft")
})
