# The worked examples of the seed's executor functions, as MXNet R's documentation writes them, with
# the numbers of the Python suite (bindings/mxnet/tests/python/test_seed_executor.py).

bind.two.a.plus.b <- function() {
  a <- mx.symbol.Variable("a")
  b <- mx.symbol.Variable("b")
  c <- 2 * a + b
  exec <- mx.simple.bind(c, ctx = mx.cpu(), a = 2, b = 2, grad.req = "write")
  mx.exec.update.arg.arrays(exec, list(a = mx.nd.array(c(1, 2)), b = mx.nd.array(c(2, 3))), match.name = TRUE)
  exec
}

bind.fc.softmax <- function() {
  net <- mx.symbol.Variable("data")
  net <- mx.symbol.FullyConnected(net, name = "fc", num_hidden = 6)
  net <- mx.symbol.Activation(net, name = "relu", act_type = "relu")
  net <- mx.symbol.SoftmaxOutput(net, name = "softmax")
  exec <- mx.simple.bind(net, ctx = mx.cpu(), data = c(4, 1), grad.req = "write")
  mx.exec.update.arg.arrays(exec, list(data = mx.nd.ones(c(4, 1)), fc_weight = mx.nd.ones(c(4, 6)),
                                       fc_bias = mx.nd.array(c(1, 4, 4, 4, 5, 6)), softmax_label = mx.nd.ones(1)),
                            match.name = TRUE)
  exec
}

fc.probabilities <- c(0.00378404, 0.07600445, 0.07600445, 0.07600445, 0.20660152, 0.5616011)

test_that("2a + b: bind, forward, backward with a head gradient", {
  exec <- bind.two.a.plus.b()
  mx.exec.forward(exec, is.train = TRUE)
  out <- exec$outputs[[1]]
  expect_identical(as.array(out), array(c(4, 7), 2))
  mx.exec.backward(exec, out)
  expect_identical(as.array(exec$ref.grad.arrays$a), array(c(8, 14), 2))
  expect_identical(as.array(exec$ref.grad.arrays$b), array(c(4, 7), 2))
})

test_that("a small FC network: forward and backward numbers", {
  exec <- bind.fc.softmax()
  mx.exec.forward(exec, is.train = TRUE)
  expect_equal(as.array(exec$ref.outputs$softmax_output), array(fc.probabilities, c(6, 1)), tolerance = 1e-6)
  mx.exec.backward(exec)
  expected <- fc.probabilities - c(0, 1, 0, 0, 0, 0)
  # fc_weight has MXNet shape (6, 4): R dim c(4, 6), one column per hidden unit
  expect_equal(as.array(exec$ref.grad.arrays$fc_weight), matrix(rep(expected, each = 4), 4, 6), tolerance = 1e-6)
  expect_equal(as.array(exec$ref.grad.arrays$fc_bias), array(expected, 6), tolerance = 1e-6)
  expect_null(exec$ref.grad.arrays$data)
})

test_that("the results are MXNet's Python's on the same library, bit for bit", {
  python <- Sys.getenv("WEFT_MXNET_PYTHON")
  if (!nzchar(python) || !file.exists(python)) skip_unless_required("WEFT_MXNET_PYTHON does not name a Python with mxnet==1.9.1")
  script <- test_path("python", "seed_examples.py")
  out <- system2(python, script, stdout = TRUE, stderr = TRUE, env = "PYTHONDONTWRITEBYTECODE=1", timeout = 300)
  expect_null(attr(out, "status"))
  py <- list()
  for (line in out[grepl("^[a-z_]+:", out)]) {
    parts <- strsplit(line, "[: ]+")[[1]]
    py[[parts[1]]] <- parts[-1]
  }
  e1 <- bind.two.a.plus.b()
  mx.exec.forward(e1, is.train = TRUE)
  mx.exec.backward(e1, e1$ref.outputs[[1]])
  e2 <- bind.fc.softmax()
  mx.exec.forward(e2, is.train = TRUE)
  mx.exec.backward(e2)
  # MXNet's (row-major) order of an R array is as.vector of the array itself (dims reversed).
  r <- list(add_out = as.array(e1$ref.outputs[[1]]), add_grad_a = as.array(e1$ref.grad.arrays$a),
            add_grad_b = as.array(e1$ref.grad.arrays$b), fc_out = as.array(e2$ref.outputs[[1]]),
            fc_grad_weight = as.array(e2$ref.grad.arrays$fc_weight), fc_grad_bias = as.array(e2$ref.grad.arrays$fc_bias))
  for (k in names(r)) expect_identical(float32.bits(r[[k]]), py[[k]], label = k)
})

