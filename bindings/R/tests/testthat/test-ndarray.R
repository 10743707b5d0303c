test_that("mx.nd.array keeps R's dim and values, and as.array gives them back", {
  m <- matrix(c(1.5, -2, 3, 4, 5, 6), 2, 3)
  x <- mx.nd.array(m)
  expect_s3_class(x, "MXNDArray")
  expect_equal(dim(x), c(2L, 3L))
  expect_equal(length(x), 6L)
  expect_identical(as.array(x), array(m, c(2, 3)))
  expect_identical(as.matrix(x), m)
  a <- array(seq_len(24) / 7, c(2, 3, 4))
  expect_equal(as.array(mx.nd.array(a)), a, tolerance = 1e-7)
  expect_equal(dim(mx.nd.array(1:5)), 5L)
  expect_equal(ctx(x), mx.cpu())
})

test_that("R's column-major array is MXNet's row-major array of the reversed shape", {
  # An MXNet operator sees shape (3, 2): sum over MXNet's axis 1 is the sum over R's first dim.
  x <- mx.nd.array(matrix(1:6, 2, 3))
  expect_equal(as.array(mx.nd.sum(x, axis = 1)), array(colSums(matrix(1:6, 2, 3)), 3))
  expect_equal(dim(mx.nd.transpose(x)), c(3L, 2L))
  expect_equal(as.array(mx.nd.transpose(x)), t(matrix(1:6, 2, 3)))
})

test_that("arithmetic on MXNDArrays follows R's", {
  v <- c(1, 2, 3)
  x <- mx.nd.array(v)
  y <- mx.nd.array(c(4, 5, 6))
  expect_equal(as.array(1 - x + (2 * x) / (x + 0.5)), array(1 - v + (2 * v) / (v + 0.5), 3), tolerance = 1e-6)
  expect_equal(as.array(x * y - y / x), array(v * 4:6 - 4:6 / v, 3), tolerance = 1e-6)
  expect_equal(as.array(10 / x), array(10 / v, 3), tolerance = 1e-6)
  expect_equal(as.array(-x), array(-v, 3))
  expect_equal(as.array(x^2), array(v^2, 3))
  expect_equal(as.array(sqrt(y)), array(sqrt(4:6), 3), tolerance = 1e-6)
  expect_equal(as.array(exp(x)), array(exp(v), 3), tolerance = 1e-6)
  # dims that broadcast (MXNet's broadcast_* on the reversed shapes)
  m <- mx.nd.array(matrix(1:6, 2, 3))
  row <- mx.nd.array(matrix(c(10, 20), 2, 1))
  expect_equal(as.array(m + row), matrix(1:6, 2, 3) + c(10, 20))
})

test_that("zeros, ones, copies, slices", {
  expect_identical(as.array(mx.nd.zeros(c(2, 2))), array(0, c(2, 2)))
  expect_identical(as.array(mx.nd.ones(3)), array(1, 3))
  x <- mx.nd.array(matrix(1:6, 2, 3))
  y <- mx.nd.copyto(x, mx.cpu())
  expect_identical(as.array(y), as.array(x))
  expect_equal(as.array(mxnet:::mx.internal.nd.slice(x, 1, 3)), matrix(1:6, 2, 3)[, 2:3])
})

test_that("mx.nd.save and mx.nd.load keep names, dims and values", {
  f <- tempfile(fileext = ".params")
  a <- mx.nd.array(array(1:24, c(2, 3, 4)))
  b <- mx.nd.array(c(0.5, 0.25))
  mx.nd.save(list(a = a, b = b), f)
  back <- mx.nd.load(f)
  expect_equal(names(back), c("a", "b"))
  expect_identical(as.array(back$a), as.array(a))
  expect_identical(as.array(back$b), as.array(b))
  mx.nd.save(b, f)
  back <- mx.nd.load(f)
  expect_null(names(back))
  expect_identical(as.array(back[[1]]), as.array(b))
})

test_that("bad arrays and operands give R errors that name them", {
  expect_error(mx.nd.array("a"), "numeric array")
  expect_error(mx.nd.zeros(c(2, -1)), "non-negative whole numbers")
  x <- mx.nd.array(1:3)
  expect_error(x + c(1, 2), "single number")
  expect_error(x + mx.nd.array(1:4), "broadcast")
  expect_error(mx.nd.load(file.path(tempdir(), "no-such-file")), "no-such-file")
  expect_error(ctx(1:3), "must be an MXNDArray")
})

test_that("arrays are freed by R's garbage collector, once", {
  # 64 arrays of 32 MB: without the finalizers (MXNDArrayFree) the process would grow by 2 GB.
  gc()
  before <- rss.mb()
  for (i in 1:64) {
    x <- mx.nd.zeros(c(1024, 1024, 8))
    rm(x)
    gc()
  }
  mxnet:::.mx_wait_all()
  expect_lt(rss.mb() - before, 512)
  # A handle freed early is not freed again by the collector, and its use is an R error.
  x <- mx.nd.ones(4)
  y <- x
  mxnet:::mx.internal.free(x)
  expect_error(as.array(y), "handle is gone")
  rm(x, y)
  gc()
  succeed()
})

test_that("arrays saved with an R session come back as an error, not a crash", {
  x <- unserialize(serialize(mx.nd.ones(2), NULL))
  expect_error(as.array(x), "restored from a saved R session")
  expect_error(x + 1, "restored from a saved R session")
})
