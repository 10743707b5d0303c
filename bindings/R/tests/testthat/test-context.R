test_that("contexts: mx.cpu, mx.gpu, the default", {
  expect_equal(format(mx.cpu()), "cpu(0)")
  expect_equal(format(mx.gpu(1)), "gpu(1)")
  expect_true(is.mx.context(mx.cpu(2)))
  expect_equal(mx.gpu(1)$device_typeid, 2L)
  expect_equal(mx.ctx.default(), mx.cpu())
  old <- mx.ctx.default(mx.cpu(1))
  on.exit(mx.ctx.default(mx.cpu(0)))
  expect_equal(old, mx.cpu(1))
  expect_equal(ctx(mx.nd.ones(2)), mx.cpu(1))
  expect_equal(ctx(mx.nd.array(1:3, mx.cpu(2))), mx.cpu(2))
  expect_error(mx.ctx.default("cpu"), "mx.cpu\\(\\) or mx.gpu")
  expect_error(mx.cpu(-1), "non-negative")
})

test_that("mx.gpu is MXNet's gpu as the C API maps it: an R error when there is no GPU", {
  if (mx.gpu.count() > 0) {
    x <- mx.nd.array(1:3, mx.gpu())
    expect_equal(ctx(x), mx.gpu())
    expect_identical(as.array(x * 2), array(c(2, 4, 6), 3))
  } else {
    expect_error(mx.nd.ones(2, mx.gpu()), "no GPU-class device")
  }
})