test_that("the mx.exec.* functions mutate the executor, seen through every reference", {
  exec <- bind.two.a.plus.b()
  same <- exec
  mx.exec.update.arg.arrays(exec, list(a = mx.nd.array(c(10, 20))), match.name = TRUE)
  mx.exec.forward(exec)
  expect_identical(as.array(same$ref.outputs[[1]]), array(c(22, 43), 2))
  # $outputs and $arg.arrays are copies; $ref.* are the executor's own
  copy <- same$arg.arrays$a
  mx.exec.update.arg.arrays(exec, list(mx.nd.array(c(0, 0)), mx.nd.array(c(1, 1))))
  expect_identical(as.array(copy), array(c(10, 20), 2))
  mx.exec.forward(exec)
  expect_identical(as.array(same$ref.outputs[[1]]), array(c(1, 1), 2))
  mx.exec.update.grad.arrays(exec, list(a = mx.nd.array(c(5, 5))), match.name = TRUE)
  expect_identical(as.array(exec$ref.grad.arrays$a), array(c(5, 5), 2))
  mx.exec.update.arg.arrays(exec, list(a = NULL, b = mx.nd.array(c(3, 3))), match.name = TRUE, skip.null = TRUE)
  mx.exec.forward(exec)
  expect_identical(as.array(exec$ref.outputs[[1]]), array(c(3, 3), 2))
  expect_error(exec$ref.outputs <- list(), "change through mx.exec.update")
})

test_that("auxiliary states: BatchNorm's moving statistics", {
  net <- mx.symbol.BatchNorm(mx.symbol.Variable("data"), name = "bn", fix_gamma = FALSE, momentum = 0.5)
  exec <- mx.simple.bind(net, mx.cpu(), data = c(2, 4), grad.req = "write")
  expect_equal(names(exec$ref.aux.arrays), c("bn_moving_mean", "bn_moving_var"))
  mx.exec.update.aux.arrays(exec, list(bn_moving_var = mx.nd.ones(2)), match.name = TRUE)
  mx.exec.update.arg.arrays(exec, list(data = mx.nd.array(matrix(c(1, 10, 3, 20, 5, 30, 7, 40), 2)),
                                       bn_gamma = mx.nd.ones(2)), match.name = TRUE)
  mx.exec.forward(exec, is.train = TRUE)
  # moving_mean = 0.5 * 0 + 0.5 * batch mean
  expect_equal(as.array(exec$ref.aux.arrays$bn_moving_mean), array(0.5 * c(4, 25), 2), tolerance = 1e-6)
})

test_that("mx.symbol.bind copies the arrays it is given onto the device", {
  a <- mx.symbol.Variable("a")
  src <- mx.nd.array(c(1, 2))
  exec <- mx.symbol.bind(a * 3, mx.cpu(), list(a = src), list(), "null")
  mx.exec.update.arg.arrays(exec, list(a = mx.nd.array(c(5, 6))), match.name = TRUE)
  expect_identical(as.array(src), array(c(1, 2), 2))
  mx.exec.forward(exec, is.train = FALSE)
  expect_identical(as.array(exec$ref.outputs[[1]]), array(c(15, 18), 2))
})

test_that("bad use of executors gives R errors naming the problem, never a crash", {
  exec <- bind.fc.softmax()
  expect_error(mx.exec.update.arg.arrays(exec, list(data = mx.nd.ones(c(5, 1))), match.name = TRUE),
               "'data' has dim c\\(5, 1\\) but the executor's array has dim c\\(4, 1\\)")
  expect_error(mx.exec.update.arg.arrays(exec, list(dat = mx.nd.ones(c(4, 1))), match.name = TRUE),
               "no array 'dat'")
  expect_error(mx.exec.update.arg.arrays(exec, list(mx.nd.ones(c(4, 1)))), "1 arrays given for 4")
  expect_error(mx.exec.update.arg.arrays(exec, list(data = NULL), match.name = TRUE), "skip.null")
  expect_error(mx.exec.update.grad.arrays(exec, list(data = mx.nd.ones(c(4, 1))), match.name = TRUE),
               "grad.req \"null\"")
  expect_error(mx.simple.bind(mx.symbol.FullyConnected(mx.symbol.Variable("x"), num_hidden = 2), mx.cpu()), "do not determine")
  expect_error(mx.simple.bind(mx.symbol.Variable("x") * 2, mx.cpu(), x = 2, grad.req = "sometimes"), "grad.req")
  inference <- mx.simple.bind(mx.symbol.Variable("x") * 2, mx.cpu(), x = 2)
  mx.exec.forward(inference)
  expect_error(mx.exec.backward(inference), "no gradient arrays")
  expect_error(mx.exec.forward("exec"), "must be an MXExecutor")
  # a freed executor, and one restored from a saved session
  restored <- unserialize(serialize(exec, NULL))
  expect_error(mx.exec.forward(restored), "handle is gone")
  mxnet:::mx.internal.free(exec)
  expect_error(mx.exec.forward(exec), "handle is gone")
  expect_error(mx.exec.backward(exec), "handle is gone")
  expect_error(mx.exec.update.arg.arrays(exec, list(data = mx.nd.ones(c(4, 1))), match.name = TRUE), "handle is gone")
  gc()
  succeed()
})
